// What --apply wrote into a host entry, recorded so that --check can tell the gateway entry
// from one changed since (docs/contract.md 7.21): a binary named udon-mcp and a first
// argument `serve` say nothing of what the entry starts, with which manifest, pin, policy
// and environment.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "adopt/adoption.h"
#include "json/json.h"
#include "base/result.h"

namespace udon::adopt {

// The SHA-256 of the entry's RFC 8785 canonical form with each `env` value left out (its
// names stay): a host that re-indents or reorders its file changes nothing, any other change
// of a member does. Env values are the upstream server's secrets, which D holds in no form,
// not even as a digest. Errors: json.not_canonicalizable.
Result<std::string> AppliedEntryDigest(const json::Value& entry);

// The value reached from the root through the member names of `path`. Errors:
// adopt.entry_missing.
Result<json::Value> EntryAt(const json::Value& document, const std::vector<std::string>& path);

// Records in `adoption` the digest of each of its entries of host file `file` as `rewritten`
// (the bytes --apply writes there) holds it. Errors: adopt.file_invalid,
// adopt.entry_missing, json.not_canonicalizable.
Status RecordAppliedEntries(Adoption& adoption, const std::string& file, std::string_view rewritten);

// Whether the host entry `current` is the one --apply wrote for `adopted`: nullopt when it
// is; else adopt.entry_changed (details.server).
std::optional<Error> ChangedSinceApply(const Adoption& adoption, const AdoptedEntry& adopted,
                                       const json::Value& current);

}  // namespace udon::adopt
