#include "state_pg/token_store.h"

#include <libpq-fe.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "base/aead.h"
#include "base/key_file.h"
#include "base/sha256.h"
#include "gate/state.h"
#include "state_pg/internal/session.h"
#include "state_pg/uri.h"

namespace udon::state_pg {

struct PostgresTokenStore::Row {
  std::string issuer;
  std::string resource;
  std::string key_id;
  std::string nonce_hex;
  std::string sealed_hex;
};

namespace {

constexpr Oid kLoginKeyTypes[] = {kText, kText};  // issuer, resource
constexpr Oid kSaveTypes[] = {kText, kText, kText, kText, kText, kText};

constexpr Statement kLoad{"udon_oauth_load", 2, kLoginKeyTypes,
                          "SELECT issuer, resource, key_id, encode(nonce, 'hex'), encode(sealed, 'hex')"
                          " FROM udon_mcp_oauth_logins WHERE issuer = $1 AND resource = $2",
                          true};
constexpr Statement kList{"udon_oauth_list", 0, nullptr,
                          "SELECT issuer, resource, key_id, encode(nonce, 'hex'), encode(sealed, 'hex')"
                          " FROM udon_mcp_oauth_logins ORDER BY issuer, resource",
                          true};
constexpr Statement kSave{
    "udon_oauth_save", 6, kSaveTypes,
    "INSERT INTO udon_mcp_oauth_logins (issuer, resource, key_id, nonce, sealed, runner)"
    " VALUES ($1, $2, $3, decode($4, 'hex'), decode($5, 'hex'), $6)"
    " ON CONFLICT (issuer, resource) DO UPDATE SET key_id = excluded.key_id, nonce = excluded.nonce,"
    " sealed = excluded.sealed, updated_at = now(), runner = excluded.runner",
    false};
constexpr Statement kRemove{"udon_oauth_remove", 2, kLoginKeyTypes,
                            "DELETE FROM udon_mcp_oauth_logins WHERE issuer = $1 AND resource = $2", false};

// Created once per database, serialized across runners by a transaction-level advisory
// lock in the state schema's own key space (pg_store.cc's migration lock is (…, 1)).
constexpr const char* kCreateLock = "SELECT pg_advisory_xact_lock(1970300014, 2)";
constexpr const char* kCreateTable =
    "CREATE TABLE IF NOT EXISTS udon_mcp_oauth_logins ("
    " issuer text NOT NULL, resource text NOT NULL, key_id text NOT NULL, nonce bytea NOT NULL,"
    " sealed bytea NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(), runner text NOT NULL,"
    " PRIMARY KEY (issuer, resource))";

constexpr const char* kKeyIdLabel = "udon-mcp oauth token key id\n";
constexpr const char* kSealLabel = "udon-mcp oauth login v1\n";
constexpr const char* kRefreshLockLabel = "udon-mcp oauth refresh\n";
constexpr const char* kKeyFileName = "oauth-token.key";
constexpr const char* kKeyFileEnv = "UDON_MCP_TOKEN_KEY_FILE";

// What a sealed record is bound to: its row's issuer and resource, the lengths first so no
// two keys share the bytes.
std::string AssociatedData(const oauth::TokenKey& key) {
  return std::string(kSealLabel) + std::to_string(key.issuer.size()) + ":" + key.issuer + key.resource;
}

std::optional<std::string> DecodeHex(const std::string& hex) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string bytes(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const int high = nibble(hex[2 * i]);
    const int low = nibble(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes[i] = static_cast<char>(high * 16 + low);
  }
  return bytes;
}

Error Corrupt() {
  return MakeError("auth.store_corrupt",
                   "a stored login does not open under the token key (altered in the database); run `udon-mcp "
                   "logout` and log in again");
}

Error KeyMismatch(const std::string& stored, const std::string& current) {
  Error error = MakeError("auth.store_key_mismatch",
                          "a stored login was sealed with another token key than this runner's; give the key the "
                          "other runners use (--token-key, $UDON_MCP_TOKEN_KEY_FILE), or log in again");
  error.details["storedKeyId"] = stored;
  error.details["keyId"] = current;
  return error;
}

// A key another user of the machine can read is no key: refused, as ssh refuses such a file.
Status CheckKeyPermissions(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return OkStatus();  // ReadKeyFile says why
  if ((info.st_mode & 077) == 0) return OkStatus();
  Error error = MakeError("auth.store_key_unavailable",
                          "the token key file is readable or writable by other users; chmod 600 it");
  error.details["path"] = path;
  return error;
}

}  // namespace

TokenKeySource ResolveTokenKeySource(const std::optional<std::string>& flag, const std::string& state_dir) {
  if (flag) return {*flag, false};
  if (const char* env = std::getenv(kKeyFileEnv); env != nullptr && *env != '\0') return {env, false};
  return {state_dir + "/" + kKeyFileName, true};
}

std::string TokenKeyId(const std::string& key) {
  return "k1:" + base::Sha256Hex(std::string(kKeyIdLabel) + key).substr(0, 16);
}

PostgresTokenStore::PostgresTokenStore(std::string uri, TokenKeySource key, std::chrono::milliseconds connect_bound)
    : uri_(std::move(uri)),
      key_source_(std::move(key)),
      connect_bound_(connect_bound),
      runner_id_(RunnerId()),
      refresh_lock_wait_(std::chrono::seconds(oauth::kRefreshLockWaitSeconds)) {
  auto parsed = ParseConninfo(uri_);
  parseable_ = parsed.ok();
  if (parseable_) tls_ = DecideStoreTls(*parsed, [](const char* name) -> const char* { return std::getenv(name); });
}

PostgresTokenStore::~PostgresTokenStore() = default;

Error PostgresTokenStore::Unavailable(const char* message) const {
  Error error = MakeError("auth.store_unavailable", message);
  error.details["store"] = RedactConninfo(uri_);
  return error;
}

Result<std::unique_ptr<Connection>> PostgresTokenStore::OpenSession() {
  if (!parseable_) return Unavailable("libpq cannot parse the state store's connection string");
  auto connection = std::make_unique<Connection>(ConnectSession(uri_, tls_, -1, connect_bound_), round_trips_);
  if (!connection->ok()) return Unavailable("the state database cannot be reached");
  connection->Silence();
  const bool created = connection->Command("BEGIN") && connection->Exec(kCreateLock, {}) &&
                       connection->Command(kCreateTable) && connection->Command("COMMIT");
  if (!created) return Unavailable("the state database's login table cannot be created");
  return connection;
}

Status PostgresTokenStore::WithSession(const std::function<Status(Connection&)>& work) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (!session_ || !session_->ok()) {
    session_.reset();
    UDON_ASSIGN_OR_RETURN(session_, OpenSession());
  }
  Status done = work(*session_);
  if (done.ok() || session_->ok()) return done;
  // The session ended since its last use (a restarted database): one new session, once.
  // Every statement here is a read, an upsert or a delete: safe to repeat.
  session_.reset();
  UDON_ASSIGN_OR_RETURN(session_, OpenSession());
  return work(*session_);
}

