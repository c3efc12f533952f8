#include "resource_auth/resource_guard.h"

#include "base/ascii.h"
#include "base/sha256.h"

namespace udon::resource_auth {
namespace {

constexpr const char* kWellKnown = "/.well-known/oauth-protected-resource";
const std::string kJwksSubject = "jwks";  // the one subject of the guard's JWK Set fetches

// The path of an absolute URL ("" for none or "/"), without query or fragment.
std::string PathOf(const std::string& url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos) return {};
  const std::size_t slash = url.find('/', scheme + 3);
  if (slash == std::string::npos) return {};
  std::string path = url.substr(slash, url.find_first_of("?#", slash) - slash);
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path;
}

std::string OriginOf(const std::string& url) {
  const std::size_t scheme = url.find("://");
  return url.substr(0, url.find('/', scheme == std::string::npos ? 0 : scheme + 3));
}

// RFC 8414 section 3.1 (the well-known segment inserted before the issuer's path), then
// OpenID Connect Discovery (appended), in the order MCP clients try them.
std::vector<std::string> IssuerMetadataUrls(const std::string& issuer) {
  const std::string origin = OriginOf(issuer);
  const std::string path = PathOf(issuer);
  return {origin + "/.well-known/oauth-authorization-server" + path,
          origin + path + "/.well-known/openid-configuration"};
}

std::optional<std::string> StringMember(const json::Value& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// The parts of an Authorization header: "Bearer" (any case), one space, the token.
std::optional<std::string> BearerToken(const std::string& authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return std::nullopt;
  }
  std::string token = authorization.substr(kScheme.size());
  if (token.empty() || token.find_first_of(" \t,\"") != std::string::npos) return std::nullopt;
  return token;
}

bool IsBearer(const std::optional<std::string>& token_type) {
  return token_type && base::AsciiLower(*token_type) == "bearer";
}

// Room for one more entry in a cache by token digest: expired entries go first, then all,
// so that a flood of distinct tokens empties the cache instead of growing it.
template <typename Cache>
void MakeRoom(Cache& cache, std::size_t cap, std::int64_t now) {
  if (cache.size() < cap) return;
  std::erase_if(cache, [now](const auto& entry) { return entry.second.until <= now; });
  if (cache.size() >= cap) cache.clear();
}

// An introspection answer, RFC 7662: a JSON object whose "active" is a boolean. Anything
// else is no verdict on the token.
bool IsIntrospectionAnswer(const Result<json::Value>& answer) {
  if (!answer.ok() || !answer->is_object()) return false;
  auto active = answer->find("active");
  return active != answer->end() && active->is_boolean();
}

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

}  // namespace

ResourceGuard::ResourceGuard(ResourceGuardOptions options, Fetcher fetcher)
    : options_(std::move(options)), fetch_(std::move(fetcher)) {}

Result<std::unique_ptr<ResourceGuard>> ResourceGuard::Create(ResourceGuardOptions options, Fetcher fetcher) {
  if (!IsAcceptableIssuerUrl(options.issuer)) {
    return MakeError("usage.invalid", "--issuer must be an https URL (or http to a loopback address)");
  }
  if (!IsAcceptableIssuerUrl(options.audience)) {
    return MakeError("usage.invalid", "--audience must be this gateway's https URL (or http to a loopback address)");
  }
  if (options.grant_tools.empty()) {
    return MakeError("usage.invalid", "--auth oauth needs at least one --scope-tools SCOPE=TOOL[,TOOL...] (* for every tool)");
  }
  if (options.skew > kMaxClockSkew || options.skew.count() < 0) {
    return MakeError("usage.invalid", "--clock-skew must be between 0 and 300 seconds");
  }
  return std::unique_ptr<ResourceGuard>(new ResourceGuard(std::move(options), std::move(fetcher)));
}

