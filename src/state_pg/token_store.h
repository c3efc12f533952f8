// The OAuth logins of `--state postgres://…` (issue 39, contract 7.14): runners on many
// machines share one login per authorization server and resource, and refresh it one at a
// time, so a rotating refresh token is spent once.
//
// - Table udon_mcp_oauth_logins, one row per (issuer, resource): the record of
//   oauth::SerializeLogin sealed with AES-256-GCM (base/aead.h) under a key that is not in
//   the database, a fresh nonce per write, the associated data naming the row's issuer and
//   resource (a row copied under another key does not open), and the key's id. A row
//   written under another key is refused (auth.store_key_mismatch), never decrypted into
//   garbage. The table is created by the first token store that uses the database, outside
//   the state schema's version (7.14): runners of earlier versions keep working beside it.
// - The key: 32 random bytes in a file, 0600. By default <state_dir>/oauth-token.key,
//   created on first use; or a file given by --token-key / $UDON_MCP_TOKEN_KEY_FILE, which
//   must exist (a missing one is refused: a new key would hide every login). Runners that
//   share logins share the key file.
// - WithRefreshLock: a session-level advisory lock keyed by a digest of the (issuer,
//   resource), on a session of its own that ends with the call, so an error, a crash or a
//   vanished machine (the keepalive bound, pg_store.h) releases it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "oauth/token_store.h"
#include "state_pg/tls.h"

namespace udon::state_pg {

class Connection;

// Where the token store's key comes from.
struct TokenKeySource {
  std::string path;
  bool create_if_missing = false;  // only the state directory's default file
};

// --token-key FILE (`flag`), else $UDON_MCP_TOKEN_KEY_FILE, else <state_dir>/oauth-token.key
// (created on first use).
TokenKeySource ResolveTokenKeySource(const std::optional<std::string>& flag, const std::string& state_dir);

// "k1:" and the first 16 hex digits of SHA-256 over a fixed label and the key: which key
// sealed a row, never the key.
std::string TokenKeyId(const std::string& key);

class PostgresTokenStore final : public oauth::TokenStore {
 public:
  // Connects lazily, as the state store (pg_store.h): nothing is contacted before the first
  // operation. `connect_bound` as PostgresStateStore's.
  PostgresTokenStore(std::string uri, TokenKeySource key,
                     std::chrono::milliseconds connect_bound = std::chrono::milliseconds(0));
  ~PostgresTokenStore() override;

  // Errors: auth.store_unavailable, auth.store_key_unavailable, auth.store_key_mismatch,
  // auth.store_corrupt.
  Result<std::optional<oauth::StoredLogin>> Load(const oauth::TokenKey& key) override;
  // Errors: auth.store_unavailable, auth.store_key_unavailable.
  Status Save(const oauth::StoredLogin& login) override;
  // Errors: auth.store_unavailable.
  Status Remove(const oauth::TokenKey& key) override;
  // Errors: auth.store_unavailable, auth.store_key_unavailable, auth.store_key_mismatch,
  // auth.store_corrupt.
  Result<std::vector<oauth::StoredLogin>> List() override;
  // Errors: auth.store_unavailable, auth.refresh_lock_timeout, or fn's.
  Status WithRefreshLock(const oauth::TokenKey& key, const std::function<Status()>& fn) override;

  // Tests: how long WithRefreshLock waits (default kRefreshLockWaitSeconds), and how many
  // times a WithRefreshLock of this store found the lock taken.
  void set_refresh_lock_wait(std::chrono::milliseconds wait) { refresh_lock_wait_ = wait; }
  std::uint64_t refresh_lock_busy() const { return refresh_lock_busy_.load(); }

 private:
  struct Row;
  // A connected session with the table in place. Errors: auth.store_unavailable.
  Result<std::unique_ptr<Connection>> OpenSession();
  // Runs `work` on the store's data session (opened, and the table created, on first use).
  Status WithSession(const std::function<Status(Connection&)>& work);
  // The key's bytes, read (or created) once. Errors: auth.store_key_unavailable.
  Result<std::string> Key();
  Result<oauth::StoredLogin> Open(const Row& row);
  Error Unavailable(const char* message) const;

  std::string uri_;
  TokenKeySource key_source_;
  std::chrono::milliseconds connect_bound_;
  bool parseable_ = false;
  StoreTls tls_;
  std::string runner_id_;
  std::mutex mutex_;  // the data session and the key
  std::unique_ptr<Connection> session_;
  std::optional<std::string> key_;
  std::chrono::milliseconds refresh_lock_wait_;
  std::atomic<std::uint64_t> refresh_lock_busy_{0};
  std::atomic<std::uint64_t> round_trips_{0};
};

}  // namespace udon::state_pg