Result<std::string> PostgresTokenStore::Key() {
  std::lock_guard<std::mutex> guard(mutex_);
  if (key_) return *key_;
  const base::KeyFile file{key_source_.path, base::kAeadKeyBytes, "auth.store_key_unavailable",
                           "the token key file"};
  Result<std::string> bytes = [&]() -> Result<std::string> {
    if (!key_source_.create_if_missing) return base::ReadKeyFile(file);
    const std::string dir = std::filesystem::path(key_source_.path).parent_path().string();
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    return base::LoadOrCreateKeyFile(file, dir);
  }();
  if (!bytes.ok()) {
    Error error = std::move(bytes).error();
    error.details["path"] = key_source_.path;
    return error;
  }
  UDON_RETURN_IF_ERROR(CheckKeyPermissions(key_source_.path));
  key_ = std::move(*bytes);
  return *key_;
}

Result<oauth::StoredLogin> PostgresTokenStore::Open(const Row& row) {
  UDON_ASSIGN_OR_RETURN(std::string key, Key());
  const std::string key_id = TokenKeyId(key);
  if (row.key_id != key_id) return KeyMismatch(row.key_id, key_id);
  std::optional<std::string> nonce = DecodeHex(row.nonce_hex);
  std::optional<std::string> sealed = DecodeHex(row.sealed_hex);
  if (!nonce || !sealed || nonce->size() != base::kAeadNonceBytes) return Corrupt();
  const oauth::TokenKey token_key{row.issuer, row.resource};
  UDON_ASSIGN_OR_RETURN(std::optional<std::string> record,
                        base::AeadOpen(key, AssociatedData(token_key), base::Sealed{*nonce, *sealed}));
  if (!record) return Corrupt();
  UDON_ASSIGN_OR_RETURN(oauth::StoredLogin login, oauth::ParseLogin(*record));
  if (!(login.key == token_key)) return Corrupt();
  return login;
}

