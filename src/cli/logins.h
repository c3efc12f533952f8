// Stored OAuth logins in the command line (issue 39, contract 7.23): the hook that gives
// every http entry its login's bearer token, for capture, call, run, probe, serve and adopt.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "cli/runtime.h"
#include "mcp/client/config.h"
#include "oauth/token_store.h"

namespace udon::cli {

// Where every command keeps and finds logins (contract 7.14, 7.23): with a postgres:// state
// store (StateLocation) the database's table, sealed with the key of --token-key or
// $UDON_MCP_TOKEN_KEY_FILE; else the file store of the state directory. Nothing is
// contacted here. Errors: auth.store_key_unavailable (a database and no key given,
// details.option "--token-key"), usage.invalid (a URI libpq cannot parse), the state
// directory's errors (gate::ResolveStateDir).
Result<std::shared_ptr<oauth::TokenStore>> OpenLoginStore(const CommonOptions& options);

// How the user logs in: the browser opened (or the URL printed on stderr with no_browser),
// waited for within timeout_seconds.
struct InteractiveLogin {
  std::optional<std::string> scope;  // instead of the discovered one
  double timeout_seconds = 300;
  bool no_browser = false;
  std::optional<std::string> protocol_version;  // 2026-07-28 requires RFC 9207's iss
};

// Logs in to the http entry `server` (named `key` in messages) and stores the login in
// `store`. Errors: oauth::Login's (contract 7.23).
Result<oauth::StoredLogin> LogIn(const std::string& key, const mcp::ServerConfig& server, const InteractiveLogin& how,
                                 oauth::TokenStore& store);

// Sets config.authorize_http: an http entry without its own Authorization header gets the
// token of the login stored for its URL in `store` (refreshed when due). An entry with an
// "oauth" member and no login fails with auth.login_required naming the login command; an
// entry without one and no login is used as it is. A store that could not be opened
// refuses the entries with an "oauth" member with its error and leaves the others alone.
// Sets config.reauthorize_http too: a token the server refused with 401 is refreshed once
// (contract 7.23).
void AttachStoredLogins(mcp::RuntimeConfig& config, Result<std::shared_ptr<oauth::TokenStore>> store);

}  // namespace udon::cli
