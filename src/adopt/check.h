// adopt --check (docs/contract.md 7.21): each adopted entry started from its host file the
// way the host starts it (its command, args and env, the host's whole environment, a
// project file's entry in its project), then asked what it offers, so that what the host
// would show as "Connection closed" or "Disconnected" is said here with its reason.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adopt/adoption.h"
#include "base/result.h"

namespace udon::adopt {

struct Withheld {
  std::string tool;
  std::string why;  // "unreviewed", or the code serve gave for not offering it
};

struct EntryCheck {
  std::string host;
  std::string key;     // in the host file
  std::string server;  // in D
  std::string file;
  bool gated = false;      // the host entry is the one --apply wrote (applied_entry.h)
  bool connected = false;  // initialize and tools/list answered
  std::string protocol_version;    // the revision the gateway was opened at; empty: not opened
  std::optional<Error> error;      // why not (the gateway's start-up refusal code, when it sent one)
  std::vector<std::string> offered;
  std::vector<Withheld> withheld;
  std::vector<std::string> offered_unreviewed;  // offered, yet not reviewed in the manifest
};

// One check per adopted entry, in D/adopt.json's order, each gateway opened at exactly
// `protocol_version` (as a host speaking it would; one that answers another is
// server.protocol_version_mismatch), or unset as a host of the latest legacy revision.
// Errors: adopt.nothing_adopted, and the manifest's load errors; an entry that does not
// connect is a result, not an error, and so is one that is not the entry --apply wrote
// (adopt.entry_changed: not started) or that offers a tool its manifest does not review
// (adopt.unreviewed_offered).
Result<std::vector<EntryCheck>> CheckAdopted(const std::string& dir,
                                             const std::optional<std::string>& protocol_version = std::nullopt);

}  // namespace udon::adopt
