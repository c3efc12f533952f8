// Finding who issues tokens for an MCP server (MCP authorization, 2025-11-25 and
// 2026-07-28): the 401's WWW-Authenticate challenge, the protected resource metadata
// (RFC 9728) and the authorization server metadata (RFC 8414, OpenID Connect discovery).
// Pure functions over bytes and URLs: the requests are made by the login flow, which tries
// the locations in the order given here.
//
// Errors (contract 7.1): auth.metadata_invalid (not the JSON object the RFC describes, or
// a member of the wrong type), auth.resource_mismatch (the metadata's `resource` is not
// this server), auth.issuer_mismatch (`issuer` is not the URL the metadata was fetched
// for), auth.metadata_foreign (a challenge points at another origin's metadata),
// auth.pkce_unsupported (no S256), auth.insecure_endpoint (an endpoint that is not https,
// except on a loopback host), auth.url_invalid.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "mcp/client/www_authenticate.h"

namespace udon::oauth {

// An absolute http(s) URL taken apart. No user information, no fragment.
struct HttpUrl {
  std::string scheme;  // "http" or "https", lower case
  std::string host;    // lower case; an IPv6 literal keeps its brackets
  int port = 0;        // the explicit or default port
  std::string path;    // "" or starting with "/"
  std::string query;   // without "?"
  std::string Origin() const;  // scheme://host[:port], the port only when not the default
  bool IsLoopback() const;     // 127.0.0.0/8, [::1] or localhost
};

// Errors: auth.url_invalid (not http(s), user information, a fragment, a bad port or
// host, control characters or spaces).
Result<HttpUrl> ParseHttpUrl(std::string_view url);

// The resource identifier of an MCP server URL (RFC 8707, as MCP uses it): the origin and
// path, without query, fragment or a trailing slash (except the root "/").
// Errors: auth.url_invalid.
Result<std::string> CanonicalResource(std::string_view server_url);

using mcp::BearerChallenge;
using mcp::ParseWwwAuthenticate;

// The resource_metadata URL of a challenge, accepted only on the server's own origin: a
// challenge must not send discovery (and the user's consent) to another host.
// Errors: auth.metadata_foreign, auth.url_invalid.
Result<std::string> CheckResourceMetadataUrl(std::string_view metadata_url, std::string_view server_url);

// RFC 9728 section 3.1: the path-inserted location, then the root one (the same URL when
// the server's path is empty or "/").
std::vector<std::string> ProtectedResourceMetadataUrls(const HttpUrl& server);

struct ProtectedResource {
  std::string resource;
  std::vector<std::string> authorization_servers;
  std::vector<std::string> scopes_supported;
};

// Errors: auth.metadata_invalid, auth.resource_mismatch (the `resource` must have the
// server's origin and be the server URL's path or a prefix of it at a segment boundary).
Result<ProtectedResource> ParseProtectedResourceMetadata(std::string_view bytes, std::string_view server_url);

// MCP's order for an issuer: with a path, RFC 8414 path-inserted, OIDC path-inserted,
// OIDC path-appended; without one, RFC 8414 then OIDC at the root.
// Errors: auth.url_invalid (the issuer has a query or fragment, or is not http(s)).
Result<std::vector<std::string>> AuthorizationServerMetadataUrls(std::string_view issuer);

struct AuthorizationServer {
  std::string issuer;
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::optional<std::string> registration_endpoint;
  std::vector<std::string> scopes_supported;
  std::vector<std::string> token_endpoint_auth_methods_supported;
  bool client_id_metadata_document_supported = false;
  // RFC 9207: the server adds `iss` to its authorization responses.
  bool authorization_response_iss_parameter_supported = false;
};

// Errors: auth.metadata_invalid, auth.issuer_mismatch (issuer must equal `expected_issuer`
// byte for byte), auth.pkce_unsupported (code_challenge_methods_supported lacks S256 or is
// absent), auth.insecure_endpoint (an endpoint on plain http off loopback, or an issuer
// on https whose endpoints are not).
Result<AuthorizationServer> ParseAuthorizationServerMetadata(std::string_view bytes, std::string_view expected_issuer);

// The scope to ask for: the challenge's, else the resource's scopes_supported joined by
// spaces, else none (nullopt: the parameter is left out).
std::optional<std::string> SelectScope(const std::optional<BearerChallenge>& challenge,
                                       const ProtectedResource& resource);

}  // namespace udon::oauth
