// The MCP authorization flow as a client runs it (issue 39, contract 7.23): `login` once in
// the browser, then a bearer token for every request to that server, refreshed before it
// expires and once on a 401, one refresher per login at a time.
//
// Errors (contract 7.1), besides those of discovery.h, authorization.h, loopback.h,
// tokens.h and token_store.h: auth.not_required (the server answered without asking for a
// login), auth.metadata_unavailable (no location gave the metadata), auth.client_unavailable
// (no registration endpoint and no configured client), auth.login_required (no stored
// login for the server; details.command the login command), auth.login_expired (the
// stored login can no longer be refreshed; details.command).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/result.h"
#include "mcp/client/config.h"
#include "oauth/discovery.h"
#include "oauth/http.h"
#include "oauth/token_store.h"

namespace udon::oauth {

struct LoginOptions {
  std::string server_key;  // for messages: "udon-mcp login KEY"
  std::string server_url;
  mcp::OAuthSettings settings;
  std::optional<std::string> scope;  // --scope: asked for instead of the discovered one
  // The MCP revision the login is for (--protocol-version): under 2026-07-28 the redirect
  // must carry RFC 9207's iss even where the server does not advertise it; nullopt or
  // 2025-11-25: only where advertised.
  std::optional<std::string> protocol_version;
  bool open_browser = true;          // false: --no-browser, the URL is only shown
  std::chrono::seconds timeout{300};
  HttpLimits limits;
  // Where the authorization URL goes (stderr in the command line): one line
  // "udon-mcp: open this URL to log in: URL".
  std::function<void(const std::string& line)> show;
  std::function<std::int64_t()> now;  // Unix seconds; null: the system clock
};

// Discovers, identifies, authorizes and exchanges; saves the login and returns it.
// Nothing is saved unless every check passed.
Result<StoredLogin> Login(const LoginOptions& options, TokenStore& store);

// The stored login of a server (by its canonical resource URL), whichever issuer.
Result<std::optional<StoredLogin>> FindLogin(TokenStore& store, const std::string& server_url);

struct BearerOptions {
  std::string server_key;
  std::string server_url;
  bool send_resource = true;
  HttpLimits limits;
  std::function<std::int64_t()> now;
  // A token the server just refused with 401: refresh even if it has not expired.
  std::optional<std::string> rejected_token;
};

// The access token to send to the server, refreshed under the store's refresh lock when it
// expires within a minute (or was rejected). The authorization server's metadata is
// fetched once per process (checked as at login), so a refresh is one token request. Errors: auth.login_required,
// auth.login_expired, the store's and the token endpoint's.
Result<std::string> BearerFor(TokenStore& store, const BearerOptions& options);

using mcp::LoginCommand;  // "udon-mcp login KEY [--scope '…']": what refusals name

}  // namespace udon::oauth
