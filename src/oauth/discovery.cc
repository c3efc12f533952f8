#include "oauth/discovery.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "base/ascii.h"
#include "json/json.h"

namespace udon::oauth {
namespace {

constexpr std::size_t kMaxMetadataBytes = 256 * 1024;

Error UrlInvalid(const char* why) { return MakeError("auth.url_invalid", why); }

Error MetadataInvalid(const std::string& pointer) {
  return MakeError("auth.metadata_invalid", "the server's OAuth metadata is not what the RFC describes", pointer);
}

bool IsHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_';
}

Result<int> ParsePort(std::string_view digits) {
  if (digits.empty() || digits.size() > 5) return UrlInvalid("the URL's port is not a number from 1 to 65535");
  int port = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return UrlInvalid("the URL's port is not a number from 1 to 65535");
    port = port * 10 + (c - '0');
  }
  if (port < 1 || port > 65535) return UrlInvalid("the URL's port is not a number from 1 to 65535");
  return port;
}

// host[:port] of an authority without user information.
Status ParseAuthority(std::string_view authority, HttpUrl& url) {
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return UrlInvalid("the URL's IPv6 host is not closed");
    url.host = authority.substr(0, close + 1);
    for (char c : url.host.substr(1, url.host.size() - 2)) {
      if (std::isxdigit(static_cast<unsigned char>(c)) == 0 && c != ':' && c != '.') {
        return UrlInvalid("the URL's IPv6 host is not an address");
      }
    }
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return UrlInvalid("the URL's host is followed by something else");
    if (!rest.empty()) port_text = rest.substr(1);
  } else {
    const std::size_t colon = authority.find(':');
    url.host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    if (url.host.empty() || !std::all_of(url.host.begin(), url.host.end(), IsHostChar)) {
      return UrlInvalid("the URL's host is not a host name or address");
    }
  }
  url.host = base::AsciiLower(url.host);
  url.port = url.scheme == "https" ? 443 : 80;
  if (!port_text.empty() || authority.back() == ':') {
    UDON_ASSIGN_OR_RETURN(url.port, ParsePort(port_text));
  }
  return OkStatus();
}

std::string StripTrailingSlashes(std::string path) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path;
}

Result<std::vector<std::string>> StringArray(const json::Value& object, const char* name) {
  std::vector<std::string> out;
  auto it = object.find(name);
  if (it == object.end()) return out;
  if (!it->is_array()) return MetadataInvalid(std::string("/") + name);
  for (const json::Value& item : *it) {
    if (!item.is_string()) return MetadataInvalid(std::string("/") + name);
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<std::optional<std::string>> OptionalString(const json::Value& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end()) return std::optional<std::string>();
  if (!it->is_string()) return MetadataInvalid(std::string("/") + name);
  return std::optional<std::string>(it->get<std::string>());
}

Result<std::string> RequiredString(const json::Value& object, const char* name) {
  UDON_ASSIGN_OR_RETURN(std::optional<std::string> value, OptionalString(object, name));
  if (!value || value->empty()) return MetadataInvalid(std::string("/") + name);
  return *value;
}

Result<bool> OptionalBool(const json::Value& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end()) return false;
  if (!it->is_boolean()) return MetadataInvalid(std::string("/") + name);
  return it->get<bool>();
}

Result<json::Value> ParseMetadataObject(std::string_view bytes) {
  json::ParseOptions options;
  options.max_bytes = kMaxMetadataBytes;
  options.max_depth = 16;
  Result<json::Value> parsed = json::Parse(bytes, options);
  if (!parsed.ok() || !parsed->is_object()) return MetadataInvalid("");
  return parsed;
}

// An endpoint the user's browser or udon-mcp sends secrets to: https, or http on loopback.
Status CheckEndpoint(const std::string& url, const char* member) {
  Result<HttpUrl> parsed = ParseHttpUrl(url);
  if (!parsed.ok()) return MetadataInvalid(std::string("/") + member);
  if (parsed->scheme != "https" && !parsed->IsLoopback()) {
    return MakeError("auth.insecure_endpoint", "an OAuth endpoint is plain http off this machine",
                     std::string("/") + member);
  }
  return OkStatus();
}

}  // namespace

