#include "oauth/login.h"

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <map>
#include <mutex>

#include "mcp/protocol/protocol.h"
#include "oauth/authorization.h"
#include "oauth/loopback.h"
#include "oauth/tokens.h"

extern char** environ;

namespace udon::oauth {
namespace {

// Refresh this long before the stored expiry: a token must not expire in flight.
constexpr std::int64_t kRefreshMarginSeconds = 60;

std::int64_t Now(const std::function<std::int64_t()>& now) {
  return now ? now() : static_cast<std::int64_t>(std::time(nullptr));
}

Error WithCommand(Error error, const std::string& command) {
  error.details["command"] = command;
  return error;
}

// An unauthenticated initialize: what makes a protected server answer 401 and name its
// metadata.
Result<HttpReply> ProbeServer(const std::string& server_url, const HttpLimits& limits) {
  HttpExchange exchange;
  exchange.method = "POST";
  exchange.url = server_url;
  exchange.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"}};
  exchange.body =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},)"
      R"("clientInfo":{"name":"udon-mcp","version":"login"}}})";
  return HttpFetch(exchange, limits);
}

// GET of a metadata document; nullopt for any answer but 200 (404, and the 401/403 a CDN
// gives where a 404 was meant, move discovery on to the next location of the same host).
Result<std::optional<std::string>> FetchMetadata(const std::string& url, const HttpLimits& limits) {
  HttpExchange exchange;
  exchange.url = url;
  exchange.headers = {{"Accept", "application/json"}};
  UDON_ASSIGN_OR_RETURN(HttpReply reply, HttpFetch(exchange, limits));
  if (reply.status != 200) return std::optional<std::string>();
  return std::optional<std::string>(std::move(reply.body));
}

Error MetadataUnavailable(const char* what) {
  return MakeError("auth.metadata_unavailable",
                   std::string("no location gave the ") + what + "; the server may not support MCP authorization");
}

Result<ProtectedResource> DiscoverResource(const std::string& server_url, const std::optional<BearerChallenge>& challenge,
                                           const HttpLimits& limits) {
  std::vector<std::string> locations;
  if (challenge && challenge->resource_metadata) {
    UDON_ASSIGN_OR_RETURN(std::string checked, CheckResourceMetadataUrl(*challenge->resource_metadata, server_url));
    locations.push_back(checked);
  }
  UDON_ASSIGN_OR_RETURN(HttpUrl server, ParseHttpUrl(server_url));
  for (std::string& url : ProtectedResourceMetadataUrls(server)) locations.push_back(std::move(url));
  for (const std::string& url : locations) {
    UDON_ASSIGN_OR_RETURN(std::optional<std::string> body, FetchMetadata(url, limits));
    if (body) return ParseProtectedResourceMetadata(*body, server_url);
  }
  return MetadataUnavailable("protected resource metadata (RFC 9728)");
}

Result<AuthorizationServer> DiscoverAuthorizationServer(const std::string& issuer, const HttpLimits& limits) {
  UDON_ASSIGN_OR_RETURN(HttpUrl parsed, ParseHttpUrl(issuer));
  if (parsed.scheme != "https" && !parsed.IsLoopback()) {
    return MakeError("auth.insecure_endpoint", "the authorization server is plain http off this machine");
  }
  UDON_ASSIGN_OR_RETURN(std::vector<std::string> locations, AuthorizationServerMetadataUrls(issuer));
  for (const std::string& url : locations) {
    UDON_ASSIGN_OR_RETURN(std::optional<std::string> body, FetchMetadata(url, limits));
    if (body) return ParseAuthorizationServerMetadata(*body, issuer);
  }
  return MetadataUnavailable("authorization server metadata (RFC 8414 or OpenID Connect discovery)");
}

// Authorization server metadata per issuer, kept for the process once fetched and checked
// (its issuer equal to the one asked for): a refresh is then one request, the token's.
Result<AuthorizationServer> CachedAuthorizationServer(const std::string& issuer, const HttpLimits& limits) {
  static std::mutex mutex;
  static std::map<std::string, AuthorizationServer> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(issuer); it != cache.end()) return it->second;
  }
  UDON_ASSIGN_OR_RETURN(AuthorizationServer server, DiscoverAuthorizationServer(issuer, limits));
  std::lock_guard<std::mutex> lock(mutex);
  cache.insert_or_assign(issuer, server);
  return server;
}

std::string AuthMethodFor(const AuthorizationServer& server, bool has_secret) {
  if (!has_secret) return "none";
  const auto& methods = server.token_endpoint_auth_methods_supported;
  // RFC 8414: absent means client_secret_basic.
  if (methods.empty() || std::find(methods.begin(), methods.end(), "client_secret_basic") != methods.end()) {
    return "client_secret_basic";
  }
  return "client_secret_post";
}

