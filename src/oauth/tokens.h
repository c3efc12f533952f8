// What the authorization server answers at its token and registration endpoints, read
// strictly, and the requests that produce it. Token values are only ever copied into a
// StoredLogin; no error here carries one (an OAuth error's code is kept, its description,
// which servers fill with anything, is not).
//
// Errors (contract 7.1): auth.token_failed (an error answer: details.error the OAuth code,
// details.status the HTTP status; or an answer that is not a token response),
// auth.registration_failed (dynamic registration refused or answered nonsense), and
// HttpFetch's errors (auth.unreachable, auth.timeout, auth.response_too_large).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "oauth/http.h"
#include "oauth/token_store.h"

namespace udon::oauth {

struct TokenResponse {
  std::string access_token;
  std::string token_type;                 // "Bearer" (compared without case)
  std::optional<std::int64_t> expires_in;  // seconds
  std::optional<std::string> refresh_token;
  std::optional<std::string> scope;
};

// A 200 answer's body, or the error of any other status.
Result<TokenResponse> ParseTokenResponse(long status, std::string_view body);

// The registration answer (RFC 7591 section 3.2.1) as a dynamic ClientIdentity.
Result<ClientIdentity> ParseRegistrationResponse(long status, std::string_view body);

// The body udon-mcp registers with: a native public client on a loopback redirect URI.
std::string RegistrationRequestBody(const std::string& redirect_uri, const std::optional<std::string>& scope);

// POSTs a form to the token endpoint, authenticating as the client does
// (token_endpoint_auth_method: none puts client_id in the form, client_secret_basic
// sends HTTP Basic, client_secret_post puts both in the form).
Result<TokenResponse> RequestTokens(const std::string& token_endpoint, const ClientIdentity& client,
                                    std::vector<std::pair<std::string, std::string>> form, const HttpLimits& limits);

// A StoredLogin's token members from a response at `now` (Unix seconds); a refresh that
// returns no refresh token keeps the previous one (RFC 6749 section 6).
void ApplyTokens(const TokenResponse& tokens, std::int64_t now, StoredLogin& login);

}  // namespace udon::oauth
