#include "oauth/token_store.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <system_error>

#include "base/file.h"
#include "base/sha256.h"
#include "json/canonical.h"
#include "json/json.h"

namespace udon::oauth {
namespace {

constexpr int kRecordVersion = 1;
constexpr std::size_t kMaxRecordBytes = 256 * 1024;

Error Corrupt(const std::string& pointer = {}) {
  return MakeError("auth.store_corrupt", "a stored login cannot be read; run `udon-mcp logout` and log in again",
                   pointer);
}

Error Unavailable(const char* what) { return MakeError("auth.store_unavailable", what); }

json::Value ClientJson(const ClientIdentity& client) {
  json::Value out = {{"kind", std::string(ClientKindName(client.kind))},
                     {"clientId", client.client_id},
                     {"clientSecretExpiresAt", client.client_secret_expires_at},
                     {"tokenEndpointAuthMethod", client.token_endpoint_auth_method}};
  if (client.client_secret) out["clientSecret"] = *client.client_secret;
  if (client.redirect_port) out["redirectPort"] = *client.redirect_port;
  if (client.registration_client_uri) out["registrationClientUri"] = *client.registration_client_uri;
  if (client.registration_access_token) out["registrationAccessToken"] = *client.registration_access_token;
  return out;
}

// Reads the members of `object` by name, refusing unknown ones and wrong types.
class Reader {
 public:
  Reader(const json::Value& object, std::string pointer) : object_(object), pointer_(std::move(pointer)) {}

  Status CheckMembers(std::initializer_list<std::string_view> known) const {
    if (!object_.is_object()) return Corrupt(pointer_);
    for (const auto& [name, value] : object_.items()) {
      bool found = false;
      for (std::string_view k : known) found = found || k == name;
      if (!found) return Corrupt(pointer_ + "/" + name);
    }
    return OkStatus();
  }
  Result<std::string> String(const char* name) const {
    auto it = object_.find(name);
    if (it == object_.end() || !it->is_string()) return Corrupt(pointer_ + "/" + name);
    return it->get<std::string>();
  }
  Result<std::optional<std::string>> OptionalString(const char* name) const {
    if (!object_.contains(name)) return std::optional<std::string>();
    UDON_ASSIGN_OR_RETURN(std::string value, String(name));
    return std::optional<std::string>(std::move(value));
  }
  Result<std::int64_t> Integer(const char* name) const {
    auto it = object_.find(name);
    if (it == object_.end() || !it->is_number_integer()) return Corrupt(pointer_ + "/" + name);
    return it->get<std::int64_t>();
  }

 private:
  const json::Value& object_;
  std::string pointer_;
};

Result<ClientIdentity> ParseClient(const json::Value& value) {
  Reader reader(value, "/client");
  UDON_RETURN_IF_ERROR(reader.CheckMembers({"kind", "clientId", "clientSecret", "redirectPort",
                                            "registrationClientUri", "registrationAccessToken",
                                            "clientSecretExpiresAt", "tokenEndpointAuthMethod"}));
  ClientIdentity client;
  UDON_ASSIGN_OR_RETURN(std::string kind, reader.String("kind"));
  std::optional<ClientKind> parsed = ParseClientKind(kind);
  if (!parsed) return Corrupt("/client/kind");
  client.kind = *parsed;
  UDON_ASSIGN_OR_RETURN(client.client_id, reader.String("clientId"));
  UDON_ASSIGN_OR_RETURN(client.client_secret, reader.OptionalString("clientSecret"));
  if (value.contains("redirectPort")) {
    UDON_ASSIGN_OR_RETURN(std::int64_t port, reader.Integer("redirectPort"));
    if (port < 1 || port > 65535) return Corrupt("/client/redirectPort");
    client.redirect_port = static_cast<int>(port);
  }
  UDON_ASSIGN_OR_RETURN(client.registration_client_uri, reader.OptionalString("registrationClientUri"));
  UDON_ASSIGN_OR_RETURN(client.registration_access_token, reader.OptionalString("registrationAccessToken"));
  UDON_ASSIGN_OR_RETURN(client.client_secret_expires_at, reader.Integer("clientSecretExpiresAt"));
  UDON_ASSIGN_OR_RETURN(client.token_endpoint_auth_method, reader.String("tokenEndpointAuthMethod"));
  return client;
}

Result<std::vector<std::string>> ParseScopes(const json::Value& record) {
  auto it = record.find("scopes");
  if (it == record.end() || !it->is_array()) return Corrupt("/scopes");
  std::vector<std::string> scopes;
  for (const json::Value& scope : *it) {
    if (!scope.is_string()) return Corrupt("/scopes");
    scopes.push_back(scope.get<std::string>());
  }
  return scopes;
}

std::string KeyText(const TokenKey& key) { return key.issuer + '\n' + key.resource; }

Status EnsureDirectory(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) return Unavailable("cannot create the login directory in the state directory");
  // Owner only: the names say which servers this user logs in to.
  if (::chmod(path.c_str(), 0700) != 0) return Unavailable("cannot restrict the login directory");
  return OkStatus();
}

}  // namespace

std::string_view ClientKindName(ClientKind kind) {
  switch (kind) {
    case ClientKind::kManual: return "manual";
    case ClientKind::kMetadataDocument: return "metadata_document";
    case ClientKind::kDynamic: return "dynamic";
  }
  return "dynamic";
}

std::optional<ClientKind> ParseClientKind(std::string_view name) {
  if (name == "manual") return ClientKind::kManual;
  if (name == "metadata_document") return ClientKind::kMetadataDocument;
  if (name == "dynamic") return ClientKind::kDynamic;
  return std::nullopt;
}