Status ResourceGuard::Discover(std::int64_t now) {
  std::optional<json::Value> metadata;
  for (const std::string& url : IssuerMetadataUrls(options_.issuer)) {
    auto body = fetch_({url, {}, {}, {}});
    if (!body.ok()) continue;
    auto parsed = json::Parse(*body);
    if (parsed.ok() && parsed->is_object()) {
      metadata = std::move(parsed).value();
      break;
    }
  }
  if (!metadata) return MakeError("auth.issuer_unreachable", "the authorization server's metadata could not be read");
  if (StringMember(*metadata, "issuer") != options_.issuer) {
    return MakeError("auth.issuer_metadata_invalid", "the authorization server's metadata names another issuer than --issuer");
  }
  if (!options_.introspection_client_id.empty()) {
    auto endpoint = StringMember(*metadata, "introspection_endpoint");
    if (!endpoint || !IsAcceptableIssuerUrl(*endpoint)) {
      return MakeError("auth.issuer_metadata_invalid", "the authorization server's metadata names no usable introspection_endpoint");
    }
    introspection_endpoint_ = *endpoint;
    return OkStatus();
  }
  auto jwks = StringMember(*metadata, "jwks_uri");
  if (!jwks || !IsAcceptableIssuerUrl(*jwks)) {
    return MakeError("auth.issuer_metadata_invalid", "the authorization server's metadata names no usable jwks_uri");
  }
  jwks_uri_ = *jwks;
  UDON_ASSIGN_OR_RETURN(std::shared_ptr<const JwkSet> keys, FetchJwks());
  std::lock_guard lock(mutex_);
  keys_ = std::move(keys);
  keys_fetched_ = now;
  return OkStatus();
}

// Never under mutex_: the issuer may be slow.
Result<std::shared_ptr<const JwkSet>> ResourceGuard::FetchJwks() const {
  auto body = fetch_({jwks_uri_, {}, {}, {}});
  if (!body.ok()) return body.error();
  auto set = JwkSet::Parse(*body);
  if (!set.ok()) return set.error();
  return std::make_shared<const JwkSet>(std::move(set).value());
}

// `lock` (on mutex_) is held on entry and on return, and released while the issuer is
// asked; requests that need the new keys meanwhile wait for this fetch (KeyFor).
Status ResourceGuard::RefetchJwks(std::unique_lock<std::mutex>& lock, std::int64_t now) {
  last_refetch_ = now;
  Result<std::shared_ptr<const JwkSet>> fetched = jwks_fetch_.Lead(lock, kJwksSubject, [this] { return FetchJwks(); });
  if (!fetched.ok()) return fetched.error();
  keys_ = std::move(fetched).value();
  keys_fetched_ = now;
  return OkStatus();
}

TokenExpectations ResourceGuard::Expect(std::int64_t now) const {
  TokenExpectations expected;
  expected.issuer = options_.issuer;
  expected.audience = options_.audience;
  expected.skew = options_.skew;
  expected.now = now;
  expected.grants_claim = options_.grants_claim;
  return expected;
}

// The key a token names (a copy: a later fetch may replace the set). A kid the cached set
// lacks (the issuer rotated its keys), or a set older than max_jwks_age, fetches the set
// again, at most once per min_jwks_refetch: a flood of tokens with made-up kids costs the
// issuer one request per interval. While a fetch is in flight, cached keys (a stale set's
// too) keep working and a kid the set lacks waits for the fetch.
Result<Jwk> ResourceGuard::KeyFor(const TokenHeader& header, std::int64_t now) {
  std::unique_lock lock(mutex_);
  const bool stale = keys_ == nullptr || now - keys_fetched_ >= options_.max_jwks_age.count();
  const Jwk* key = keys_ ? keys_->Find(header.kid) : nullptr;
  if (key != nullptr && (!stale || jwks_fetch_.InFlight(kJwksSubject))) return *key;
  Status fetched = OkStatus();
  if (jwks_fetch_.InFlight(kJwksSubject)) {
    if (!jwks_fetch_.Join(lock, kJwksSubject, options_.max_issuer_wait)) {
      return MakeError("auth.issuer_unreachable", "the authorization server could not be asked: its keys did not arrive in time");
    }
  } else if (!last_refetch_ || now - *last_refetch_ >= options_.min_jwks_refetch.count()) {
    fetched = RefetchJwks(lock, now);
  }
  key = keys_ ? keys_->Find(header.kid) : nullptr;
  if (key != nullptr) return *key;
  if (keys_ == nullptr && !fetched.ok()) return fetched.error();
  if (keys_ == nullptr) return MakeError("auth.issuer_unreachable", "the authorization server could not be asked: no keys yet");
  return MakeError("auth.token_invalid", "access token refused: it names a signing key the issuer does not publish");
}

