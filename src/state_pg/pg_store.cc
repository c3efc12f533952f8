#include "state_pg/pg_store.h"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include "state_pg/internal/session.h"
#include "state_pg/tls.h"
#include "state_pg/uri.h"

namespace udon::state_pg {

namespace {

// The parameter types the statements use (kText, kBigint: internal/session.h).
constexpr Oid kCheckTypes[] = {kText, kText, kBigint};
constexpr Oid kRecordTypes[] = {kText, kText, kText, kBigint, kText};
constexpr Oid kLineTypes[] = {kText};
constexpr Oid kNotifyTypes[] = {kText, kText};

constexpr Statement kIsInvalidated{
    "udon_is_invalidated", 3, kCheckTypes,
    "SELECT 1 FROM udon_mcp_invalidations WHERE server = $2 AND (manifest_sha256 = $1 OR at >= $3) LIMIT 1", true};
// The later record of a pair replaces the earlier one, as the file store's rename does.
constexpr Statement kRecord{
    "udon_record", 5, kRecordTypes,
    "INSERT INTO udon_mcp_invalidations (manifest_sha256, server, reason, at, runner) VALUES ($1, $2, $3, $4, $5)"
    " ON CONFLICT (manifest_sha256, server) DO UPDATE SET reason = excluded.reason, at = excluded.at,"
    " recorded_at = now(), runner = excluded.runner",
    false};
// The notice every watching process hears when the record commits (WatchInvalidations):
// "DIGEST SERVER", the digest being 64 hex digits.
constexpr char kInvalidationChannel[] = "udon_mcp_invalidations";
constexpr Statement kNotify{"udon_notify", 2, kNotifyTypes,
                            "SELECT pg_notify('udon_mcp_invalidations', $1 || ' ' || $2)", false};
constexpr Statement kAlive{"udon_alive", 0, nullptr, "SELECT 1", true};
constexpr Statement kAppendEvidence{"udon_append_evidence", 1, kLineTypes,
                                    "INSERT INTO udon_mcp_evidence (record) VALUES ($1)", false};
constexpr Statement kReadEvidence{"udon_read_evidence", 0, nullptr, "SELECT record FROM udon_mcp_evidence ORDER BY id",
                                  true};

constexpr const char* kMigrationLock = "SELECT pg_advisory_xact_lock(1970300014, 1)";  // 'udon', its own key space

// Migration 1: the tables of schema version 1.
constexpr const char* kMigration1[] = {
    ("CREATE TABLE udon_mcp_invalidations ("
     " manifest_sha256 text NOT NULL, server text NOT NULL, reason text NOT NULL,"
     " at bigint NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now(), runner text NOT NULL,"
     " PRIMARY KEY (manifest_sha256, server))"),
    "CREATE INDEX udon_mcp_invalidations_server ON udon_mcp_invalidations (server, at)",
    ("CREATE TABLE udon_mcp_evidence ("
     " id bigserial PRIMARY KEY, recorded_at timestamptz NOT NULL DEFAULT now(), record text NOT NULL)"),
};

Error Unavailable(const std::string& uri, const char* message) {
  Error error = MakeError("state.unavailable", message);
  error.details["store"] = RedactConninfo(uri);
  return error;
}

// A store whose URI weakens TLS is used as asked, and said once per process: every runner
// of a fleet would otherwise repeat it on every call.
void WarnOnceAboutTls(const StoreTls& tls) {
  static std::atomic<bool> warned{false};
  if (tls.weakened && !warned.exchange(true)) std::fputs(WeakTlsWarning(*tls.weakened).c_str(), stderr);
}

const char* Getenv(const char* name) { return std::getenv(name); }


// Brings the schema to kSchemaVersion in one transaction, serialized across runners by a
// transaction-level advisory lock. Errors: state.unavailable.
Status Migrate(Connection& connection, const std::string& uri) {
  if (!connection.Command("BEGIN")) return Unavailable(uri, "the state database refused a transaction");
  auto fail = [&](const char* message) -> Status {
    connection.Command("ROLLBACK");
    return Unavailable(uri, message);
  };
  if (!connection.Exec(kMigrationLock, {})) return fail("the state database's migration lock cannot be taken");
  if (!connection.Command("CREATE TABLE IF NOT EXISTS udon_mcp_schema_version ("
                          " version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")) {
    return fail("the state database's schema_version table cannot be created");
  }
  auto version = connection.Exec("SELECT coalesce(max(version), 0) FROM udon_mcp_schema_version", {});
  if (!version) return fail("the state database's schema version cannot be read");
  const int found = std::atoi(PQgetvalue(version.get(), 0, 0));
  if (found > kSchemaVersion) {
    connection.Command("ROLLBACK");
    Error error = Unavailable(uri, "the state database's schema is newer than this udon-mcp knows; upgrade udon-mcp");
    error.details["schemaVersion"] = found;
    error.details["supportedSchemaVersion"] = kSchemaVersion;
    return error;
  }
  if (found < 1) {
    for (const char* statement : kMigration1) {
      if (!connection.Command(statement)) return fail("the state database's schema cannot be created");
    }
    if (!connection.Command("INSERT INTO udon_mcp_schema_version (version) VALUES (1)")) {
      return fail("the state database's schema version cannot be written");
    }
  }
  if (!connection.Command("COMMIT")) return Unavailable(uri, "the state database's migration did not commit");
  return OkStatus();
}

// Makes `connection` ready: its schema's version checked (one round trip), and the schema
// migrated when it is older or missing. Errors: state.unavailable.
Status Ready(Connection& connection, const std::string& uri) {
  if (connection.ready()) return OkStatus();
  if (connection.SchemaVersion() != kSchemaVersion) {
    static std::mutex migrate_mutex;
    std::lock_guard<std::mutex> guard(migrate_mutex);
    UDON_RETURN_IF_ERROR(Migrate(connection, uri));
  }
  connection.MarkReady();
  return OkStatus();
}

// `statement` on `connection`, the session made ready first. On a session's first use a
// read-only statement shares the version check's round trip: a fresh call's check is one
// round trip after the connection set-up. Errors: state.unavailable (Ready's); a statement
// that failed is a null result.
Result<PgResult> RunReady(Connection& connection, const Statement& statement, const std::vector<std::string>& params,
                          ExecStatusType expected, const std::string& uri) {
  if (!connection.ready() && statement.read_only) {
    Connection::First first = connection.RunWithVersion(statement, params, expected);
    if (first.version == kSchemaVersion) {
      connection.MarkReady();
      return std::move(first.result);
    }
    if (!connection.ok()) return PgResult();
  }
  UDON_RETURN_IF_ERROR(Ready(connection, uri));
  return connection.Run(statement, params, expected);
}

// A session that could not be opened or made ready, as the failure of an operation whose
// own code is `code` (a write's state.write_failed); a schema too new stays state.unavailable.
Error Recoded(Error error, const char* code) {
  if (std::string(code) != "state.unavailable" && !error.details.contains("schemaVersion")) error.code = code;
  return error;
}

Error LockTimeout(std::chrono::milliseconds timeout) {
  Error error = MakeError("state.lock_timeout", "another call of this serialized tool held its lock too long");
  error.details["timeoutSeconds"] = std::chrono::duration<double>(timeout).count();
  return error;
}

Error LockLost() { return MakeError("state.unavailable", "the session holding the serialize lock ended"); }

// A lock on a session of its own (while the store's main session holds another lock).
class PgLock : public gate::StateLock {
 public:
  PgLock(PostgresStateStore& store, std::unique_ptr<Connection> connection, std::string key)
      : store_(store), connection_(std::move(connection)), key_(std::move(key)) {}
  ~PgLock() override {
    // A failed unlock means the session is gone, and the lock with it: never reused.
    auto unlocked = connection_->Run(kAdvisoryUnlock, {key_});
    if (unlocked && connection_->ok()) store_.ReturnConnection(std::move(connection_));
  }
  Status StillHeld() override {
    if (connection_->ok() && connection_->Run(kAlive, {})) return OkStatus();
    return LockLost();
  }

