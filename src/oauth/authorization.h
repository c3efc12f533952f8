// The authorization code grant with PKCE (OAuth 2.1, RFC 7636 S256): the request's secrets,
// the authorization URL the browser opens, and the check of the redirect that comes back
// (RFC 6749 state, RFC 9207 iss).
//
// Errors (contract 7.1): auth.random_failed, auth.state_mismatch (the redirect's state is
// not the one sent, or missing), auth.iss_mismatch (the redirect's iss is another issuer,
// or missing where the server promised it), auth.login_denied (the server answered
// error=..., details.error the OAuth error code), auth.redirect_invalid (not a request for
// the callback path, a parameter given twice, no code).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace udon::oauth {

// RFC 7636: a verifier of 43 characters from 32 random bytes, and its S256 challenge.
struct Pkce {
  std::string verifier;   // secret until the code is exchanged
  std::string challenge;  // BASE64URL(SHA-256(verifier))
};
// Errors: auth.random_failed.
Result<Pkce> MakePkce();
// The S256 challenge of a verifier (exposed for the RFC 7636 appendix B test vector).
std::string S256Challenge(std::string_view verifier);
// An unguessable state (32 random bytes, base64url). Errors: auth.random_failed.
Result<std::string> MakeState();

// base64url without padding (RFC 4648 section 5), and base64 with it (section 4), over
// Nettle's codec.
std::string Base64Url(std::string_view bytes);
std::string Base64(std::string_view bytes);
// application/x-www-form-urlencoded, RFC 3986 unreserved characters kept.
std::string FormEncode(std::string_view text);
// name=value pairs of a query or form body, in order. nullopt when a %-escape is broken.
std::optional<std::vector<std::pair<std::string, std::string>>> ParseForm(std::string_view text);
// Pairs joined into a form body or query (each name and value FormEncoded).
std::string JoinForm(const std::vector<std::pair<std::string, std::string>>& pairs);

struct AuthorizationRequest {
  std::string authorization_endpoint;
  std::string client_id;
  std::string redirect_uri;
  std::string code_challenge;
  std::string state;
  std::optional<std::string> scope;
  std::optional<std::string> resource;  // RFC 8707; nullopt when the entry leaves it out
};

// The URL the browser opens (the endpoint's own query kept, our parameters appended).
std::string AuthorizationUrl(const AuthorizationRequest& request);

struct RedirectExpectation {
  std::string path;            // the redirect URI's path, e.g. "/callback"
  std::string state;
  std::string issuer;
  bool iss_required = false;   // the server advertises RFC 9207 (or 2026-07-28 requires it)
};

// Checks the request target the loopback listener received ("/callback?code=…&state=…")
// and returns the authorization code. The state is compared first: a redirect that was
// not caused by this login says nothing else that can be trusted.
// Errors: auth.redirect_invalid, auth.state_mismatch, auth.iss_mismatch, auth.login_denied.
Result<std::string> ParseAuthorizationResponse(std::string_view target, const RedirectExpectation& expected);

}  // namespace udon::oauth