std::string HttpUrl::Origin() const {
  const bool default_port = (scheme == "https" && port == 443) || (scheme == "http" && port == 80);
  return scheme + "://" + host + (default_port ? "" : ":" + std::to_string(port));
}

bool HttpUrl::IsLoopback() const {
  if (host == "localhost" || host == "[::1]") return true;
  // 127.a.b.c, four decimal parts: a name such as 127.evil.example is not an address.
  int parts = 0;
  std::size_t begin = 0;
  for (std::size_t end = 0; end <= host.size(); ++end) {
    if (end < host.size() && host[end] != '.') {
      if (host[end] < '0' || host[end] > '9') return false;
      continue;
    }
    if (end == begin || end - begin > 3 || std::stoi(host.substr(begin, end - begin)) > 255) return false;
    ++parts;
    begin = end + 1;
  }
  return parts == 4 && host.rfind("127.", 0) == 0;
}

Result<HttpUrl> ParseHttpUrl(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return UrlInvalid("the URL has spaces or control characters");
  }
  if (text.find('#') != std::string_view::npos) return UrlInvalid("the URL has a fragment");
  const std::size_t sep = text.find("://");
  if (sep == std::string_view::npos) return UrlInvalid("the URL is not absolute");
  HttpUrl url;
  url.scheme = base::AsciiLower(text.substr(0, sep));
  if (url.scheme != "http" && url.scheme != "https") return UrlInvalid("the URL is not http or https");
  std::string_view rest = text.substr(sep + 3);
  const std::size_t authority_end = std::min(rest.find('/'), rest.find('?'));
  std::string_view authority = rest.substr(0, authority_end);
  if (authority.empty()) return UrlInvalid("the URL has no host");
  if (authority.find('@') != std::string_view::npos) return UrlInvalid("the URL carries user information");
  UDON_RETURN_IF_ERROR(ParseAuthority(authority, url));
  if (authority_end == std::string_view::npos) return url;
  rest = rest.substr(authority_end);
  const std::size_t query = rest.find('?');
  url.path = rest.substr(0, query);
  if (query != std::string_view::npos) url.query = rest.substr(query + 1);
  return url;
}

Result<std::string> CanonicalResource(std::string_view server_url) {
  UDON_ASSIGN_OR_RETURN(HttpUrl url, ParseHttpUrl(server_url));
  return url.Origin() + StripTrailingSlashes(url.path);
}

Result<std::string> CheckResourceMetadataUrl(std::string_view metadata_url, std::string_view server_url) {
  UDON_ASSIGN_OR_RETURN(HttpUrl metadata, ParseHttpUrl(metadata_url));
  UDON_ASSIGN_OR_RETURN(HttpUrl server, ParseHttpUrl(server_url));
  if (metadata.Origin() != server.Origin()) {
    return MakeError("auth.metadata_foreign", "the server's 401 points at another host's resource metadata");
  }
  return std::string(metadata_url);
}

std::vector<std::string> ProtectedResourceMetadataUrls(const HttpUrl& server) {
  const std::string root = server.Origin() + "/.well-known/oauth-protected-resource";
  const std::string path = StripTrailingSlashes(server.path);
  if (path.empty()) return {root};
  return {root + path, root};
}

Result<ProtectedResource> ParseProtectedResourceMetadata(std::string_view bytes, std::string_view server_url) {
  UDON_ASSIGN_OR_RETURN(json::Value object, ParseMetadataObject(bytes));
  ProtectedResource out;
  UDON_ASSIGN_OR_RETURN(out.resource, RequiredString(object, "resource"));
  UDON_ASSIGN_OR_RETURN(out.authorization_servers, StringArray(object, "authorization_servers"));
  UDON_ASSIGN_OR_RETURN(out.scopes_supported, StringArray(object, "scopes_supported"));
  if (out.authorization_servers.empty()) return MetadataInvalid("/authorization_servers");
  UDON_ASSIGN_OR_RETURN(HttpUrl server, ParseHttpUrl(server_url));
  Result<HttpUrl> resource = ParseHttpUrl(out.resource);
  const Error mismatch = MakeError("auth.resource_mismatch",
                                   "the protected resource metadata describes another server than the one configured",
                                   "/resource");
  if (!resource.ok() || !resource->query.empty() || resource->Origin() != server.Origin()) return mismatch;
  const std::string prefix = StripTrailingSlashes(resource->path);
  const std::string path = StripTrailingSlashes(server.path);
  // A prefix at a segment boundary: /mcp covers /mcp and /mcp/x, never /mcpx.
  if (!(path == prefix || (path.rfind(prefix + "/", 0) == 0))) return mismatch;
  return out;
}