 private:
  PostgresStateStore& store_;
  std::unique_ptr<Connection> connection_;
  std::string key_;
};

// A lock on the store's main session, the one its invalidation reads use.
class MainSessionLock : public gate::StateLock {
 public:
  MainSessionLock(PostgresStateStore& store, std::uint64_t session, std::string key)
      : store_(store), session_(session), key_(std::move(key)) {}
  ~MainSessionLock() override { store_.ReleaseMainLock(session_, key_); }
  Status StillHeld() override { return store_.MainLockHeld(session_); }

 private:
  PostgresStateStore& store_;
  std::uint64_t session_;
  std::string key_;
};

}  // namespace

std::int64_t AdvisoryKey(std::string_view scope) { return LabeledAdvisoryKey("udon-mcp serialize\n", scope); }

PostgresStateStore::PostgresStateStore(std::string uri, std::chrono::milliseconds connect_bound)
    : uri_(std::move(uri)), runner_id_(RunnerId()), connect_bound_(connect_bound) {
  auto parsed = ParseConninfo(uri_);
  parseable_ = parsed.ok();
  if (parseable_) tls_ = DecideStoreTls(*parsed, Getenv);
}

std::optional<std::string> PostgresStateStore::WeakenedTls() const { return tls_.weakened; }

Error PostgresStateStore::Unreachable() const {
  // libpq's message is not kept (it may quote the server); for a store not on this machine
  // the likeliest causes are named instead.
  if (tls_.default_sslmode.empty()) return Unavailable(uri_, "the state database cannot be reached");
  const std::string sslmode = tls_.weakened.value_or(tls_.default_sslmode);
  Error error = Unavailable(uri_, sslmode == kRemoteSslmode
                                      ? "the state database cannot be reached, or did not prove its identity over "
                                        "TLS (sslmode=verify-full: its certificate must chain to sslrootcert and "
                                        "name the host)"
                                      : "the state database cannot be reached");
  error.details["sslmode"] = sslmode;
  return error;
}

PostgresStateStore::~PostgresStateStore() {
  if (warming_.joinable()) {
    // Nobody will use the session: a command refused before it consulted the store ends
    // now, not when a slow or silent server lets the attempt end.
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = write(cancel_warming_, &one, sizeof one);
    warming_.join();
  }
  if (cancel_warming_ >= 0) close(cancel_warming_);
  if (watching_.joinable()) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = write(stop_watching_, &one, sizeof one);
    watching_.join();
  }
  if (stop_watching_ >= 0) close(stop_watching_);
}