Result<TokenClaims> ResourceGuard::VerifyJwt(const std::string& token, std::int64_t now) {
  auto header = ReadTokenHeader(token);
  if (!header.ok()) return header.error();
  auto key = KeyFor(*header, now);
  if (!key.ok()) return key.error();
  return VerifyToken(token, *key, Expect(now));
}

// The cached verdict on a token (by its digest), if one is still fresh. mutex_ held.
std::optional<Result<TokenClaims>> ResourceGuard::CachedIntrospection(const std::string& digest, std::int64_t now) {
  if (auto it = introspected_.find(digest); it != introspected_.end()) {
    if (now < it->second.until) return Result<TokenClaims>(it->second.claims);
    introspected_.erase(it);
  }
  if (auto it = refused_.find(digest); it != refused_.end()) {
    if (now < it->second.until) return Result<TokenClaims>(it->second.error);
    refused_.erase(it);
  }
  return std::nullopt;
}

// The issuer's verdict, judged like a JWT's claims (an answer without iss speaks for the
// issuer asked). Errors: auth.token_invalid, auth.token_expired.
Result<TokenClaims> ResourceGuard::JudgeIntrospection(json::Value answer, std::int64_t now) const {
  if (answer["active"] != true) {
    return MakeError("auth.token_invalid", "access token refused: the issuer does not know it as active");
  }
  // RFC 7662 token_type: a DPoP-bound token's says "DPoP"; only bearer tokens are taken.
  if (auto type = StringMember(answer, "token_type"); answer.contains("token_type") && !IsBearer(type)) {
    return MakeError("auth.token_invalid", "access token refused: the issuer says it is no bearer token");
  }
  if (!answer.contains("iss")) answer["iss"] = options_.issuer;
  return CheckClaims(answer, Expect(now));
}

// RFC 7662: the issuer says whether the token is active and what it carries. Never under
// mutex_: the issuer may be slow.
ResourceGuard::IntrospectionAnswer ResourceGuard::AskIntrospection(const std::string& token, std::int64_t now) const {
  auto body = fetch_({introspection_endpoint_, "token=" + FormEncode(token) + "&token_type_hint=access_token",
                      options_.introspection_client_id, options_.introspection_client_secret});
  if (!body.ok()) return {body.error(), false};
  auto answer = json::Parse(*body);
  if (!IsIntrospectionAnswer(answer)) {
    return {MakeError("auth.token_invalid", "access token refused: the issuer's introspection answer could not be read"),
            false};
  }
  return {JudgeIntrospection(std::move(answer).value(), now), true};
}

// The issuer's verdict on a token: cached by the token's digest (see the header), no answer
// never; requests with the same token while one asks wait for its answer and share it.
Result<TokenClaims> ResourceGuard::Introspect(const std::string& token, std::int64_t now) {
  if (token.size() > kMaxTokenBytes) return MakeError("auth.token_invalid", "access token refused: it is too large");
  const std::string digest = base::Sha256Hex(token);
  std::unique_lock lock(mutex_);
  if (auto cached = CachedIntrospection(digest, now)) return std::move(*cached);
  if (introspections_.InFlight(digest)) {
    auto shared = introspections_.Join(lock, digest, options_.max_issuer_wait);
    if (!shared) {
      return MakeError("auth.issuer_unreachable",
                       "the authorization server could not be asked: its introspection answer did not arrive in time");
    }
    return std::move(shared->verdict);
  }
  IntrospectionAnswer asked = introspections_.Lead(lock, digest, [&] { return AskIntrospection(token, now); });
  Result<TokenClaims>& verdict = asked.verdict;
  if (!asked.cacheable) return verdict;
  if (verdict.ok()) {
    MakeRoom(introspected_, options_.max_introspection_entries, now);
    introspected_[digest] = {*verdict, std::min(verdict->expires, now + options_.max_introspection_cache.count())};
  } else {
    MakeRoom(refused_, options_.max_refused_introspections, now);
    refused_[digest] = {verdict.error(), now + options_.refused_introspection_ttl.count()};
  }
  return verdict;
}

