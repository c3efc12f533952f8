// JWT access tokens (RFC 9068, JWS compact serialization, RFC 7515) checked the way a
// protected resource must: the signature by OpenSSL EVP with the issuer's key, the
// algorithm from a fixed allowlist (RS256, PS256, ES256, EdDSA: never "none", never HMAC,
// so a public key can never serve as a shared secret) and matching the key's type, then
// iss, aud, exp and nbf with a bounded clock skew. Nothing of the token reaches an error.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "json/json.h"
#include "resource_auth/jwks.h"

namespace udon::resource_auth {

inline constexpr std::size_t kMaxTokenBytes = 8 * 1024;
inline constexpr std::chrono::seconds kMaxClockSkew{300};

struct TokenExpectations {
  std::string issuer;    // iss must equal it
  std::string audience;  // aud must be it or an array holding it
  std::chrono::seconds skew{60};  // at most kMaxClockSkew
  std::int64_t now = 0;           // seconds since the epoch
  // The claim read as the caller's grants: "scope" (a space-separated string, or an scp
  // array), or another claim holding a string (space separated) or an array of strings.
  std::string grants_claim = "scope";
};

// What a valid token says about its caller.
struct TokenClaims {
  std::string subject;              // sub
  std::vector<std::string> grants;  // the grants claim's values
  std::int64_t expires = 0;         // exp
};

// The JOSE header's fields needed to pick the key. Errors: auth.token_invalid (not three
// base64url parts, over kMaxTokenBytes, a header that is not a strict JSON object with a
// string alg, an alg outside the allowlist, a crit member, a typ of another kind of token).
struct TokenHeader {
  std::string alg;
  std::string kid;
};
Result<TokenHeader> ReadTokenHeader(std::string_view token);

// The token's claims when `key` verifies its signature and the claims meet `expected`.
// Errors: auth.token_invalid (the header as above, a key of another type or alg, a bad
// signature, a payload that is not a strict JSON object, iss or aud not the expected ones,
// no sub, a cnf (bound to a key: DPoP, mTLS), nbf or iat in the future beyond the skew),
// auth.token_expired (exp missing or
// past beyond the skew).
Result<TokenClaims> VerifyToken(std::string_view token, const Jwk& key, const TokenExpectations& expected);

// Claims checked as VerifyToken checks them (shared with introspection, RFC 7662, whose
// answer carries the same members). Errors: as VerifyToken's claims.
Result<TokenClaims> CheckClaims(const json::Value& claims, const TokenExpectations& expected);

}  // namespace udon::resource_auth
