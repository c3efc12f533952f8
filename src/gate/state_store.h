// The state store (contract 1.5, 7.3, 7.14): durable list_changed invalidations per
// (manifestSha256, server) and the exclusive locks of `serialize` tools. The gate depends
// only on this interface; the state directory (FileStateStore, the embedded default) and
// PostgreSQL (src/state_pg/, for runners on many machines) implement it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace udon::gate {

// An exclusive serialize lock, released on destruction.
class StateLock {
 public:
  virtual ~StateLock() = default;
  // Whether the lock is still ours. A lock kept by a database session is lost when that
  // session ends (the server restarted, the connection broke): another runner may then
  // have taken it, so a call made under it has an unknown outcome.
  // Errors: state.unavailable.
  virtual Status StillHeld() { return OkStatus(); }
};

class StateStore {
 public:
  virtual ~StateStore() = default;

  // Whether a manifest is refused for this server: an invalidation recorded for exactly
  // this (digest, server), or one recorded for the server at or after the manifest's
  // capturedAt (an edit that re-pins a stale capture must not revive it; only a capture
  // made after the invalidation can). A record that cannot be read refuses too.
  // Errors: state.unavailable (the store cannot be reached, listed or read).
  virtual Result<bool> IsInvalidated(std::string_view manifest_sha256, std::string_view server,
                                     std::int64_t captured_at) = 0;
  // Durable before it returns: a later process (on any machine sharing the store) must
  // refuse even if this one dies right after. `reason` is a fixed word; `at` is the
  // gate's clock in Unix seconds.
  // Errors: state.write_failed.
  virtual Status Record(std::string_view manifest_sha256, std::string_view server,
                        std::string_view reason, std::int64_t at) = 0;
  // scope names what is serialized: the server (and tool, for scope "tool"). Waits at
  // most `timeout` for a holder to finish.
  // Errors: state.lock_failed, state.lock_timeout, state.unavailable.
  virtual Result<std::unique_ptr<StateLock>> AcquireSerializeLock(const std::string& scope,
                                                                  std::chrono::milliseconds timeout) = 0;
  // A database store reached over a network with a weaker sslmode than verify-full, as
  // its URI asked: that mode, for evidence (storeTls). nullopt: nothing weakened.
  virtual std::optional<std::string> WeakenedTls() const { return std::nullopt; }
  // Begins, without waiting, what the first operation will need (a database store: its
  // connection, issue 31), so that it overlaps the caller's own work; whatever fails is
  // that operation's error. Nothing by default.
  virtual void Warm() {}
  // Whether the store answers now (serve's /readyz): a database store's one round trip.
  // Errors: state.unavailable.
  virtual Status CheckReachable() { return OkStatus(); }
  // Calls `heard` with the (manifestSha256, server) of every invalidation recorded in this
  // store from now on, by any process sharing it, as soon as the store tells (a database
  // store: LISTEN/NOTIFY), from a thread of the store's, until the store goes. A hint for
  // promptness only (a serve replica withdraws the tools at once): the gate reads the store
  // before every dispatch regardless. Nothing by default: the state directory cannot tell.
  using InvalidationHeard = std::function<void(const std::string& manifest_sha256, const std::string& server)>;
  virtual void WatchInvalidations(InvalidationHeard heard) { (void)heard; }
};

// The invalidations this process recorded, in memory: every thread sees one the moment it
// is noted, before (and whether or not) its durable write succeeds. The gate's last look
// before dispatch consults it ahead of the store (contract 7.5). Same rule as
// StateStore::IsInvalidated. Thread-safe.
class InvalidationMemory {
 public:
  void Note(std::string_view manifest_sha256, std::string_view server, std::int64_t at);
  bool Covers(std::string_view manifest_sha256, std::string_view server, std::int64_t captured_at) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<std::pair<std::string, std::int64_t>>, std::less<>> by_server_;
};

// Today's state directory behind the interface (gate/state.h).
class FileStateStore : public StateStore {
 public:
  explicit FileStateStore(std::string state_dir) : state_dir_(std::move(state_dir)) {}
  Result<bool> IsInvalidated(std::string_view manifest_sha256, std::string_view server,
                             std::int64_t captured_at) override;
  Status Record(std::string_view manifest_sha256, std::string_view server, std::string_view reason,
                std::int64_t at) override;
  Result<std::unique_ptr<StateLock>> AcquireSerializeLock(const std::string& scope,
                                                          std::chrono::milliseconds timeout) override;

 private:
  std::string state_dir_;
};

// Whether --state / UDON_MCP_STATE / policy "state" names a PostgreSQL database
// (postgres:// or postgresql://) rather than a state directory path.
bool IsPostgresUrl(std::string_view url_or_path);

}  // namespace udon::gate
