// serve as an OAuth 2.1 protected resource (MCP authorization; RFC 9728, 6750, 7662, 9068):
// its metadata, the challenge of a request without a usable token, and the judgement of a
// bearer token: a JWT verified against the issuer's JWK Set (fetched through the issuer's
// metadata, cached, fetched again, at most once per interval, when a token names a key it
// does not hold, so key rotation works), or an opaque token asked of the issuer's
// introspection endpoint. The caller's scopes (or another claim) map to the tools it may
// see and call. No token, and no value of one, reaches an error, a log or evidence; a
// caller is its `sub`.
//
// The issuer is asked outside the guard's lock, one question per subject at a time
// (single_flight.h): one JWK Set fetch, one introspection per token. A slow or hostile
// issuer delays only the requests that need its answer (they wait for the question in
// flight, at most max_issuer_wait, then get auth.issuer_unreachable, and share its answer
// when it comes); tokens whose keys or verdicts are cached are judged meanwhile, a stale
// set's keys included.
//
// Introspection answers are cached by the token's SHA-256, never the token: an active one
// until the token's exp (at most max_introspection_cache), a refusal (active false, or an
// answer whose claims fail) for refused_introspection_ttl, so that one bad token sent at
// rate costs the issuer one request per TTL (and sent from many connections at once, one
// request: the others wait for its answer). Each cache has its own cap (expired entries
// dropped first, then all), so a flood of bad tokens never evicts the good ones. No answer
// (the issuer unreachable, a status other than 200, a body that is no introspection
// answer) is no verdict and is never cached: the next request asks again.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "json/json.h"
#include "resource_auth/fetch.h"
#include "resource_auth/jwks.h"
#include "resource_auth/jwt.h"
#include "resource_auth/single_flight.h"

namespace udon::resource_auth {

struct ResourceGuardOptions {
  std::string issuer;    // the authorization server's issuer identifier (its metadata's issuer)
  std::string audience;  // this gateway's MCP endpoint URL as callers reach it: the RFC 9728 resource
  std::chrono::seconds skew{60};
  // The claim that carries the caller's grants: "scope" (space separated, RFC 9068) by
  // default, or another one holding a string or an array of strings (a "roles" claim).
  std::string grants_claim = "scope";
  // Grant -> tool names as tools/list shows them; "*" is every offered tool.
  std::map<std::string, std::vector<std::string>> grant_tools;
  // Set: tokens are opaque and asked of the issuer's introspection endpoint with these
  // client credentials (client_secret_basic).
  std::string introspection_client_id;
  std::string introspection_client_secret;
  std::chrono::seconds min_jwks_refetch{30};
  std::chrono::seconds max_jwks_age{3600};
  // How long a request waits for the issuer's answer another request is waiting for (the
  // JWK Set's refetch, the same token's introspection).
  std::chrono::seconds max_issuer_wait{10};
  std::chrono::seconds max_introspection_cache{300};
  std::size_t max_introspection_entries = 4096;
  // Short: an issuer may activate a token just after a first refusal (replication lag).
  std::chrono::seconds refused_introspection_ttl{10};
  std::size_t max_refused_introspections = 4096;
};

// Who a token let in.
struct AuthenticatedCaller {
  std::string subject;
  bool all_tools = false;
  std::set<std::string, std::less<>> tools;
};

// What to answer a request refused by Authenticate (RFC 6750 section 3).
struct Challenge {
  int status = 401;
  std::string www_authenticate;  // empty: send none (the issuer could not be asked: 503)
  std::string message;
};

class ResourceGuard {
 public:
  // Errors: usage.invalid (an issuer or audience that is not an absolute https URL, or http
  // to loopback; no grant mapped; a skew above kMaxClockSkew).
  static Result<std::unique_ptr<ResourceGuard>> Create(ResourceGuardOptions options, Fetcher fetcher);

  // Reads the issuer's metadata (RFC 8414, then OpenID Connect discovery), whose issuer must
  // equal the configured one, then its JWK Set (JWT mode) or notes its introspection
  // endpoint. `now`: seconds since the epoch. Errors: auth.issuer_unreachable, auth.issuer_metadata_invalid, auth.jwks_invalid.
  Status Discover(std::int64_t now);

  // The caller an "Authorization" header value lets in, at `now` (seconds since the epoch).
  // Errors: auth.token_missing (no Bearer credential), auth.token_invalid,
  // auth.token_expired, auth.insufficient_scope (a valid token granting no mapped tool),
  // auth.issuer_unreachable, auth.jwks_invalid.
  Result<AuthenticatedCaller> Authenticate(const std::string& authorization, std::int64_t now);

  // The answer to a request Authenticate refused with `error`.
  Challenge ChallengeFor(const Error& error) const;

  // RFC 9728: the metadata document, the paths it is served at (path-inserted for the
  // audience's path, and the root), and its URL as the challenge names it.
  std::string MetadataJson() const;
  std::vector<std::string> MetadataPaths() const;
  std::string MetadataUrl() const;

  // How many introspection refusals are cached (at most max_refused_introspections).
  std::size_t CachedRefusals();
  // How many requests wait for an answer another request asked the issuer for.
  std::size_t AwaitingIssuer();

 private:
  ResourceGuard(ResourceGuardOptions options, Fetcher fetcher);
  Result<TokenClaims> VerifyJwt(const std::string& token, std::int64_t now);
  Result<TokenClaims> Introspect(const std::string& token, std::int64_t now);
  // The issuer's verdict on a token, or no answer (cacheable false: unreachable, unreadable).
  struct IntrospectionAnswer {
    Result<TokenClaims> verdict;
    bool cacheable = false;
  };
  IntrospectionAnswer AskIntrospection(const std::string& token, std::int64_t now) const;
  Result<TokenClaims> JudgeIntrospection(json::Value answer, std::int64_t now) const;
  std::optional<Result<TokenClaims>> CachedIntrospection(const std::string& digest, std::int64_t now);
  Result<Jwk> KeyFor(const TokenHeader& header, std::int64_t now);
  Status RefetchJwks(std::unique_lock<std::mutex>& lock, std::int64_t now);
  Result<std::shared_ptr<const JwkSet>> FetchJwks() const;
  Result<AuthenticatedCaller> Grant(const TokenClaims& claims) const;
  TokenExpectations Expect(std::int64_t now) const;

  ResourceGuardOptions options_;
  Fetcher fetch_;
  std::string jwks_uri_;
  std::string introspection_endpoint_;
  std::mutex mutex_;  // what follows; never held across a request to the issuer
  SingleFlight<Result<std::shared_ptr<const JwkSet>>> jwks_fetch_;  // one subject: the set
  std::shared_ptr<const JwkSet> keys_;
  std::int64_t keys_fetched_ = 0;
  std::optional<std::int64_t> last_refetch_;
  struct Introspected {
    TokenClaims claims;
    std::int64_t until = 0;
  };
  struct Refused {
    Error error;
    std::int64_t until = 0;
  };
  std::map<std::string, Introspected> introspected_;  // by SHA-256 of the token
  std::map<std::string, Refused> refused_;            // by SHA-256 of the token
  SingleFlight<IntrospectionAnswer> introspections_;  // by SHA-256 of the token
};

}  // namespace udon::resource_auth