// The configured client or the metadata document's; nullopt: register dynamically.
std::optional<ClientIdentity> ConfiguredClient(const mcp::OAuthSettings& settings, const AuthorizationServer& server) {
  ClientIdentity client;
  client.redirect_port = settings.redirect_port;
  if (settings.client_id) {
    client.kind = ClientKind::kManual;
    client.client_id = *settings.client_id;
    client.client_secret = settings.client_secret;
    client.token_endpoint_auth_method = AuthMethodFor(server, settings.client_secret.has_value());
    return client;
  }
  if (settings.client_metadata_url && server.client_id_metadata_document_supported) {
    client.kind = ClientKind::kMetadataDocument;
    client.client_id = *settings.client_metadata_url;
    return client;
  }
  return std::nullopt;
}

Result<ClientIdentity> RegisterClient(const AuthorizationServer& server, const std::string& redirect_uri, int port,
                                      const std::optional<std::string>& scope, const HttpLimits& limits) {
  if (!server.registration_endpoint) {
    return MakeError("auth.client_unavailable",
                     "the authorization server offers no dynamic registration: register udon-mcp there and set the "
                     "entry's oauth.clientId (and redirectPort)");
  }
  HttpExchange exchange;
  exchange.method = "POST";
  exchange.url = *server.registration_endpoint;
  exchange.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
  exchange.body = RegistrationRequestBody(redirect_uri, scope);
  UDON_ASSIGN_OR_RETURN(HttpReply reply, HttpFetch(exchange, limits));
  UDON_ASSIGN_OR_RETURN(ClientIdentity client, ParseRegistrationResponse(reply.status, reply.body));
  client.redirect_port = port;
  return client;
}

void OpenBrowser(const std::string& url) {
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((display == nullptr || *display == '\0') && (wayland == nullptr || *wayland == '\0')) return;
  pid_t pid = 0;
  char* argv[] = {const_cast<char*>("xdg-open"), const_cast<char*>(url.c_str()), nullptr};
  if (posix_spawnp(&pid, "xdg-open", nullptr, nullptr, argv, environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);  // xdg-open hands the URL over and exits
  }
}

struct Authorized {
  ClientIdentity client;
  std::string code;
  std::string verifier;
  std::string redirect_uri;
};

// Listener, client, PKCE and state, the browser, and the one redirect.
Result<Authorized> Authorize(const LoginOptions& options, const AuthorizationServer& server, const std::string& resource,
                             const std::optional<std::string>& scope, const std::optional<StoredLogin>& previous) {
  std::optional<ClientIdentity> client = ConfiguredClient(options.settings, server);
  // A dynamic registration is reused with the port it was registered with, when free.
  if (!client && previous && previous->client.kind == ClientKind::kDynamic && previous->client.redirect_port) {
    client = previous->client;
  }
  Result<LoopbackListener> listener = LoopbackListener::Open(client && client->redirect_port ? *client->redirect_port : 0);
  if (!listener.ok() && client && client->kind == ClientKind::kDynamic) {
    client.reset();
    listener = LoopbackListener::Open(0);
  }
  if (!listener.ok()) return std::move(listener).error();
  Authorized out;
  out.redirect_uri = listener->RedirectUri();
  if (!client) {
    UDON_ASSIGN_OR_RETURN(client, RegisterClient(server, out.redirect_uri, listener->port(), scope, options.limits));
  }
  out.client = *client;
  UDON_ASSIGN_OR_RETURN(Pkce pkce, MakePkce());
  UDON_ASSIGN_OR_RETURN(std::string state, MakeState());
  AuthorizationRequest request{server.authorization_endpoint, out.client.client_id, out.redirect_uri, pkce.challenge,
                               state, scope, std::nullopt};
  if (options.settings.send_resource) request.resource = resource;
  const std::string url = AuthorizationUrl(request);
  if (options.show) options.show("udon-mcp: open this URL to log in: " + url);
  if (options.open_browser) OpenBrowser(url);
  UDON_ASSIGN_OR_RETURN(std::string target,
                        listener->AcceptOne(std::chrono::steady_clock::now() + options.timeout));
  // RFC 9207's iss: checked when advertised, and always required under 2026-07-28.
  const bool modern = options.protocol_version && mcp::IsModernProtocolVersion(*options.protocol_version);
  RedirectExpectation expected{kCallbackPath, state, server.issuer,
                               server.authorization_response_iss_parameter_supported || modern};
  UDON_ASSIGN_OR_RETURN(out.code, ParseAuthorizationResponse(target, expected));
  out.verifier = std::move(pkce.verifier);
  return out;
}

}  // namespace