Result<AuthenticatedCaller> ResourceGuard::Grant(const TokenClaims& claims) const {
  AuthenticatedCaller caller;
  caller.subject = claims.subject;
  for (const std::string& grant : claims.grants) {
    auto it = options_.grant_tools.find(grant);
    if (it == options_.grant_tools.end()) continue;
    for (const std::string& tool : it->second) {
      if (tool == "*") caller.all_tools = true;
      caller.tools.insert(tool);
    }
  }
  if (!caller.all_tools && caller.tools.empty()) {
    return MakeError("auth.insufficient_scope", "the access token grants no scope that maps to a tool of this gateway");
  }
  return caller;
}

Result<AuthenticatedCaller> ResourceGuard::Authenticate(const std::string& authorization, std::int64_t now) {
  auto token = BearerToken(authorization);
  if (!token) return MakeError("auth.token_missing", "this gateway needs an OAuth access token (Authorization: Bearer)");
  auto claims = options_.introspection_client_id.empty() ? VerifyJwt(*token, now) : Introspect(*token, now);
  if (!claims.ok()) return claims.error();
  return Grant(*claims);
}

Challenge ResourceGuard::ChallengeFor(const Error& error) const {
  // Scopes a host may ask for; grants read from another claim are no scopes to ask for.
  std::vector<std::string> scopes;
  if (options_.grants_claim == "scope") {
    for (const auto& [grant, tools] : options_.grant_tools) scopes.push_back(grant);
  }
  const std::string scope = scopes.empty() ? std::string() : ", scope=\"" + Joined(scopes) + "\"";
  const std::string metadata = "resource_metadata=\"" + MetadataUrl() + "\"";
  Challenge challenge;
  challenge.message = error.message;
  if (error.code == "auth.token_missing") {
    challenge.www_authenticate = "Bearer " + metadata + scope;
  } else if (error.code == "auth.insufficient_scope") {
    challenge.status = 403;
    challenge.www_authenticate = "Bearer error=\"insufficient_scope\"" + scope + ", " + metadata;
  } else if (error.code == "auth.token_invalid" || error.code == "auth.token_expired") {
    challenge.www_authenticate = "Bearer error=\"invalid_token\", error_description=\"" + error.message + "\", " + metadata;
  } else {
    challenge.status = 503;  // the issuer could not be asked: not the caller's fault
  }
  return challenge;
}

std::string ResourceGuard::MetadataJson() const {
  json::Value scopes = json::Value::array();
  for (const auto& [grant, tools] : options_.grant_tools) scopes.push_back(grant);
  json::Value document = {{"resource", options_.audience},
                          {"authorization_servers", json::Value::array({options_.issuer})},
                          {"bearer_methods_supported", json::Value::array({"header"})},
                          {"resource_name", "udon-mcp gateway"}};
  if (options_.grants_claim == "scope") document["scopes_supported"] = scopes;
  return document.dump();
}

std::vector<std::string> ResourceGuard::MetadataPaths() const {
  const std::string path = PathOf(options_.audience);
  if (path.empty()) return {kWellKnown};
  return {kWellKnown + path, kWellKnown};
}

std::size_t ResourceGuard::CachedRefusals() {
  std::lock_guard lock(mutex_);
  return refused_.size();
}

std::size_t ResourceGuard::AwaitingIssuer() {
  std::lock_guard lock(mutex_);
  return jwks_fetch_.waiting() + introspections_.waiting();
}

std::string ResourceGuard::MetadataUrl() const { return OriginOf(options_.audience) + MetadataPaths().front(); }

}  // namespace udon::resource_auth
