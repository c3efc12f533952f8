// The state directory (contract 1.5): durable list_changed invalidations per
// (manifestSha256, server), and the cross-process locks of `serialize` tools.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/file.h"
#include "base/result.h"

namespace udon::gate {

// --state-dir, else $UDON_MCP_STATE_DIR, else $XDG_STATE_HOME/udon-mcp, else
// ~/.local/state/udon-mcp. Errors: state.unavailable when no home can be found.
Result<std::string> ResolveStateDir(const std::optional<std::string>& flag);

class InvalidationStore {
 public:
  explicit InvalidationStore(std::string state_dir) : state_dir_(std::move(state_dir)) {}

  // Whether a manifest is refused for this server: an invalidation recorded for exactly
  // this (digest, server), or one recorded for the server at or after the manifest's
  // capturedAt (an edit that re-pins a stale capture must not revive it; only a capture
  // made after the invalidation can). A record that cannot be read refuses too.
  // Errors: state.unavailable (the records cannot be listed or read).
  Result<bool> IsInvalidated(std::string_view manifest_sha256, std::string_view server,
                             std::int64_t captured_at) const;
  // Durable before it returns (written, fsynced, renamed, directory fsynced): a later
  // process must refuse even if this one dies right after. `reason` is a fixed word
  // ("list_changed_before_dispatch", "list_changed_during_call", "strict_notification",
  // ...); `at` is the gate's clock in Unix seconds.
  // Errors: state.write_failed.
  Status Record(std::string_view manifest_sha256, std::string_view server,
                std::string_view reason, std::int64_t at) const;

 private:
  std::string PathFor(std::string_view manifest_sha256, std::string_view server) const;
  std::string state_dir_;
};

// An exclusive lock held for one serialized call, across threads and processes (a
// base::FileLock on a file in the state directory). Released on destruction.
class SerializeLock {
 public:
  // scope_key names what is serialized: the server (and tool, for scope "tool"). Waits
  // at most `timeout` for a holder to finish.
  // Errors: state.lock_failed (a lock file that is a link included), state.lock_timeout.
  static Result<std::unique_ptr<SerializeLock>> Acquire(const std::string& state_dir,
                                                        const std::string& scope_key,
                                                        std::chrono::milliseconds timeout);

 private:
  explicit SerializeLock(base::FileLock lock) : lock_(std::move(lock)) {}
  base::FileLock lock_;
};

// Lowercase hex of arbitrary bytes: server keys may be "." or "..", never a path piece.
std::string HexName(std::string_view bytes);

}  // namespace udon::gate
