// A session of the PostgreSQL stores (the state store, pg_store.h, and the token store,
// token_store.h): one libpq connection with the store's options, its statements prepared
// once per session, and the polling of advisory locks.
#pragma once

#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/result.h"
#include "state_pg/tls.h"

namespace udon::state_pg {

// A statement a session prepares on its first use, in the same round trip as that first
// execution (libpq's pipeline mode), and then only binds and executes: nothing is parsed
// or planned again per call, and nothing a session never runs is prepared.
struct Statement {
  const char* name;
  int count;          // parameters
  const Oid* types;   // their types
  const char* sql;
  bool read_only;     // may run before the session's schema version is known
};

constexpr const char* kSchemaVersionQuery = "SELECT max(version) FROM udon_mcp_schema_version";

// pg_type's OIDs of the parameter types the stores' statements use.
constexpr Oid kText = 25;
constexpr Oid kBigint = 20;
constexpr Oid kAdvisoryKeyTypes[] = {kBigint};

// The advisory locks of both stores, keyed by LabeledAdvisoryKey's number.
constexpr Statement kTryAdvisoryLock{"udon_try_advisory_lock", 1, kAdvisoryKeyTypes,
                                     "SELECT pg_try_advisory_lock($1)", false};
constexpr Statement kAdvisoryUnlock{"udon_advisory_unlock", 1, kAdvisoryKeyTypes, "SELECT pg_advisory_unlock($1)",
                                    false};

struct ClearResult {
  void operator()(PGresult* result) const { PQclear(result); }
};
using PgResult = std::unique_ptr<PGresult, ClearResult>;

inline PgResult Owned(PGresult* raw) { return PgResult(raw); }

// The version a schema-version query answered: 0 for none; nullopt when it failed (no
// schema yet: the table is missing).
inline std::optional<int> VersionOf(const PGresult* result) {
  if (result == nullptr || PQresultStatus(result) != PGRES_TUPLES_OK || PQntuples(result) != 1) return std::nullopt;
  return PQgetisnull(result, 0, 0) ? 0 : std::atoi(PQgetvalue(result, 0, 0));
}

// One libpq session. Never reconnects by itself: a session that ended took its advisory
// locks with it, and whoever holds this object must learn that (StillHeld).
class Connection {
 public:
  Connection(PGconn* conn, std::atomic<std::uint64_t>& round_trips) : conn_(conn), round_trips_(round_trips) {}
  ~Connection() { PQfinish(conn_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool ok() const { return !broken_ && PQstatus(conn_) == CONNECTION_OK; }
  // libpq prints the server's notices on stderr by default: server text never reaches
  // udon-mcp's output.
  void Silence() { PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr); }
  // Whether the session's schema version was found to be this binary's.
  bool ready() const { return ready_; }
  void MarkReady() { ready_ = true; }

  // Runs one statement with text parameters (a simple statement of the migration). The
  // result when its status is `expected`, else nullptr (the server's error text is never
  // kept: it may echo values).
  PgResult Exec(const char* sql, const std::vector<std::string>& params, ExecStatusType expected = PGRES_TUPLES_OK) {
    std::vector<const char*> values;
    for (const std::string& p : params) values.push_back(p.c_str());
    ++round_trips_;
    PgResult result = Owned(
        PQexecParams(conn_, sql, static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0));
    if (!result || PQresultStatus(result.get()) != expected) result.reset();
    return result;
  }
  bool Command(const char* sql, const std::vector<std::string>& params = {}) {
    return Exec(sql, params, PGRES_COMMAND_OK) != nullptr;
  }
  // LISTEN on `channel`, then the socket to wait on (-1: refused).
  int Listen(const char* channel) {
    const std::string sql = std::string("LISTEN ") + channel;
    return Command(sql.c_str()) ? PQsocket(conn_) : -1;
  }
  // The payloads of the notices that arrived; false once the session is lost.
  bool TakeNotices(std::vector<std::string>& payloads) {
    if (PQconsumeInput(conn_) != 1) return false;
    while (PGnotify* notice = PQnotifies(conn_)) {
      payloads.emplace_back(notice->extra);
      PQfreemem(notice);
    }
    return PQstatus(conn_) == CONNECTION_OK;
  }
  // The schema's version, one round trip.
  std::optional<int> SchemaVersion() {
    ++round_trips_;
    return VersionOf(Owned(PQexec(conn_, kSchemaVersionQuery)).get());
  }

  // Runs `statement` (prepared in the same round trip when this session has not prepared
  // it yet). As Exec: the result when its status is `expected`, else nullptr.
  PgResult Run(const Statement& statement, const std::vector<std::string>& params,
               ExecStatusType expected = PGRES_TUPLES_OK) {
    return Pipeline(false, statement, params, expected).result;
  }
  // A session's first round trip: its schema's version, and `statement` run (prepared
  // first) in the same round trip. The result counts only when the version is this
  // binary's: the statement ran before the schema was known to be right.
  struct First {
    std::optional<int> version;
    PgResult result;
  };
  First RunWithVersion(const Statement& statement, const std::vector<std::string>& params,
                       ExecStatusType expected) {
    return Pipeline(true, statement, params, expected);
  }

 private:
  bool Prepared(const Statement& statement) const {
    return std::find(prepared_.begin(), prepared_.end(), statement.name) != prepared_.end();
  }

  // One round trip: the version query when asked, Parse when not yet prepared, then Bind
  // and Execute, and one Sync. A statement the server refused is a null result; a session
  // whose messages did not all come back is broken (ok() is false from then on).
  First Pipeline(bool version, const Statement& statement, const std::vector<std::string>& params,
                 ExecStatusType expected) {
    First out;
    if (broken_) return out;
    std::vector<const char*> values;
    for (const std::string& p : params) values.push_back(p.c_str());
    const bool prepare = !Prepared(statement);
    ++round_trips_;
    bool sent = PQenterPipelineMode(conn_) == 1 &&
                (!version || PQsendQueryParams(conn_, kSchemaVersionQuery, 0, nullptr, nullptr, nullptr, nullptr, 0)) &&
                (!prepare || PQsendPrepare(conn_, statement.name, statement.sql, statement.count, statement.types)) &&
                PQsendQueryPrepared(conn_, statement.name, static_cast<int>(values.size()), values.data(), nullptr,
                                    nullptr, 0) &&
                PQpipelineSync(conn_) == 1;
    if (!sent) return Broken(std::move(out));
    if (version) {
      PgResult answer = Next();
      if (!answer) return Broken(std::move(out));
      out.version = VersionOf(answer.get());
    }
    if (prepare) {
      PgResult prepared = Next();
      if (!prepared) return Broken(std::move(out));
      if (PQresultStatus(prepared.get()) == PGRES_COMMAND_OK) prepared_.push_back(statement.name);
    }
    out.result = Next();
    if (!out.result) return Broken(std::move(out));
    if (PQresultStatus(out.result.get()) != expected) out.result.reset();
    PgResult sync = Owned(PQgetResult(conn_));
    if (!sync || PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC || PQexitPipelineMode(conn_) != 1) {
      return Broken(std::move(out));
    }
    return out;
  }

  // The next query's result in the pipeline (and the null that ends it), or nullptr.
  PgResult Next() {
    PgResult result = Owned(PQgetResult(conn_));
    if (result) {
      while (PGresult* extra = PQgetResult(conn_)) PQclear(extra);
    }
    return result;
  }

  First Broken(First out) {
    broken_ = true;
    out.version.reset();
    out.result.reset();
    return out;
  }

  PGconn* conn_;
  std::atomic<std::uint64_t>& round_trips_;
  bool broken_ = false;
  bool ready_ = false;
  std::vector<const char*> prepared_;  // the names of the statements prepared on this session
};

// Connects one session of a store at `uri`: TCP keepalives on both sides (pg_store.h), the
// store's TLS default, and the connection bounds of internal/connect.h. libpq's result, to be
// checked (PQstatus) by the caller; nullptr when the attempt was abandoned.
PGconn* ConnectSession(const std::string& uri, const StoreTls& tls, int cancel_fd, std::chrono::milliseconds bound);

// "host:pid", the runner a row names.
std::string RunnerId();

// An advisory lock's key: the first 8 bytes of SHA-256 over `label` and `text`, as a
// signed 64-bit integer. Each kind of lock has its own label.
std::int64_t LabeledAdvisoryKey(std::string_view label, std::string_view text);

// pg_try_advisory_lock(KEY) on CONNECTION: whether it was taken; nullopt when the statement failed.
std::optional<bool> TryAdvisoryLock(Connection& connection, const std::string& key);

// Polls `try_once` until it takes the lock (true) or `timeout` passes (false).
// pg_try_advisory_lock in a loop rather than pg_advisory_lock under lock_timeout: the wait
// stays bounded by the policy without a statement left running on a timeout.
template <class Try>
Result<bool> Poll(Try try_once, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    UDON_ASSIGN_OR_RETURN(bool taken, try_once());
    if (taken) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

}  // namespace udon::state_pg