Result<std::optional<StoredLogin>> FindLogin(TokenStore& store, const std::string& server_url) {
  UDON_ASSIGN_OR_RETURN(std::string resource, CanonicalResource(server_url));
  UDON_ASSIGN_OR_RETURN(std::vector<StoredLogin> logins, store.List());
  std::optional<StoredLogin> found;
  for (StoredLogin& login : logins) {
    // The newest login for the resource wins (a server that moved to another issuer).
    if (login.key.resource == resource && (!found || login.obtained_at_unix > found->obtained_at_unix)) {
      found = std::move(login);
    }
  }
  return found;
}

Result<StoredLogin> Login(const LoginOptions& options, TokenStore& store) {
  UDON_ASSIGN_OR_RETURN(std::string resource, CanonicalResource(options.server_url));
  UDON_ASSIGN_OR_RETURN(HttpReply probe, ProbeServer(options.server_url, options.limits));
  if (probe.status != 401 && probe.status != 403) {
    Error error = MakeError("auth.not_required", "the server answered without asking for a login");
    error.details["status"] = probe.status;
    return error;
  }
  const std::optional<BearerChallenge> challenge = ParseWwwAuthenticate(probe.www_authenticate);
  UDON_ASSIGN_OR_RETURN(ProtectedResource metadata, DiscoverResource(options.server_url, challenge, options.limits));
  const std::string& issuer = metadata.authorization_servers.front();
  UDON_ASSIGN_OR_RETURN(AuthorizationServer server, DiscoverAuthorizationServer(issuer, options.limits));
  const std::optional<std::string> scope = options.scope ? options.scope : SelectScope(challenge, metadata);
  UDON_ASSIGN_OR_RETURN(std::optional<StoredLogin> previous, store.Load({server.issuer, resource}));
  UDON_ASSIGN_OR_RETURN(Authorized authorized, Authorize(options, server, resource, scope, previous));
  std::vector<std::pair<std::string, std::string>> form = {{"grant_type", "authorization_code"},
                                                           {"code", authorized.code},
                                                           {"redirect_uri", authorized.redirect_uri},
                                                           {"code_verifier", authorized.verifier}};
  if (options.settings.send_resource) form.emplace_back("resource", resource);
  UDON_ASSIGN_OR_RETURN(TokenResponse tokens,
                        RequestTokens(server.token_endpoint, authorized.client, std::move(form), options.limits));
  StoredLogin login;
  login.key = {server.issuer, resource};
  login.client = std::move(authorized.client);
  if (scope) ApplyTokens(TokenResponse{"", "", std::nullopt, std::nullopt, scope}, 0, login);
  ApplyTokens(tokens, Now(options.now), login);
  UDON_RETURN_IF_ERROR(store.Save(login));
  return login;
}

Result<std::string> BearerFor(TokenStore& store, const BearerOptions& options) {
  UDON_ASSIGN_OR_RETURN(std::optional<StoredLogin> found, FindLogin(store, options.server_url));
  if (!found) {
    return WithCommand(MakeError("auth.login_required", "the server needs a login first: run " +
                                                            LoginCommand(options.server_key)),
                       LoginCommand(options.server_key));
  }
  auto fresh = [&](const StoredLogin& login) {
    const bool rejected = options.rejected_token && *options.rejected_token == login.access_token;
    return !rejected && (login.expires_at_unix == 0 || Now(options.now) + kRefreshMarginSeconds < login.expires_at_unix);
  };
  if (fresh(*found)) return found->access_token;
  const Error expired = WithCommand(
      MakeError("auth.login_expired", "the stored login has expired and cannot be refreshed: run " +
                                          LoginCommand(options.server_key)),
      LoginCommand(options.server_key));
  std::string token;
  const auto refresh = [&]() -> Status {
    // Another process may have refreshed (and rotated the refresh token) while we waited.
    UDON_ASSIGN_OR_RETURN(std::optional<StoredLogin> current, store.Load(found->key));
    if (!current) return expired;
    if (fresh(*current)) {
      token = current->access_token;
      return OkStatus();
    }
    if (!current->refresh_token) return expired;
    UDON_ASSIGN_OR_RETURN(AuthorizationServer server, CachedAuthorizationServer(current->key.issuer, options.limits));
    std::vector<std::pair<std::string, std::string>> form = {{"grant_type", "refresh_token"},
                                                             {"refresh_token", *current->refresh_token}};
    if (options.send_resource) form.emplace_back("resource", current->key.resource);
    Result<TokenResponse> tokens = RequestTokens(server.token_endpoint, current->client, std::move(form), options.limits);
    if (!tokens.ok()) {
      if (tokens.error().code == "auth.token_failed" && tokens.error().details.value("status", 0L) == 400) return expired;
      return std::move(tokens).error();
    }
    ApplyTokens(*tokens, Now(options.now), *current);
    UDON_RETURN_IF_ERROR(store.Save(*current));
    token = current->access_token;
    return OkStatus();
  };
  UDON_RETURN_IF_ERROR(store.WithRefreshLock(found->key, refresh));
  return token;
}

}  // namespace udon::oauth
