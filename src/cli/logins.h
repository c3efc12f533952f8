// Stored OAuth logins in the command line (issue 39, contract 7.23): the hook that gives
// every http entry its login's bearer token, for capture, call, run, probe, serve and adopt.
#pragma once

#include <string>

#include "mcp/client/config.h"

namespace udon::cli {

// Sets config.authorize_http: an http entry without its own Authorization header gets the
// token of the login stored for its URL (refreshed when due). An entry with an "oauth"
// member and no login fails with auth.login_required naming the login command; an entry
// without one and no login is used as it is. Sets config.reauthorize_http too: a token the
// server refused with 401 is refreshed once (contract 7.23).
void AttachStoredLogins(mcp::RuntimeConfig& config, const std::string& state_dir);

}  // namespace udon::cli