void PostgresStateStore::WatchInvalidations(InvalidationHeard heard) {
  if (watching_.joinable()) return;  // one session per process
  stop_watching_ = eventfd(0, EFD_CLOEXEC);
  if (stop_watching_ < 0) return;  // no watch: the store is still read before every dispatch
  watching_ = std::thread([this, heard = std::move(heard)] { Watch(heard); });
}

void PostgresStateStore::Watch(const InvalidationHeard& heard) {
  for (;;) {
    auto connection = Open(stop_watching_);
    const int socket = connection.ok() ? (*connection)->Listen(kInvalidationChannel) : -1;
    std::vector<std::string> payloads;
    while (socket >= 0) {
      pollfd waits[2] = {{socket, POLLIN, 0}, {stop_watching_, POLLIN, 0}};
      if (poll(waits, 2, -1) < 0) continue;
      if (waits[1].revents != 0) return;
      payloads.clear();
      const bool alive = (*connection)->TakeNotices(payloads);
      for (const std::string& payload : payloads) {
        const std::size_t space = payload.find(' ');
        if (space != std::string::npos) heard(payload.substr(0, space), payload.substr(space + 1));
      }
      if (!alive) break;
    }
    pollfd stop = {stop_watching_, POLLIN, 0};
    if (poll(&stop, 1, 1000) != 0) return;
  }
}

void PostgresStateStore::Warm() {
  std::lock_guard<std::mutex> guard(main_mutex_);
  if (main_ || warming_.joinable()) return;
  if (cancel_warming_ < 0) cancel_warming_ = eventfd(0, EFD_CLOEXEC);
  if (cancel_warming_ < 0) return;  // the first operation opens the session, as without Warm
  try {
    warming_ = std::thread([this] { warmed_ = Open(cancel_warming_); });
  } catch (const std::system_error&) {
    // No thread to be had: the first operation opens the session itself, as without Warm.
  }
}

Result<std::unique_ptr<Connection>> PostgresStateStore::Open(int cancel_fd) {
  if (!parseable_) return Unavailable(uri_, "libpq cannot parse the state store's connection string");
  WarnOnceAboutTls(tls_);
  auto connection = std::make_unique<Connection>(ConnectSession(uri_, tls_, cancel_fd, connect_bound_), round_trips_);
  if (!connection->ok()) return Unreachable();
  connection->Silence();
  // Not ready yet: the schema's version is checked with the session's first statement.
  return connection;
}

