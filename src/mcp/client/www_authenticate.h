// WWW-Authenticate (RFC 9110 section 11.6.1): the Bearer challenge a protected server
// answers with (RFC 6750 section 3, RFC 9728 section 5.1). The HTTP transport reads its
// error and scope on a 401 or 403; the OAuth login reads its resource_metadata. And what a
// refused credential means to a command (contract 7.23).
//
// Errors (contract 7.1): auth.token_rejected (HTTP 401 that a refreshed login cannot
// answer), auth.scope_required (HTTP 403 insufficient_scope; details.scope, the scope the
// server asks for), auth.forbidden (any other HTTP 403); each with details.command, the
// login command to run.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace udon::mcp {

// A Bearer challenge of WWW-Authenticate (RFC 6750 section 3, RFC 9728 section 5.1).
struct BearerChallenge {
  std::optional<std::string> resource_metadata;
  std::optional<std::string> scope;
  std::optional<std::string> error;  // e.g. "invalid_token", "insufficient_scope"
};

// The Bearer challenge among the header's challenges; nullopt when there is none or it
// cannot be parsed (a malformed challenge is ignored, as if absent: discovery then falls
// back to the well-known locations of the server's own origin).
std::optional<BearerChallenge> ParseWwwAuthenticate(std::string_view header);

// "udon-mcp login KEY" (with " --scope '…'" when given): what refusals name.
std::string LoginCommand(const std::string& server_key, const std::optional<std::string>& scope = std::nullopt);

// The HTTP status (401 or 403) of a client error that a refused credential caused (the
// transport's mcp.http_status, as the error or as its cause); nullopt for anything else.
// The server processed nothing then: such a request was not dispatched.
std::optional<long> RefusedCredentialStatus(const Error& error);

// Carries a refused credential's facts (details.status, authError, scope) from `cause` to
// the error that wraps it, so the command above still knows nothing was processed.
void KeepRefusedCredential(const Error& cause, Error& wrapper);

// The stable refusal of a refused credential that will not be retried, naming
// `udon-mcp login SERVER_KEY` (with the scope a 403 insufficient_scope asks for). Never a
// silent retry with a broader token: a larger scope takes a new consent.
Error RefusedCredentialError(const Error& error, const std::string& server_key);

}  // namespace udon::mcp
