#include "state_pg/pg_store.h"

#include <libpq-fe.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "json/sha256.h"
#include "state_pg/tls.h"
#include "state_pg/uri.h"

namespace udon::state_pg {

// One libpq session. Never reconnects by itself: a session that ended took its advisory
// locks with it, and whoever holds this object must learn that (StillHeld).
class Connection {
 public:
  explicit Connection(PGconn* conn) : conn_(conn) {}
  ~Connection() { PQfinish(conn_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool ok() const { return PQstatus(conn_) == CONNECTION_OK; }
  // libpq prints the server's notices on stderr by default: server text never reaches
  // udon-mcp's output.
  void Silence() { PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr); }

  // Runs one statement with text parameters. The result when its status is `expected`,
  // else nullptr (the server's error text is never kept: it may echo values).
  std::unique_ptr<PGresult, void (*)(PGresult*)> Exec(const char* sql, const std::vector<std::string>& params,
                                                      ExecStatusType expected = PGRES_TUPLES_OK) {
    std::vector<const char*> values;
    for (const std::string& p : params) values.push_back(p.c_str());
    PGresult* raw = PQexecParams(conn_, sql, static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                                 nullptr, 0);
    std::unique_ptr<PGresult, void (*)(PGresult*)> result(raw, PQclear);
    if (raw == nullptr || PQresultStatus(raw) != expected) result.reset();
    return result;
  }
  bool Command(const char* sql, const std::vector<std::string>& params = {}) {
    return Exec(sql, params, PGRES_COMMAND_OK) != nullptr;
  }

 private:
  PGconn* conn_;
};

namespace {

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

std::string RunnerId() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown");
  return std::string(host) + ":" + std::to_string(getpid());
}

// Brings the schema to kSchemaVersion in one transaction, serialized across runners by a
// transaction-level advisory lock. Errors: state.unavailable.
Status Migrate(Connection& connection, const std::string& uri) {
  // The common case, one round trip: the schema is already this binary's. (A missing
  // table fails the statement; the migration below then creates it.)
  if (auto current = connection.Exec("SELECT max(version) FROM udon_mcp_schema_version", {});
      current && !PQgetisnull(current.get(), 0, 0) && std::atoi(PQgetvalue(current.get(), 0, 0)) == kSchemaVersion) {
    return OkStatus();
  }
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

class PgLock : public gate::StateLock {
 public:
  PgLock(PostgresStateStore& store, std::unique_ptr<Connection> connection, std::int64_t key)
      : store_(store), connection_(std::move(connection)), key_(std::to_string(key)) {}
  ~PgLock() override {
    // A failed unlock means the session is gone, and the lock with it: never reused.
    auto unlocked = connection_->Exec("SELECT pg_advisory_unlock($1::bigint)", {key_});
    if (unlocked && connection_->ok()) store_.ReturnConnection(std::move(connection_));
  }
  Status StillHeld() override {
    if (connection_->ok() && connection_->Exec("SELECT 1", {})) return OkStatus();
    return MakeError("state.unavailable", "the session holding the serialize lock ended");
  }

 private:
  PostgresStateStore& store_;
  std::unique_ptr<Connection> connection_;
  std::string key_;
};

}  // namespace

std::int64_t AdvisoryKey(std::string_view scope) {
  const auto digest = json::Sha256(std::string("udon-mcp serialize\n") + std::string(scope));
  std::uint64_t key = 0;
  for (int i = 0; i < 8; ++i) key = (key << 8) | digest[static_cast<std::size_t>(i)];
  std::int64_t signed_key;
  std::memcpy(&signed_key, &key, sizeof key);
  return signed_key;
}

PostgresStateStore::PostgresStateStore(std::string uri) : uri_(std::move(uri)), runner_id_(RunnerId()) {
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

PostgresStateStore::~PostgresStateStore() = default;

Result<std::unique_ptr<Connection>> PostgresStateStore::Open() {
  if (!parseable_) return Unavailable(uri_, "libpq cannot parse the state store's connection string");
  WarnOnceAboutTls(tls_);
  const std::string keepalive = std::to_string(kKeepaliveIdleSeconds);
  const std::string interval = std::to_string(kKeepaliveIntervalSeconds);
  const std::string count = std::to_string(kKeepaliveCount);
  const std::string user_timeout = std::to_string(kKeepaliveBoundSeconds * 1000);
  // The server's side of the keepalive decides when a vanished runner's session (and its
  // locks) ends; the client's side when a runner notices a vanished server.
  const std::string server_options = "-c tcp_keepalives_idle=" + keepalive + " -c tcp_keepalives_interval=" +
                                     interval + " -c tcp_keepalives_count=" + count +
                                     " -c tcp_user_timeout=" + user_timeout + " -c synchronous_commit=on";
  std::vector<std::pair<const char*, const char*>> parameters = {
      {"connect_timeout", "10"},          {"application_name", "udon-mcp"},
      {"keepalives", "1"},                {"keepalives_idle", keepalive.c_str()},
      {"keepalives_interval", interval.c_str()}, {"keepalives_count", count.c_str()},
      {"tcp_user_timeout", user_timeout.c_str()}, {"options", server_options.c_str()}};
  if (!tls_.default_sslmode.empty()) parameters.emplace_back("sslmode", tls_.default_sslmode.c_str());
  // Last, expanded: the URI's own values override every one above.
  parameters.emplace_back("dbname", uri_.c_str());
  std::vector<const char*> keys, values;
  for (const auto& [key, value] : parameters) {
    keys.push_back(key);
    values.push_back(value);
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  auto connection = std::make_unique<Connection>(PQconnectdbParams(keys.data(), values.data(), 1));
  if (!connection->ok()) return Unreachable();
  connection->Silence();
  {
    // Every process checks the schema once, before its first use of the store.
    static std::mutex migrate_mutex;
    std::lock_guard<std::mutex> guard(migrate_mutex);
    if (!migrated_) {
      UDON_RETURN_IF_ERROR(Migrate(*connection, uri_));
      migrated_ = true;
    }
  }
  return connection;
}

Status PostgresStateStore::WithMain(const std::function<Status(Connection&)>& work, const char* code) {
  std::lock_guard<std::mutex> guard(main_mutex_);
  if (!main_ || !main_->ok()) {
    main_.reset();
    auto opened = Open();
    if (!opened.ok()) {
      Error error = std::move(opened).error();
      if (std::string(code) != "state.unavailable" && !error.details.contains("schemaVersion")) {
        error.code = code;
      }
      return error;
    }
    main_ = std::move(opened).value();
  }
  Status done = work(*main_);
  if (done.ok() || main_->ok()) return done;
  // The session ended since its last use (the database restarted, a keepalive gave up):
  // one new session, once. Reads and the idempotent upsert are safe to repeat.
  main_.reset();
  auto reopened = Open();
  if (!reopened.ok()) return done;
  main_ = std::move(reopened).value();
  return work(*main_);
}

Result<bool> PostgresStateStore::IsInvalidated(std::string_view manifest_sha256, std::string_view server,
                                               std::int64_t captured_at) {
  bool invalidated = false;
  Status checked = WithMain(
      [&](Connection& c) -> Status {
        auto rows = c.Exec(
            "SELECT 1 FROM udon_mcp_invalidations WHERE server = $2 AND (manifest_sha256 = $1 OR at >= $3::bigint) "
            "LIMIT 1",
            {std::string(manifest_sha256), std::string(server), std::to_string(captured_at)});
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
  // The later record of a pair replaces the earlier one, as the file store's rename does.
  return WithMain(
      [&](Connection& c) -> Status {
        if (c.Command("INSERT INTO udon_mcp_invalidations (manifest_sha256, server, reason, at, runner)"
                      " VALUES ($1, $2, $3, $4::bigint, $5) ON CONFLICT (manifest_sha256, server) DO UPDATE"
                      " SET reason = excluded.reason, at = excluded.at, recorded_at = now(), runner = excluded.runner",
                      {std::string(manifest_sha256), std::string(server), std::string(reason), std::to_string(at),
                       runner_id_})) {
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
    UDON_ASSIGN_OR_RETURN(connection, Open());
  }
  const std::int64_t key = AdvisoryKey(scope);
  const std::vector<std::string> params = {std::to_string(key)};

  // pg_try_advisory_lock in a loop rather than pg_advisory_lock under lock_timeout: the
  // wait stays bounded by the policy without a statement left running on a timeout.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    auto taken = connection->Exec("SELECT pg_try_advisory_lock($1::bigint)", params);
    if (!taken && pooled && !connection->ok()) {
      // An idle session that ended meanwhile held nothing: one new session, once.
      UDON_ASSIGN_OR_RETURN(connection, Open());
      pooled = false;
      continue;
    }
    if (!taken) return Unavailable(uri_, "the serialize lock cannot be taken");
    if (std::strcmp(PQgetvalue(taken.get(), 0, 0), "t") == 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ReturnConnection(std::move(connection));
      Error error = MakeError("state.lock_timeout", "another call of this serialized tool held its lock too long");
      error.details["timeoutSeconds"] = std::chrono::duration<double>(timeout).count();
      return error;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
  return std::unique_ptr<gate::StateLock>(new PgLock(*this, std::move(connection), key));
}

void PostgresStateStore::ReturnConnection(std::unique_ptr<Connection> connection) {
  std::lock_guard<std::mutex> guard(pool_mutex_);
  idle_.push_back(std::move(connection));
}

Status PostgresStateStore::AppendEvidence(const std::string& line) {
  return WithMain(
      [&](Connection& c) -> Status {
        if (c.Command("INSERT INTO udon_mcp_evidence (record) VALUES ($1)", {line})) return OkStatus();
        return MakeError("evidence.write_failed", "cannot append to the evidence table");
      },
      "evidence.write_failed");
}

Result<std::vector<std::string>> PostgresStateStore::ReadEvidence() {
  std::vector<std::string> lines;
  Status read = WithMain(
      [&](Connection& c) -> Status {
        auto rows = c.Exec("SELECT record FROM udon_mcp_evidence ORDER BY id", {});
        if (!rows) return Unavailable(uri_, "the evidence table cannot be read");
        for (int i = 0; i < PQntuples(rows.get()); ++i) lines.emplace_back(PQgetvalue(rows.get(), i, 0));
        return OkStatus();
      },
      "state.unavailable");
  if (!read.ok()) return std::move(read).error();
  return lines;
}

}  // namespace udon::state_pg