Result<std::unique_ptr<Connection>> PostgresStateStore::OpenReady() {
  UDON_ASSIGN_OR_RETURN(std::unique_ptr<Connection> connection, Open());
  UDON_RETURN_IF_ERROR(Ready(*connection, uri_));
  return connection;
}

Status PostgresStateStore::OpenMain() {
  if (main_ && main_->ok()) return OkStatus();
  main_.reset();
  ++main_session_;  // whatever was held on the old session ended with it
  if (warming_.joinable()) {
    warming_.join();
    Result<std::unique_ptr<Connection>> warmed = std::move(*warmed_);
    warmed_.reset();
    UDON_ASSIGN_OR_RETURN(main_, std::move(warmed));
    return OkStatus();
  }
  UDON_ASSIGN_OR_RETURN(main_, Open());
  return OkStatus();
}

Status PostgresStateStore::WithMain(const std::function<Status(Connection&)>& work, const char* code) {
  std::lock_guard<std::mutex> guard(main_mutex_);
  if (Status opened = OpenMain(); !opened.ok()) return Recoded(std::move(opened).error(), code);
  Status done = work(*main_);
  if (done.ok() || main_->ok()) return done;
  // The session ended since its last use (the database restarted, a keepalive gave up):
  // one new session, once. Reads and the idempotent upsert are safe to repeat.
  if (!OpenMain().ok()) return done;
  return work(*main_);
}

Result<bool> PostgresStateStore::IsInvalidated(std::string_view manifest_sha256, std::string_view server,
                                               std::int64_t captured_at) {
  bool invalidated = false;
  Status checked = WithMain(
      [&](Connection& c) -> Status {
        UDON_ASSIGN_OR_RETURN(PgResult rows, RunReady(c, kIsInvalidated,
                                                      {std::string(manifest_sha256), std::string(server),
                                                       std::to_string(captured_at)},
                                                      PGRES_TUPLES_OK, uri_));
        if (!rows) return Unavailable(uri_, "the invalidation records cannot be read");
        invalidated = PQntuples(rows.get()) > 0;
        return OkStatus();
      },
      "state.unavailable");
  if (!checked.ok()) return std::move(checked).error();
  return invalidated;
}

Status PostgresStateStore::Record(std::string_view manifest_sha256, std::string_view server,
                                  std::string_view reason, std::int64_t at) {
  return WithMain(
      [&](Connection& c) -> Status {
        auto done = RunReady(c, kRecord,
                             {std::string(manifest_sha256), std::string(server), std::string(reason),
                              std::to_string(at), runner_id_},
                             PGRES_COMMAND_OK, uri_);
        if (!done.ok()) return Recoded(std::move(done).error(), "state.write_failed");
        // Durable already; the notice only makes other replicas hear of it sooner.
        if (*done) {
          (void)c.Run(kNotify, {std::string(manifest_sha256), std::string(server)});
          return OkStatus();
        }
        Error error = MakeError("state.write_failed", "cannot record the invalidation durably");
        error.details["store"] = RedactConninfo(uri_);
        return error;
      },
      "state.write_failed");
}

Result<std::unique_ptr<gate::StateLock>> PostgresStateStore::AcquireSerializeLock(
    const std::string& scope, std::chrono::milliseconds timeout) {
  const std::string key = std::to_string(AdvisoryKey(scope));
  std::optional<std::uint64_t> session;
  {
    // The main session takes one lock at a time: a session's advisory locks are re-entrant,
    // so a second caller of this process on the same scope must wait on a session of its own.
    std::lock_guard<std::mutex> guard(main_mutex_);
    UDON_RETURN_IF_ERROR(OpenMain());
    UDON_RETURN_IF_ERROR(Ready(*main_, uri_));
    if (main_lock_ != main_session_) {
      main_lock_ = main_session_;
      session = main_session_;
    }
  }
  if (session) return LockOnMain(*session, key, timeout);
  return LockOnOwnSession(key, timeout);
}

Result<std::unique_ptr<gate::StateLock>> PostgresStateStore::LockOnMain(std::uint64_t session, const std::string& key,
                                                                        std::chrono::milliseconds timeout) {
  Result<bool> taken = Poll(
      [&]() -> Result<bool> {
        std::lock_guard<std::mutex> guard(main_mutex_);
        std::optional<bool> once;
        if (session == main_session_ && main_) once = TryAdvisoryLock(*main_, key);
        if (!once) return Unavailable(uri_, "the serialize lock cannot be taken");
        return *once;
      },
      timeout);
  if (!taken.ok() || !*taken) {
    std::lock_guard<std::mutex> guard(main_mutex_);
    if (main_lock_ == session) main_lock_.reset();
    if (!taken.ok()) return std::move(taken).error();
    return LockTimeout(timeout);
  }
  return std::unique_ptr<gate::StateLock>(new MainSessionLock(*this, session, key));
}