namespace {

std::vector<std::string> RowValues(const PGresult* rows, int i) {
  std::vector<std::string> values;
  for (int column = 0; column < 5; ++column) values.emplace_back(PQgetvalue(rows, i, column));
  return values;
}

}  // namespace

Result<std::optional<oauth::StoredLogin>> PostgresTokenStore::Load(const oauth::TokenKey& key) {
  std::optional<Row> row;
  UDON_RETURN_IF_ERROR(WithSession([&](Connection& c) -> Status {
    PgResult rows = c.Run(kLoad, {key.issuer, key.resource});
    if (!rows) return Unavailable("the stored logins cannot be read");
    if (PQntuples(rows.get()) == 0) return OkStatus();
    std::vector<std::string> v = RowValues(rows.get(), 0);
    row = Row{v[0], v[1], v[2], v[3], v[4]};
    return OkStatus();
  }));
  if (!row) return std::optional<oauth::StoredLogin>();
  UDON_ASSIGN_OR_RETURN(oauth::StoredLogin login, Open(*row));
  return std::optional<oauth::StoredLogin>(std::move(login));
}

Result<std::vector<oauth::StoredLogin>> PostgresTokenStore::List() {
  std::vector<Row> rows;
  UDON_RETURN_IF_ERROR(WithSession([&](Connection& c) -> Status {
    PgResult result = c.Run(kList, {});
    if (!result) return Unavailable("the stored logins cannot be read");
    for (int i = 0; i < PQntuples(result.get()); ++i) {
      std::vector<std::string> v = RowValues(result.get(), i);
      rows.push_back(Row{v[0], v[1], v[2], v[3], v[4]});
    }
    return OkStatus();
  }));
  std::vector<oauth::StoredLogin> logins;
  for (const Row& row : rows) {
    UDON_ASSIGN_OR_RETURN(oauth::StoredLogin login, Open(row));
    logins.push_back(std::move(login));
  }
  return logins;
}

Status PostgresTokenStore::Save(const oauth::StoredLogin& login) {
  UDON_ASSIGN_OR_RETURN(std::string key, Key());
  UDON_ASSIGN_OR_RETURN(base::Sealed sealed,
                        base::AeadSeal(key, AssociatedData(login.key), oauth::SerializeLogin(login)));
  const std::vector<std::string> params = {login.key.issuer, login.key.resource, TokenKeyId(key),
                                           gate::HexName(sealed.nonce), gate::HexName(sealed.ciphertext),
                                           runner_id_};
  return WithSession([&](Connection& c) -> Status {
    if (c.Run(kSave, params, PGRES_COMMAND_OK)) return OkStatus();
    return Unavailable("the login cannot be stored");
  });
}

Status PostgresTokenStore::Remove(const oauth::TokenKey& key) {
  return WithSession([&](Connection& c) -> Status {
    if (c.Run(kRemove, {key.issuer, key.resource}, PGRES_COMMAND_OK)) return OkStatus();
    return Unavailable("the login cannot be removed");
  });
}

Status PostgresTokenStore::WithRefreshLock(const oauth::TokenKey& key, const std::function<Status()>& fn) {
  // A session of its own, ended below whatever fn does: the lock never outlives the call.
  UDON_ASSIGN_OR_RETURN(std::unique_ptr<Connection> session, OpenSession());
  const std::string lock_key =
      std::to_string(LabeledAdvisoryKey(kRefreshLockLabel, std::to_string(key.issuer.size()) + ":" + key.issuer +
                                                               key.resource));
  UDON_ASSIGN_OR_RETURN(bool taken, Poll(
                                        [&]() -> Result<bool> {
                                          std::optional<bool> once = TryAdvisoryLock(*session, lock_key);
                                          if (!once) return Unavailable("the refresh lock cannot be taken");
                                          if (!*once) ++refresh_lock_busy_;
                                          return *once;
                                        },
                                        refresh_lock_wait_));
  if (!taken) {
    Error error = MakeError("auth.refresh_lock_timeout", "another process held the login's refresh lock too long");
    error.details["timeoutSeconds"] = std::chrono::duration<double>(refresh_lock_wait_).count();
    return error;
  }
  Status done = fn();
  session->Run(kAdvisoryUnlock, {lock_key});
  return done;
}

}  // namespace udon::state_pg
