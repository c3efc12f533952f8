// The shared state store on PostgreSQL (issue 19, contract 7.14): runners on many
// machines see one truth about invalidation, and a `serialize` tool never runs twice at
// once anywhere.
//
// - Invalidations: table udon_mcp_invalidations keyed by (manifest_sha256, server), with
//   reason, the gate's time, the recording time and the runner's id; written with
//   synchronous_commit on, so the row is durable before the gate returns (as the file
//   store's fsync).
// - Serialize locks: session-level advisory locks keyed by a 64-bit digest of the scope,
//   each on a session held for the lock's lifetime: the store's main session for the first
//   lock held (a fresh `call` opens one session), a session of its own for each further one. A runner that dies releases its
//   locks when its session ends: at once for a process killed on a live machine (the
//   kernel closes the socket), within the TCP keepalive bound (kKeepaliveBoundSeconds) for
//   a machine or network that vanishes. Session locks do not work behind PgBouncer in
//   transaction mode (docs/contract.md 7.14).
// - Schema: created on first use by a versioned migration in one transaction
//   (udon_mcp_schema_version); a newer schema than this binary knows is refused. Each
//   session checks the version with its first statement, in that statement's round trip when
//   it only reads; each statement is prepared in its first execution's round trip, and then
//   only bound and executed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gate/state_store.h"
#include "json/json.h"
#include "base/result.h"
#include "state_pg/tls.h"

namespace udon::state_pg {

// The schema this binary creates and understands.
inline constexpr int kSchemaVersion = 1;
// Server- and client-side TCP keepalive of every session: idle 10 s, then 3 probes 5 s
// apart, and unacknowledged data abandoned after the same 25 s.
inline constexpr int kKeepaliveIdleSeconds = 10;
inline constexpr int kKeepaliveIntervalSeconds = 5;
inline constexpr int kKeepaliveCount = 3;
inline constexpr int kKeepaliveBoundSeconds =
    kKeepaliveIdleSeconds + kKeepaliveIntervalSeconds * kKeepaliveCount;

// The advisory lock key of a serialize scope: the first 8 bytes of SHA-256 over a fixed
// label and the scope, as a signed 64-bit integer.
std::int64_t AdvisoryKey(std::string_view scope);

class Connection;

class PostgresStateStore : public gate::StateStore {
 public:
  // Connects lazily: nothing is contacted until the first operation (or Warm), so an unreachable
  // database is a refusal of the gate (state.unavailable, exit 3), not a usage error. A
  // host that is not local is reached with sslmode=verify-full unless the URI says
  // otherwise (state_pg/tls.h). Every connection attempt, its host names' lookups included,
  // ends by the URI's connect_timeout and by `connect_bound` (0: none; a call's timeout),
  // also when connect_timeout is 0 (libpq: wait forever).
  explicit PostgresStateStore(std::string uri, std::chrono::milliseconds connect_bound = std::chrono::milliseconds(0));
  ~PostgresStateStore() override;

  // Errors: state.unavailable (unreachable, migration failed, schema too new).
  Result<bool> IsInvalidated(std::string_view manifest_sha256, std::string_view server,
                             std::int64_t captured_at) override;
  // Errors: state.write_failed.
  Status Record(std::string_view manifest_sha256, std::string_view server, std::string_view reason,
                std::int64_t at) override;
  // Errors: state.unavailable, state.lock_failed, state.lock_timeout.
  Result<std::unique_ptr<gate::StateLock>> AcquireSerializeLock(const std::string& scope,
                                                                std::chrono::milliseconds timeout) override;

  // SELECT 1 on the main session. Errors: state.unavailable.
  Status CheckReachable() override;
  // LISTEN on channel udon_mcp_invalidations, on a session of its own (one per store; a
  // lost one is opened again every second; what it missed meanwhile the gate still reads
  // before dispatch). Record NOTIFYs there right after its record committed.
  void WatchInvalidations(InvalidationHeard heard) override;

  // Evidence (contract 5, 7.14): one record as its JSON line in udon_mcp_evidence, and
  // every line in insertion order. Errors: evidence.write_failed; state.unavailable.
  Status AppendEvidence(const std::string& line);
  Result<std::vector<std::string>> ReadEvidence();

  // The URI's sslmode when it weakens the verify-full default of a store that is not local.
  std::optional<std::string> WeakenedTls() const override;

  // Opens the main session on a thread of its own while the caller goes on (a fresh
  // `call` reads and hashes its manifest meanwhile); the first operation takes it over,
  // or its failure. A store destroyed before its first operation abandons the attempt.
  void Warm() override;

  // For the locks this store hands out. A connection for a lock taken back after its lock
  // was released; the release of a lock on the main session; whether that session (the
  // `session`th main session of this store) still lives and so still holds its lock.
  void ReturnConnection(std::unique_ptr<Connection> connection);
  void ReleaseMainLock(std::uint64_t session, const std::string& key);
  Status MainLockHeld(std::uint64_t session);

  // The round trips of statements on every session of this store so far (each a message
  // sequence ending in Sync, answered by the server), the connection set-ups not counted:
  // for tests of how many a call takes.
  std::uint64_t RoundTrips() const { return round_trips_.load(); }

 private:
  // A connected session; its schema's version is checked with its first statement
  // (RunReady in pg_store.cc). Errors: state.unavailable.
  // With a `cancel_fd`, the attempt ends (unreachable) as soon as it becomes readable.
  Result<std::unique_ptr<Connection>> Open(int cancel_fd = -1);
  // A connected session, its schema checked (and migrated when needed): one round trip
  // after the connection set-up. Errors: state.unavailable.
  Result<std::unique_ptr<Connection>> OpenReady();
  // Under main_mutex_: main_ open, a new session (and number) when it was not.
  Status OpenMain();
  // state.unavailable for a session that did not start, with the sslmode it required.
  Error Unreachable() const;
  Status WithMain(const std::function<Status(Connection&)>& work, const char* code);
  // The serialize lock on the main session (reserved for it as `session`), or on a session
  // of its own. Errors: state.unavailable, state.lock_timeout.
  Result<std::unique_ptr<gate::StateLock>> LockOnMain(std::uint64_t session, const std::string& key,
                                                      std::chrono::milliseconds timeout);
  Result<std::unique_ptr<gate::StateLock>> LockOnOwnSession(const std::string& key, std::chrono::milliseconds timeout);

  std::string uri_;
  std::string runner_id_;
  std::chrono::milliseconds connect_bound_;
  bool parseable_ = false;  // libpq can parse uri_
  StoreTls tls_;
  // One session per process for the common case: the invalidation reads and writes, the
  // evidence, and one serialize lock at a time. Further locks held at once take sessions
  // of their own (idle_ keeps them between locks).
  std::mutex main_mutex_;
  std::unique_ptr<Connection> main_;
  std::uint64_t main_session_ = 0;           // counts the main sessions opened
  std::optional<std::uint64_t> main_lock_;  // the main session holding (or taking) a lock
  std::thread warming_;                      // Warm's Open() of the main session
  int cancel_warming_ = -1;                  // an eventfd: the destructor ends that Open()
  std::optional<Result<std::unique_ptr<Connection>>> warmed_;  // its outcome, once joined
  // The session of WatchInvalidations, then one second between attempts; an eventfd ends it.
  void Watch(const InvalidationHeard& heard);
  std::thread watching_;
  int stop_watching_ = -1;
  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;  // lock sessions between locks
  std::atomic<std::uint64_t> round_trips_{0};
};

}  // namespace udon::state_pg
