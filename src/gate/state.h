// The state directory (contract 1.5): durable list_changed invalidations per
// (manifestSha256, server), and the cross-process locks of `serialize` tools.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "json/result.h"

namespace udon::gate {

// --state-dir, else $UDON_MCP_STATE_DIR, else $XDG_STATE_HOME/udon-mcp, else
// ~/.local/state/udon-mcp. Errors: state.unavailable when no home can be found.
Result<std::string> ResolveStateDir(const std::optional<std::string>& flag);

class InvalidationStore {
 public:
  explicit InvalidationStore(std::string state_dir) : state_dir_(std::move(state_dir)) {}

  bool IsInvalidated(std::string_view manifest_sha256, std::string_view server) const;
  // Durable before it returns (written, fsynced, renamed, directory fsynced): a later
  // process must refuse even if this one dies right after. `reason` is a fixed word
  // ("list_changed_before_dispatch", "list_changed_during_call", "strict_notification").
  // Errors: state.write_failed.
  Status Record(std::string_view manifest_sha256, std::string_view server,
                std::string_view reason) const;

 private:
  std::string PathFor(std::string_view manifest_sha256, std::string_view server) const;
  std::string state_dir_;
};

// An exclusive lock held for one serialized call, across threads and processes (flock on
// a file in the state directory). Released on destruction.
class SerializeLock {
 public:
  // scope_key names what is serialized: the server (and tool, for scope "tool").
  // Errors: state.lock_failed.
  static Result<std::unique_ptr<SerializeLock>> Acquire(const std::string& state_dir,
                                                        const std::string& scope_key);
  ~SerializeLock();
  SerializeLock(const SerializeLock&) = delete;
  SerializeLock& operator=(const SerializeLock&) = delete;

 private:
  explicit SerializeLock(int fd) : fd_(fd) {}
  int fd_;
};

// Lowercase hex of arbitrary bytes: server keys may be "." or "..", never a path piece.
std::string HexName(std::string_view bytes);

}  // namespace udon::gate
