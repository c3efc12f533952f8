// Where a login lives between runs (issue 39): one record per authorization server
// `issuer` and protected resource, as MCP 2026-07-28 requires. Two stores implement it: the
// file store below (a 0600 file per key under the state directory, the default) and the
// PostgreSQL store of `--state postgres://` (state_pg), which keeps the same JSON record
// (SerializeLogin) encrypted with a key that is not in the database.
//
// The record is the one serialization both stores keep; see SerializeLogin for its shape.
// A store never logs, and its errors never carry, a token, a client secret or the record.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace udon::oauth {

// What a login is for. `issuer` is the authorization server's issuer exactly as its
// metadata gives it (and as it was checked against the URL it was fetched for);
// `resource` the canonical URL of the MCP server (CanonicalResource: lower-case scheme and
// host, no default port, no fragment, no trailing slash unless the path is "/").
struct TokenKey {
  std::string issuer;
  std::string resource;
  bool operator==(const TokenKey&) const = default;
};

// How udon-mcp identified itself to the authorization server.
enum class ClientKind {
  kManual,            // client_id (and secret, port) from the runtime configuration
  kMetadataDocument,  // client_id is the URL of a Client ID Metadata Document
  kDynamic,           // registered by RFC 7591 dynamic client registration
};

// "manual", "metadata_document", "dynamic" (the record's and `auth status`'s words).
std::string_view ClientKindName(ClientKind kind);
std::optional<ClientKind> ParseClientKind(std::string_view name);

struct ClientIdentity {
  ClientKind kind = ClientKind::kDynamic;
  std::string client_id;
  std::optional<std::string> client_secret;  // secret: never logged or shown
  // A fixed loopback redirect port (manual clients registered with one, and dynamic
  // clients reused with the redirect URI they were registered with); nullopt: any free port.
  std::optional<int> redirect_port;
  // Dynamic registration only: what reusing the registration needs.
  std::optional<std::string> registration_client_uri;
  std::optional<std::string> registration_access_token;  // secret
  std::int64_t client_secret_expires_at = 0;  // Unix seconds; 0 = never (RFC 7591)
  // "none", "client_secret_basic" or "client_secret_post".
  std::string token_endpoint_auth_method = "none";
  bool operator==(const ClientIdentity&) const = default;
};

struct StoredLogin {
  TokenKey key;
  ClientIdentity client;
  std::vector<std::string> scopes;  // as granted (the token response's scope, else requested)
  std::string access_token;                  // secret
  std::optional<std::string> refresh_token;  // secret
  std::int64_t expires_at_unix = 0;          // 0 = unknown
  std::string token_type = "Bearer";
  std::int64_t obtained_at_unix = 0;         // when the access token was issued to us
  bool operator==(const StoredLogin&) const = default;
};

// The one serialization of a record (RFC 8785 canonical JSON, UTF-8), kept by both stores:
//   {"version":1,"issuer":"…","resource":"…",
//    "client":{"kind":"manual|metadata_document|dynamic","clientId":"…",
//              "clientSecret":"…"?,"redirectPort":N?,"registrationClientUri":"…"?,
//              "registrationAccessToken":"…"?,"clientSecretExpiresAt":N,
//              "tokenEndpointAuthMethod":"…"},
//    "scopes":["…"],"accessToken":"…","refreshToken":"…"?,"expiresAt":N,
//    "tokenType":"…","obtainedAt":N}
// Optional members are left out when absent. A reader refuses any other version, an
// unknown member or a wrong type (auth.store_corrupt).
std::string SerializeLogin(const StoredLogin& login);
// Errors: auth.store_corrupt (the message never quotes the bytes).
Result<StoredLogin> ParseLogin(std::string_view bytes);

class TokenStore {
 public:
  virtual ~TokenStore() = default;
  // nullopt: no login for that key. Errors: auth.store_unavailable, auth.store_corrupt.
  virtual Result<std::optional<StoredLogin>> Load(const TokenKey& key) = 0;
  // Replaces the record of login.key, durably, before it returns.
  // Errors: auth.store_unavailable.
  virtual Status Save(const StoredLogin& login) = 0;
  // Removing a key that has no record is not an error. Errors: auth.store_unavailable.
  virtual Status Remove(const TokenKey& key) = 0;
  // Every record, in no particular order. Errors: auth.store_unavailable, auth.store_corrupt.
  virtual Result<std::vector<StoredLogin>> List() = 0;
  // Runs fn while holding the key's refresh lock, which one process (and one thread) at a
  // time holds per key, waiting for a holder at most kRefreshLockWait. fn must Load the
  // record again inside the lock: another process may have refreshed (and rotated the
  // refresh token) while this one waited. fn's error is returned as is.
  // Errors: auth.store_unavailable, auth.refresh_lock_timeout, or fn's.
  virtual Status WithRefreshLock(const TokenKey& key, const std::function<Status()>& fn) = 0;
};

// How long WithRefreshLock waits for another refresher: an AS request is bounded well below.
inline constexpr int kRefreshLockWaitSeconds = 60;

// The default store: <state_dir>/oauth/<hex of the key>.json, 0600, written with
// base::WriteSecretFileAtomic; the refresh lock is a flock on <same>.lock beside it.
class FileTokenStore final : public TokenStore {
 public:
  explicit FileTokenStore(std::string state_dir) : state_dir_(std::move(state_dir)) {}
  Result<std::optional<StoredLogin>> Load(const TokenKey& key) override;
  Status Save(const StoredLogin& login) override;
  Status Remove(const TokenKey& key) override;
  Result<std::vector<StoredLogin>> List() override;
  Status WithRefreshLock(const TokenKey& key, const std::function<Status()>& fn) override;

  // The record's path (tests, and `auth status` names the directory).
  std::string PathFor(const TokenKey& key) const;
  std::string Directory() const { return state_dir_ + "/oauth"; }

 private:
  std::string state_dir_;
};

}  // namespace udon::oauth