Result<std::vector<std::string>> AuthorizationServerMetadataUrls(std::string_view issuer) {
  UDON_ASSIGN_OR_RETURN(HttpUrl url, ParseHttpUrl(issuer));
  if (!url.query.empty() || issuer.find('?') != std::string_view::npos) {
    return UrlInvalid("an issuer has no query");
  }
  const std::string origin = url.Origin();
  const std::string path = StripTrailingSlashes(url.path);
  if (path.empty()) {
    return std::vector<std::string>{origin + "/.well-known/oauth-authorization-server",
                                    origin + "/.well-known/openid-configuration"};
  }
  return std::vector<std::string>{origin + "/.well-known/oauth-authorization-server" + path,
                                  origin + "/.well-known/openid-configuration" + path,
                                  origin + path + "/.well-known/openid-configuration"};
}

Result<AuthorizationServer> ParseAuthorizationServerMetadata(std::string_view bytes, std::string_view expected_issuer) {
  UDON_ASSIGN_OR_RETURN(json::Value object, ParseMetadataObject(bytes));
  AuthorizationServer out;
  UDON_ASSIGN_OR_RETURN(out.issuer, RequiredString(object, "issuer"));
  if (out.issuer != expected_issuer) {
    return MakeError("auth.issuer_mismatch", "the authorization server metadata names another issuer than the one asked",
                     "/issuer");
  }
  UDON_RETURN_IF_ERROR(CheckEndpoint(out.issuer, "issuer"));
  UDON_ASSIGN_OR_RETURN(out.authorization_endpoint, RequiredString(object, "authorization_endpoint"));
  UDON_ASSIGN_OR_RETURN(out.token_endpoint, RequiredString(object, "token_endpoint"));
  UDON_ASSIGN_OR_RETURN(out.registration_endpoint, OptionalString(object, "registration_endpoint"));
  UDON_RETURN_IF_ERROR(CheckEndpoint(out.authorization_endpoint, "authorization_endpoint"));
  UDON_RETURN_IF_ERROR(CheckEndpoint(out.token_endpoint, "token_endpoint"));
  if (out.registration_endpoint) UDON_RETURN_IF_ERROR(CheckEndpoint(*out.registration_endpoint, "registration_endpoint"));
  UDON_ASSIGN_OR_RETURN(out.scopes_supported, StringArray(object, "scopes_supported"));
  UDON_ASSIGN_OR_RETURN(out.token_endpoint_auth_methods_supported,
                        StringArray(object, "token_endpoint_auth_methods_supported"));
  UDON_ASSIGN_OR_RETURN(std::vector<std::string> methods, StringArray(object, "code_challenge_methods_supported"));
  if (std::find(methods.begin(), methods.end(), "S256") == methods.end()) {
    return MakeError("auth.pkce_unsupported",
                     "the authorization server does not list PKCE S256, which MCP requires; udon-mcp does not log in there",
                     "/code_challenge_methods_supported");
  }
  UDON_ASSIGN_OR_RETURN(out.client_id_metadata_document_supported,
                        OptionalBool(object, "client_id_metadata_document_supported"));
  UDON_ASSIGN_OR_RETURN(out.authorization_response_iss_parameter_supported,
                        OptionalBool(object, "authorization_response_iss_parameter_supported"));
  return out;
}

std::optional<std::string> SelectScope(const std::optional<BearerChallenge>& challenge,
                                       const ProtectedResource& resource) {
  if (challenge && challenge->scope && !challenge->scope->empty()) return challenge->scope;
  if (resource.scopes_supported.empty()) return std::nullopt;
  std::string joined;
  for (const std::string& scope : resource.scopes_supported) joined += (joined.empty() ? "" : " ") + scope;
  return joined;
}

}  // namespace udon::oauth
