// The gate's connection pool (contract 6): a server's connection kept between calls in
// one process, and the pure decision whether a kept connection may serve the next call.
// What follows from a refusal (a durable invalidation, evidence) is the gate's: this file
// neither records nor closes anything on its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mcp/client/client.h"
#include "mcp/client/connection.h"

namespace udon::gate {

// A connection with what it was opened and bound for.
struct PooledConnection {
  std::unique_ptr<mcp::Client> client;
  std::string protocol_version;    // the manifest's, which the server negotiated exactly
  std::string server_info_sha256;  // canonical digest of the serverInfo it was checked against
  // Contract 6: the binding on a connection starts at its first successful comparison;
  // events after this sequence number happened to a bound connection.
  std::optional<std::uint64_t> bound_since;
  std::string manifest_sha256;  // what it was bound for
  // While idle in the pool: the connection's observer that watches for list_changed.
  std::optional<std::uint64_t> idle_watch;
  // Shared by coalesced calls (gate/internal/lane.h): no further call may join it; its
  // last user closes it. Guarded by the lane's mutex.
  bool retired = false;
  // Coalesced: the sequence through which the first group's successful listing examined
  // the connection. Its members' comparisons bind the connection from there, so a later
  // group lists it as bound even before they have. Guarded by the lane's mutex.
  std::optional<std::uint64_t> listed_through;
};

// When an idle connection was kept; steady, so a wall-clock step neither trims nor keeps one.
using IdleClock = std::function<std::chrono::steady_clock::time_point()>;

// At most `max_idle_per_server` idle connections per server (one, unless concurrent callers
// such as the gateway ask for more); safe to use from concurrent calls.
class ConnectionPool {
 public:
  explicit ConnectionPool(std::size_t max_idle_per_server = 1);
  // With `idle_limit` > 0: connections idle longer than it are handed out by TakeExpired,
  // except each server's most recently kept one (the steady state has no cold start).
  ConnectionPool(std::size_t max_idle_per_server, std::chrono::milliseconds idle_limit, IdleClock clock);
  // One of the server's idle connections (the most recently kept), out of the pool; null
  // when there is none.
  std::shared_ptr<PooledConnection> Take(const std::string& server);
  // Keeps the connection while the server has fewer idle than the bound (null returned);
  // otherwise hands it back, for the caller to close.
  std::shared_ptr<PooledConnection> Keep(const std::string& server, std::shared_ptr<PooledConnection> connection);
  // Every idle connection with its server, out of the pool (the gate closes them when it ends).
  std::vector<std::pair<std::string, std::shared_ptr<PooledConnection>>> TakeAll();
  // The connections idle beyond the limit, out of the pool, for the caller to close (their
  // processes and reader threads end with them); none without a limit.
  std::vector<std::pair<std::string, std::shared_ptr<PooledConnection>>> TakeExpired();

 private:
  struct Idle {
    std::shared_ptr<PooledConnection> connection;
    std::chrono::steady_clock::time_point since;
  };
  std::size_t max_idle_per_server_;
  std::chrono::milliseconds idle_limit_{0};
  IdleClock clock_;
  std::mutex mutex_;
  std::map<std::string, std::vector<Idle>> idle_;  // oldest kept first
};

// Whether a list_changed reached the connection after its binding began (false while
// unbound): the change of a bound catalog the gate records when it lets the connection go.
bool ListChangedSinceBinding(const PooledConnection& pooled);

// What the next call expects of a kept connection: the manifest's recorded version and
// serverInfo digest, and the manifest it is pinned to.
struct ReuseExpectation {
  std::string protocol_version;
  std::string server_info_sha256;
  std::string manifest_sha256;
};

// Contract 6's reuse decision, pure: `list_changed` (a notice since the binding began, or
// since the connection opened when it never bound) outweighs `refused`; both unset: reuse.
struct ReuseVerdict {
  // The first of: protocol_version, server_info, other_manifest, disconnected,
  // subscription_lost; empty when none applies.
  std::string refused;
  bool list_changed = false;

  bool reusable() const { return refused.empty() && !list_changed; }
};

ReuseVerdict JudgeReuse(const PooledConnection& pooled, const ReuseExpectation& expected);

}  // namespace udon::gate