std::string SerializeLogin(const StoredLogin& login) {
  json::Value record = {{"version", kRecordVersion},
                        {"issuer", login.key.issuer},
                        {"resource", login.key.resource},
                        {"client", ClientJson(login.client)},
                        {"scopes", login.scopes},
                        {"accessToken", login.access_token},
                        {"expiresAt", login.expires_at_unix},
                        {"tokenType", login.token_type},
                        {"obtainedAt", login.obtained_at_unix}};
  if (login.refresh_token) record["refreshToken"] = *login.refresh_token;
  // Strings and integers only: canonicalization cannot fail.
  Result<std::string> canonical = json::Canonicalize(record);
  return canonical.ok() ? std::move(canonical).value() : record.dump();
}

Result<StoredLogin> ParseLogin(std::string_view bytes) {
  json::ParseOptions options;
  options.max_bytes = kMaxRecordBytes;
  options.max_depth = 8;
  Result<json::Value> parsed = json::Parse(bytes, options);
  if (!parsed.ok()) return Corrupt();
  const json::Value& record = *parsed;
  Reader reader(record, "");
  UDON_RETURN_IF_ERROR(reader.CheckMembers({"version", "issuer", "resource", "client", "scopes", "accessToken",
                                            "refreshToken", "expiresAt", "tokenType", "obtainedAt"}));
  UDON_ASSIGN_OR_RETURN(std::int64_t version, reader.Integer("version"));
  if (version != kRecordVersion) return Corrupt("/version");
  StoredLogin login;
  UDON_ASSIGN_OR_RETURN(login.key.issuer, reader.String("issuer"));
  UDON_ASSIGN_OR_RETURN(login.key.resource, reader.String("resource"));
  if (!record.contains("client")) return Corrupt("/client");
  UDON_ASSIGN_OR_RETURN(login.client, ParseClient(record["client"]));
  UDON_ASSIGN_OR_RETURN(login.scopes, ParseScopes(record));
  UDON_ASSIGN_OR_RETURN(login.access_token, reader.String("accessToken"));
  UDON_ASSIGN_OR_RETURN(login.refresh_token, reader.OptionalString("refreshToken"));
  UDON_ASSIGN_OR_RETURN(login.expires_at_unix, reader.Integer("expiresAt"));
  UDON_ASSIGN_OR_RETURN(login.token_type, reader.String("tokenType"));
  UDON_ASSIGN_OR_RETURN(login.obtained_at_unix, reader.Integer("obtainedAt"));
  return login;
}

std::string FileTokenStore::PathFor(const TokenKey& key) const {
  // A digest, not the URLs: a name of fixed length that says nothing about the server.
  return Directory() + "/" + base::Sha256Hex(KeyText(key)) + ".json";
}

Result<std::optional<StoredLogin>> FileTokenStore::Load(const TokenKey& key) {
  const std::string path = PathFor(key);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    if (error) return Unavailable("cannot look for the stored login");
    return std::optional<StoredLogin>();
  }
  Result<std::string> bytes = base::ReadFile(path, kMaxRecordBytes);
  if (!bytes.ok()) return Unavailable("cannot read the stored login");
  UDON_ASSIGN_OR_RETURN(StoredLogin login, ParseLogin(*bytes));
  // The file name is a digest of the key: a record under another key's name was moved.
  if (login.key != key) return Corrupt();
  return std::optional<StoredLogin>(std::move(login));
}

Status FileTokenStore::Save(const StoredLogin& login) {
  UDON_RETURN_IF_ERROR(EnsureDirectory(Directory()));
  if (!base::WriteSecretFileAtomic(PathFor(login.key), SerializeLogin(login)).ok()) {
    return Unavailable("cannot write the stored login");
  }
  return OkStatus();
}

Status FileTokenStore::Remove(const TokenKey& key) {
  std::error_code error;
  std::filesystem::remove(PathFor(key), error);
  if (error) return Unavailable("cannot remove the stored login");
  return OkStatus();
}

Result<std::vector<StoredLogin>> FileTokenStore::List() {
  std::vector<StoredLogin> logins;
  std::error_code error;
  if (!std::filesystem::exists(Directory(), error)) return logins;
  for (const auto& entry : std::filesystem::directory_iterator(Directory(), error)) {
    if (entry.path().extension() != ".json") continue;
    Result<std::string> bytes = base::ReadFile(entry.path().string(), kMaxRecordBytes);
    if (!bytes.ok()) return Unavailable("cannot read a stored login");
    UDON_ASSIGN_OR_RETURN(StoredLogin login, ParseLogin(*bytes));
    logins.push_back(std::move(login));
  }
  if (error) return Unavailable("cannot list the stored logins");
  return logins;
}

Status FileTokenStore::WithRefreshLock(const TokenKey& key, const std::function<Status()>& fn) {
  UDON_RETURN_IF_ERROR(EnsureDirectory(Directory()));
  std::string path = PathFor(key);
  path.replace(path.size() - 5, 5, ".lock");
  Result<base::FileLock> lock = base::FileLock::Acquire(path, std::chrono::seconds(kRefreshLockWaitSeconds));
  if (!lock.ok()) {
    if (lock.error().code == "io.locked") {
      return MakeError("auth.refresh_lock_timeout", "another process held the login's refresh lock too long");
    }
    return Unavailable("cannot take the login's refresh lock");
  }
  return fn();
}

}  // namespace udon::oauth