Result<std::unique_ptr<gate::StateLock>> PostgresStateStore::LockOnOwnSession(const std::string& key,
                                                                              std::chrono::milliseconds timeout) {
  std::unique_ptr<Connection> connection;
  {
    std::lock_guard<std::mutex> guard(pool_mutex_);
    if (!idle_.empty()) {
      connection = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  bool pooled = connection != nullptr;
  if (!connection || !connection->ok()) {
    UDON_ASSIGN_OR_RETURN(connection, OpenReady());
  }
  Result<bool> taken = Poll(
      [&]() -> Result<bool> {
        std::optional<bool> once = TryAdvisoryLock(*connection, key);
        if (!once && pooled && !connection->ok()) {
          // An idle session that ended meanwhile held nothing: one new session, once.
          UDON_ASSIGN_OR_RETURN(connection, OpenReady());
          pooled = false;
          once = TryAdvisoryLock(*connection, key);
        }
        if (!once) return Unavailable(uri_, "the serialize lock cannot be taken");
        return *once;
      },
      timeout);
  if (!taken.ok()) return std::move(taken).error();
  if (!*taken) {
    ReturnConnection(std::move(connection));
    return LockTimeout(timeout);
  }
  return std::unique_ptr<gate::StateLock>(new PgLock(*this, std::move(connection), key));
}

void PostgresStateStore::ReleaseMainLock(std::uint64_t session, const std::string& key) {
  std::lock_guard<std::mutex> guard(main_mutex_);
  if (main_lock_ != session) return;
  main_lock_.reset();
  if (session != main_session_ || !main_) return;  // the session ended, and the lock with it
  auto unlocked = main_->Run(kAdvisoryUnlock, {key});
  // An unlock that failed, or found nothing to release, leaves a session nobody can vouch
  // for: the next use opens another.
  if (!unlocked || std::strcmp(PQgetvalue(unlocked.get(), 0, 0), "t") != 0) {
    main_.reset();
    ++main_session_;
  }
}

Status PostgresStateStore::CheckReachable() {
  return WithMain(
      [&](Connection& c) -> Status {
        if (c.Run(kAlive, {})) return OkStatus();
        return Unavailable(uri_, "the store does not answer");
      },
      "state.unavailable");
}

Status PostgresStateStore::MainLockHeld(std::uint64_t session) {
  std::lock_guard<std::mutex> guard(main_mutex_);
  if (session == main_session_ && main_ && main_->ok() && main_->Run(kAlive, {})) return OkStatus();
  return LockLost();
}

void PostgresStateStore::ReturnConnection(std::unique_ptr<Connection> connection) {
  std::lock_guard<std::mutex> guard(pool_mutex_);
  idle_.push_back(std::move(connection));
}

Status PostgresStateStore::AppendEvidence(const std::string& line) {
  return WithMain(
      [&](Connection& c) -> Status {
        auto done = RunReady(c, kAppendEvidence, {line}, PGRES_COMMAND_OK, uri_);
        if (!done.ok()) return Recoded(std::move(done).error(), "evidence.write_failed");
        if (*done) return OkStatus();
        return MakeError("evidence.write_failed", "cannot append to the evidence table");
      },
      "evidence.write_failed");
}

Result<std::vector<std::string>> PostgresStateStore::ReadEvidence() {
  std::vector<std::string> lines;
  Status read = WithMain(
      [&](Connection& c) -> Status {
        UDON_ASSIGN_OR_RETURN(PgResult rows, RunReady(c, kReadEvidence, {}, PGRES_TUPLES_OK, uri_));
        if (!rows) return Unavailable(uri_, "the evidence table cannot be read");
        for (int i = 0; i < PQntuples(rows.get()); ++i) lines.emplace_back(PQgetvalue(rows.get(), i, 0));
        return OkStatus();
      },
      "state.unavailable");
  if (!read.ok()) return std::move(read).error();
  return lines;
}

}  // namespace udon::state_pg
