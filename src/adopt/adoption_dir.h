// The adoption directory D kept to its owner (docs/contract.md 7.21): whoever can write
// D/mcp.json chooses the command a host starts as the user once its entry is adopted, and
// D's files name the secrets' places, so D is 0700 and everything in it 0600.
#pragma once

#include <string>

#include "base/result.h"

namespace udon::adopt {

// D, before adopt reads or writes anything in it: created 0700 when missing and `create`;
// refused when it is not a directory, another user owns it, or its group or others may
// write it; otherwise made 0700 (a D written before kept its 0755).
// Errors: adopt.dir_unsafe (details.path, details.reason: not_directory | other_owner |
// writable_by_others), io.unreadable (missing, and not to be created), io.write_failed.
Status SecureAdoptionDir(const std::string& dir, bool create);

// A directory inside D (D/<host>): created 0700, or made so. Errors: io.write_failed.
Status MakeOwnerOnlyDir(const std::string& dir);

}  // namespace udon::adopt
