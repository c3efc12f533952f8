// adopt --apply and --undo (docs/contract.md 7.21): the host files of an adoption rewritten
// so each adopted entry starts `udon-mcp serve` with its manifest and pin, and restored.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "adopt/adoption.h"
#include "base/result.h"

namespace udon::adopt {

struct EntryReview {
  std::string server;  // <host>.<name>
  std::string key;     // the key in the host file
  std::string host;
  std::string manifest_sha256;
  std::vector<std::string> reviewed;    // offered by the gateway
  std::vector<std::string> unreviewed;  // never offered
};

struct ApplyReport {
  std::vector<EntryReview> entries;
  std::vector<std::pair<std::string, std::string>> files;  // host file, its backup
};

// What each adopted manifest in D holds reviewed and not. Errors: manifest.unreadable,
// manifest.invalid, adopt.nothing_adopted.
Result<std::vector<EntryReview>> ReviewState(const std::string& dir, const Adoption& adoption);

// Test seams of --apply and --undo.
struct FileSeams {
  // Runs per host file once its new bytes are in a temporary file beside it (and, for
  // --apply, its backup is recorded), just before the last check that it is unchanged.
  std::function<void(const std::string& path)> before_last_check;
};

// Checks everything before it writes anything: every adopted manifest has a reviewed tool
// (adopt.not_reviewed, details.server), every host file still has the bytes adopt read
// (adopt.file_changed, details.path), no file is applied already (adopt.already_applied).
// Then writes one pin per manifest (its SHA-256), and per host file a backup beside it
// (FILE.udon-mcp-<UTC instant>.bak, mode 0600, the file's owner) and the rewritten file
// (atomically, its mode, owner and group kept; a symlinked file is written where its link
// points, the link stays), recording both in D/adopt.json before the rename. A host file is
// known by device and inode: two paths naming one file get one rewrite carrying both
// paths' edits. Just before each rename the file must still be the one read, with the bytes
// read (adopt.file_changed). Holds the adoption's lock throughout (adopt.busy). `udon_mcp`
// is the binary the entries start. Errors: the above, adopt.entry_shared (one entry adopted
// through two paths of one file), adopt.entry_missing, adopt.file_invalid, io.unreadable,
// io.write_failed.
Result<ApplyReport> Apply(const std::string& dir, const std::string& udon_mcp, const FileSeams& seams = {});

// Restores every applied host file from its backup, byte for byte, after checking that each
// still has the bytes --apply wrote (adopt.file_changed: nothing is restored); a file a
// stopped --apply left unrenamed has nothing to restore. The same last check, owner and
// lock as Apply. Errors: adopt.not_applied (nothing to undo), adopt.file_changed,
// adopt.backup_changed, adopt.busy, io.unreadable, io.write_failed.
Result<std::vector<std::string>> Undo(const std::string& dir, const FileSeams& seams = {});

}  // namespace udon::adopt
