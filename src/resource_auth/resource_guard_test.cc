// The protected resource's judgement of requests: discovery through the issuer's metadata,
// key rotation with a bounded re-fetch, introspection and its cache, grants to tools, and
// the RFC 6750 / RFC 9728 answers. The issuer is a fake fetcher that counts requests.
#include "resource_auth/resource_guard.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "resource_auth/test_tokens.h"

namespace udon::resource_auth {
namespace {

using testing::kAudience;
using testing::kIssuer;
using testing::kNow;
const std::string kJwksUri = "https://issuer.example/jwks";
const std::string kIntrospection = "https://issuer.example/token/introspection";

struct FakeIssuer {
  std::map<std::string, std::string> bodies;
  std::map<std::string, int> asked;
  std::vector<FetchRequest> requests;
  Fetcher fetcher() {
    return [this](const FetchRequest& request) -> Result<std::string> {
      ++asked[request.url];
      requests.push_back(request);
      auto it = bodies.find(request.url);
      if (it == bodies.end()) return MakeError("auth.issuer_unreachable", "404");
      return it->second;
    };
  }
};

ResourceGuardOptions Options() {
  ResourceGuardOptions options;
  options.issuer = kIssuer;
  options.audience = kAudience;
  options.grant_tools = {{"convert", {"convert_units"}}, {"admin", {"*"}}};
  return options;
}

json::Value Claims(const std::string& scope) {
  return {{"iss", kIssuer}, {"aud", kAudience}, {"sub", "alice"}, {"exp", kNow + 600}, {"scope", scope}};
}

std::unique_ptr<ResourceGuard> Guard(FakeIssuer& issuer, ResourceGuardOptions options = Options()) {
  auto guard = ResourceGuard::Create(std::move(options), issuer.fetcher());
  EXPECT_TRUE(guard.ok());
  return std::move(guard).value();
}

std::string CodeOf(const Result<AuthenticatedCaller>& result) { return result.ok() ? "ok" : result.error().code; }

TEST(ResourceGuardTest, MetadataIsTheIssuersOwnAndNamesItsKeys) {
  FakeIssuer issuer;
  issuer.bodies[kIssuer + "/.well-known/openid-configuration"] =
      json::Value({{"issuer", "https://evil.example"}, {"jwks_uri", kJwksUri}}).dump();
  EXPECT_EQ(Guard(issuer)->Discover(kNow).error().code, "auth.issuer_metadata_invalid");
  EXPECT_EQ(issuer.asked[kIssuer + "/.well-known/oauth-authorization-server"], 1);  // RFC 8414 first
  issuer.bodies[kIssuer + "/.well-known/openid-configuration"] =
      json::Value({{"issuer", kIssuer}, {"jwks_uri", "http://issuer.example/jwks"}}).dump();
  EXPECT_EQ(Guard(issuer)->Discover(kNow).error().code, "auth.issuer_metadata_invalid");  // keys over plain HTTP
  FakeIssuer silent;
  EXPECT_EQ(Guard(silent)->Discover(kNow).error().code, "auth.issuer_unreachable");
}

TEST(ResourceGuardTest, RotatedKeysAreFetchedOnceForAnUnknownKidWithinTheInterval) {
  FakeIssuer issuer;
  issuer.bodies[kIssuer + "/.well-known/oauth-authorization-server"] =
      json::Value({{"issuer", kIssuer}, {"jwks_uri", kJwksUri}}).dump();
  auto old_key = testing::Generate("ES256");
  auto new_key = testing::Generate("ES256");
  issuer.bodies[kJwksUri] = json::Value({{"keys", {testing::Jwk(old_key.get(), "old")}}}).dump();
  auto guard = Guard(issuer);
  ASSERT_TRUE(guard->Discover(kNow).ok());
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer " + testing::Token("ES256", old_key.get(), "old", Claims("convert")), kNow)),
            "ok");
  EXPECT_EQ(issuer.asked[kJwksUri], 1);
  // The issuer rotates: the new kid fetches the set again and is accepted.
  issuer.bodies[kJwksUri] = json::Value({{"keys", {testing::Jwk(new_key.get(), "new")}}}).dump();
  const std::string fresh = testing::Token("ES256", new_key.get(), "new", Claims("convert"));
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer " + fresh, kNow)), "ok");
  EXPECT_EQ(issuer.asked[kJwksUri], 2);
  // Made-up kids do not make the gateway hammer the issuer.
  for (int i = 0; i < 20; ++i) {
    const std::string made_up = testing::Token("ES256", new_key.get(), "kid" + std::to_string(i), Claims("convert"));
    EXPECT_EQ(CodeOf(guard->Authenticate("Bearer " + made_up, kNow + 1)), "auth.token_invalid");
  }
  EXPECT_EQ(issuer.asked[kJwksUri], 2);
  // The old key is gone from the set: its tokens no longer pass.
  const std::string stale = testing::Token("ES256", old_key.get(), "old", Claims("convert"));
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer " + stale, kNow + 1)), "auth.token_invalid");
}

// One endpoint of the issuer that stalls when told to: each request to it waits until the
// test lets them all go, or at most kStallBound, so that a guard that waits for it under
// its lock, or never lets it go, fails the test instead of hanging it. It counts the
// requests it was sent and holds, and answers as the fake issuer does.
struct StallingEndpoint {
  static constexpr std::chrono::seconds kStallBound{20};
  StallingEndpoint(FakeIssuer& faked, std::string stalled_url) : issuer(faked), url(std::move(stalled_url)) {}
  FakeIssuer& issuer;
  const std::string url;
  std::mutex mutex;
  std::condition_variable changed;
  bool stall = false;
  int held = 0;
  bool released = false;
  bool released_by_test = false;
  int fetches = 0;

  Fetcher fetcher() {
    Fetcher inner = issuer.fetcher();
    return [this, inner](const FetchRequest& request) -> Result<std::string> {
      std::unique_lock lock(mutex);
      if (request.url == url) ++fetches;
      if (request.url == url && stall) {
        ++held;
        changed.notify_all();
        released_by_test = changed.wait_for(lock, kStallBound, [this] { return released; });
        --held;
      }
      return inner(request);
    };
  }
  int Held() {
    std::lock_guard lock(mutex);
    return held;
  }
  void AwaitFetching() {
    std::unique_lock lock(mutex);
    changed.wait(lock, [this] { return held > 0; });
  }
  void Release() {
    std::lock_guard lock(mutex);
    released = true;
    changed.notify_all();
  }
};

// A guard that has fetched the issuer's set with the key "old", and a JWKS endpoint that
// stalls from now on when told to: the set-up of the refetch tests below.
class StalledRefetchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    issuer.bodies[kIssuer + "/.well-known/oauth-authorization-server"] =
        json::Value({{"issuer", kIssuer}, {"jwks_uri", kJwksUri}}).dump();
    issuer.bodies[kJwksUri] = json::Value({{"keys", {testing::Jwk(old_key.get(), "old")}}}).dump();
    auto created = ResourceGuard::Create(Options(), jwks.fetcher());
    ASSERT_TRUE(created.ok());
    guard = std::move(created).value();
    ASSERT_TRUE(guard->Discover(kNow).ok());
  }

  FakeIssuer issuer;
  decltype(testing::Generate("ES256")) old_key = testing::Generate("ES256");
  decltype(testing::Generate("ES256")) new_key = testing::Generate("ES256");
  StallingEndpoint jwks{issuer, kJwksUri};
  std::unique_ptr<ResourceGuard> guard;
};

// A slow (or hostile) issuer stalls only the requests that need its new keys: a token whose
// key is cached is judged while the refetch an unknown kid started is still in flight.
TEST_F(StalledRefetchTest, ACachedKeyIsJudgedWhileARefetchForAnUnknownKidHangs) {
  issuer.bodies[kJwksUri] =
      json::Value({{"keys", {testing::Jwk(old_key.get(), "old"), testing::Jwk(new_key.get(), "new")}}}).dump();
  jwks.stall = true;
  const std::string rotated = testing::Token("ES256", new_key.get(), "new", Claims("convert"));
  std::string rotated_code;
  std::thread unknown_kid([&] { rotated_code = CodeOf(guard->Authenticate("Bearer " + rotated, kNow + 1)); });
  jwks.AwaitFetching();
  const std::string cached = testing::Token("ES256", old_key.get(), "old", Claims("convert"));
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer " + cached, kNow + 1)), "ok");
  jwks.Release();
  unknown_kid.join();
  EXPECT_TRUE(jwks.released_by_test) << "the cached key waited for the issuer's slow answer";
  EXPECT_EQ(rotated_code, "ok");
  EXPECT_EQ(jwks.fetches, 2);
}

// Requests that need the new keys wait for the one fetch in flight and share its answer:
// the issuer is asked once, however many arrive.
TEST_F(StalledRefetchTest, RequestsForANewKidShareTheOneFetchInFlight) {
  issuer.bodies[kJwksUri] = json::Value({{"keys", {testing::Jwk(new_key.get(), "new")}}}).dump();
  jwks.stall = true;
  const std::string rotated = testing::Token("ES256", new_key.get(), "new", Claims("convert"));
  std::vector<std::string> codes(4);
  std::vector<std::thread> callers;
  for (std::string& code : codes) {
    callers.emplace_back([&] { code = CodeOf(guard->Authenticate("Bearer " + rotated, kNow + 1)); });
  }
  jwks.AwaitFetching();
  jwks.Release();
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(codes, std::vector<std::string>(4, "ok"));
  EXPECT_EQ(jwks.fetches, 2);  // Discover's, then the one refetch
}

TEST(ResourceGuardTest, GrantsDecideTheToolsAndNoGrantIsForbidden) {
  FakeIssuer issuer;
  issuer.bodies[kIssuer + "/.well-known/oauth-authorization-server"] =
      json::Value({{"issuer", kIssuer}, {"jwks_uri", kJwksUri}}).dump();
  auto key = testing::Generate("EdDSA");
  issuer.bodies[kJwksUri] = json::Value({{"keys", {testing::Jwk(key.get(), "k")}}}).dump();
  auto guard = Guard(issuer);
  ASSERT_TRUE(guard->Discover(kNow).ok());
  auto narrow = guard->Authenticate("Bearer " + testing::Token("EdDSA", key.get(), "k", Claims("openid convert")), kNow);
  ASSERT_TRUE(narrow.ok());
  EXPECT_EQ(narrow->subject, "alice");
  EXPECT_FALSE(narrow->all_tools);
  EXPECT_EQ(narrow->tools, (std::set<std::string, std::less<>>{"convert_units"}));
  auto wide = guard->Authenticate("Bearer " + testing::Token("EdDSA", key.get(), "k", Claims("admin")), kNow);
  ASSERT_TRUE(wide.ok());
  EXPECT_TRUE(wide->all_tools);
  auto none = guard->Authenticate("Bearer " + testing::Token("EdDSA", key.get(), "k", Claims("openid")), kNow);
  EXPECT_EQ(CodeOf(none), "auth.insufficient_scope");
  const Challenge forbidden = guard->ChallengeFor(none.error());
  EXPECT_EQ(forbidden.status, 403);
  EXPECT_NE(forbidden.www_authenticate.find("error=\"insufficient_scope\""), std::string::npos);
  // Another claim as the grants: a roles array.
  ResourceGuardOptions by_role = Options();
  by_role.grants_claim = "roles";
  auto role_guard = Guard(issuer, by_role);
  ASSERT_TRUE(role_guard->Discover(kNow).ok());
  json::Value claims = Claims("admin");
  claims["roles"] = json::Value::array({"convert"});
  auto roled = role_guard->Authenticate("Bearer " + testing::Token("EdDSA", key.get(), "k", claims), kNow);
  ASSERT_TRUE(roled.ok());
  EXPECT_FALSE(roled->all_tools);
  // Roles are no scopes a host could ask for: the challenge names none.
  const Challenge by_role_challenge = role_guard->ChallengeFor(role_guard->Authenticate("", kNow).error());
  EXPECT_EQ(by_role_challenge.www_authenticate.find("scope="), std::string::npos);
}

TEST(ResourceGuardTest, ChallengesNameTheMetadataAndNeverTheToken) {
  FakeIssuer issuer;
  auto guard = Guard(issuer);
  EXPECT_EQ(guard->MetadataUrl(), "https://gateway.example/.well-known/oauth-protected-resource/mcp");
  EXPECT_EQ(guard->MetadataPaths(),
            (std::vector<std::string>{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}));
  auto metadata = json::Parse(guard->MetadataJson());
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ((*metadata)["resource"], kAudience);
  EXPECT_EQ((*metadata)["authorization_servers"], json::Value::array({kIssuer}));
  for (const char* header : {"", "Basic YWxpY2U6cHc=", "Bearer", "Bearer ", "Bearer a b"}) {
    auto missing = guard->Authenticate(header, kNow);
    EXPECT_EQ(CodeOf(missing), "auth.token_missing") << header;
  }
  const Challenge missing = guard->ChallengeFor(guard->Authenticate("", kNow).error());
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(missing.www_authenticate,
            "Bearer resource_metadata=\"https://gateway.example/.well-known/oauth-protected-resource/mcp\", "
            "scope=\"admin convert\"");
  const Challenge invalid = guard->ChallengeFor(MakeError("auth.token_invalid", "access token refused: x"));
  EXPECT_EQ(invalid.status, 401);
  EXPECT_EQ(invalid.www_authenticate.rfind("Bearer error=\"invalid_token\"", 0), 0U);
  EXPECT_EQ(guard->ChallengeFor(MakeError("auth.issuer_unreachable", "x")).status, 503);
}

TEST(ResourceGuardTest, OpaqueTokensAreIntrospectedAndCachedUntilTheirExpiry) {
  FakeIssuer issuer;
  issuer.bodies[kIssuer + "/.well-known/oauth-authorization-server"] =
      json::Value({{"issuer", kIssuer}, {"introspection_endpoint", kIntrospection}}).dump();
  ResourceGuardOptions options = Options();
  options.introspection_client_id = "gateway";
  options.introspection_client_secret = "s3cret";
  auto guard = Guard(issuer, options);
  ASSERT_TRUE(guard->Discover(kNow).ok());
  json::Value answer = Claims("convert");
  answer["active"] = true;
  answer["exp"] = kNow + 100;
  issuer.bodies[kIntrospection] = answer.dump();
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer opaque-1", kNow)), "ok");
  ASSERT_EQ(issuer.requests.size(), 2U);
  EXPECT_EQ(issuer.requests.back().form, "token=opaque-1&token_type_hint=access_token");
  EXPECT_EQ(issuer.requests.back().basic_user, "gateway");
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer opaque-1", kNow + 50)), "ok");
  EXPECT_EQ(issuer.asked[kIntrospection], 1);  // cached
  // Past its exp the cache does not answer; the issuer is asked again.
  answer["active"] = false;
  issuer.bodies[kIntrospection] = answer.dump();
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer opaque-1", kNow + 100)), "auth.token_invalid");
  EXPECT_EQ(issuer.asked[kIntrospection], 2);
  // An active answer for another audience is still refused.
  answer = Claims("convert");
  answer["active"] = true;
  answer["aud"] = "https://other.example/mcp";
  issuer.bodies[kIntrospection] = answer.dump();
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer opaque-2", kNow)), "auth.token_invalid");
}

// An attacker repeating one bad opaque token at rate costs the issuer one introspection
// per refusal TTL, not one per request; an issuer that could not be asked is no verdict
// and is asked again at once.
TEST(ResourceGuardTest, ARefusedOpaqueTokenIsIntrospectedOncePerTtlAndAnUnreachableIssuerIsNotCached) {
  FakeIssuer issuer;
  issuer.bodies[kIssuer + "/.well-known/oauth-authorization-server"] =
      json::Value({{"issuer", kIssuer}, {"introspection_endpoint", kIntrospection}}).dump();
  ResourceGuardOptions options = Options();
  options.introspection_client_id = "gateway";
  options.introspection_client_secret = "s3cret";
  auto guard = Guard(issuer, options);
  ASSERT_TRUE(guard->Discover(kNow).ok());
  issuer.bodies[kIntrospection] = json::Value({{"active", false}}).dump();
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(CodeOf(guard->Authenticate("Bearer bad-token", kNow + i % 5)), "auth.token_invalid");
  }
  EXPECT_EQ(issuer.asked[kIntrospection], 1);
  // A refused answer for another audience is a verdict too.
  json::Value foreign = Claims("convert");
  foreign["active"] = true;
  foreign["aud"] = "https://other.example/mcp";
  issuer.bodies[kIntrospection] = foreign.dump();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(CodeOf(guard->Authenticate("Bearer other-aud", kNow)), "auth.token_invalid");
  EXPECT_EQ(issuer.asked[kIntrospection], 2);
  // Past the refusal's TTL the issuer is asked again (a token may be activated late).
  json::Value active = Claims("convert");
  active["active"] = true;
  issuer.bodies[kIntrospection] = active.dump();
  const std::int64_t later = kNow + options.refused_introspection_ttl.count();
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer bad-token", later)), "ok");
  EXPECT_EQ(issuer.asked[kIntrospection], 3);
  // No answer is no verdict: the next request asks again.
  issuer.bodies.erase(kIntrospection);
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer flaky", kNow)), "auth.issuer_unreachable");
  issuer.bodies[kIntrospection] = active.dump();
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer flaky", kNow)), "ok");
  EXPECT_EQ(issuer.asked[kIntrospection], 5);
}

// The refusal cache is bounded: a stream of distinct bad tokens does not grow it past its
// cap, and the issuer is asked for each (as it would be without a cache).
TEST(ResourceGuardTest, TheRefusalCacheStaysWithinItsCap) {
  FakeIssuer issuer;
  issuer.bodies[kIssuer + "/.well-known/oauth-authorization-server"] =
      json::Value({{"issuer", kIssuer}, {"introspection_endpoint", kIntrospection}}).dump();
  ResourceGuardOptions options = Options();
  options.introspection_client_id = "gateway";
  options.introspection_client_secret = "s3cret";
  options.max_refused_introspections = 8;
  auto guard = Guard(issuer, options);
  ASSERT_TRUE(guard->Discover(kNow).ok());
  issuer.bodies[kIntrospection] = json::Value({{"active", false}}).dump();
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(CodeOf(guard->Authenticate("Bearer bad-" + std::to_string(i), kNow)), "auth.token_invalid");
    EXPECT_LE(guard->CachedRefusals(), 8U);
  }
  EXPECT_EQ(issuer.asked[kIntrospection], 100);
}

// Requests with the same opaque token that arrive together: `kCallers` at once, released
// only when every one of them is either at the issuer's introspection endpoint or waiting
// for an answer in flight.
class ConcurrentIntrospectionTest : public ::testing::Test {
 protected:
  static constexpr int kCallers = 50;

  std::unique_ptr<ResourceGuard> Guard(std::chrono::seconds max_issuer_wait = std::chrono::seconds(10)) {
    issuer.bodies[kIssuer + "/.well-known/oauth-authorization-server"] =
        json::Value({{"issuer", kIssuer}, {"introspection_endpoint", kIntrospection}}).dump();
    ResourceGuardOptions options = Options();
    options.introspection_client_id = "gateway";
    options.introspection_client_secret = "s3cret";
    options.max_issuer_wait = max_issuer_wait;
    auto guard = ResourceGuard::Create(options, introspection.fetcher());
    EXPECT_TRUE(guard.ok());
    EXPECT_TRUE((*guard)->Discover(kNow).ok());
    introspection.stall = true;
    return std::move(guard).value();
  }

  std::vector<std::string> AllAtOnce(ResourceGuard& guard, const std::string& token) {
    std::vector<std::string> codes(kCallers);
    std::atomic<int> finished = 0;
    std::vector<std::thread> callers;
    for (std::string& code : codes) {
      callers.emplace_back([&] {
        code = CodeOf(guard.Authenticate("Bearer " + token, kNow));
        ++finished;
      });
    }
    while (introspection.Held() + static_cast<int>(guard.AwaitingIssuer()) + finished < kCallers) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    introspection.Release();
    for (std::thread& caller : callers) caller.join();
    return codes;
  }

  FakeIssuer issuer;
  StallingEndpoint introspection{issuer, kIntrospection};
};

// An attacker sending one bad token from many connections at once costs the issuer one
// introspection: the first request asks, the others share its answer.
TEST_F(ConcurrentIntrospectionTest, IdenticalBadTokensArrivingTogetherShareOneIntrospection) {
  auto guard = Guard();
  issuer.bodies[kIntrospection] = json::Value({{"active", false}}).dump();
  EXPECT_EQ(AllAtOnce(*guard, "bad-token"), std::vector<std::string>(kCallers, "auth.token_invalid"));
  EXPECT_EQ(introspection.fetches, 1);
}

// No answer is shared too (each waiter refused with the code a lone request gets), and is
// still not cached: the next request asks again.
TEST_F(ConcurrentIntrospectionTest, AnIssuerThatDoesNotAnswerRefusesAllItsWaitersOnce) {
  auto guard = Guard();
  EXPECT_EQ(AllAtOnce(*guard, "bad-token"), std::vector<std::string>(kCallers, "auth.issuer_unreachable"));
  EXPECT_EQ(introspection.fetches, 1);
  issuer.bodies[kIntrospection] = json::Value({{"active", false}}).dump();
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer bad-token", kNow)), "auth.token_invalid");
  EXPECT_EQ(introspection.fetches, 2);
}

TEST_F(ConcurrentIntrospectionTest, AGoodTokenArrivingTogetherIsIntrospectedOnce) {
  auto guard = Guard();
  json::Value active = Claims("convert");
  active["active"] = true;
  issuer.bodies[kIntrospection] = active.dump();
  EXPECT_EQ(AllAtOnce(*guard, "good-token"), std::vector<std::string>(kCallers, "ok"));
  EXPECT_EQ(introspection.fetches, 1);
}

// The wait for another request's introspection is bounded: past it, the waiter is refused
// as when the issuer cannot be asked, and does not ask the issuer itself.
TEST_F(ConcurrentIntrospectionTest, AWaiterIsRefusedWhenTheAnswerInFlightTakesTooLong) {
  auto guard = Guard(std::chrono::seconds(0));
  issuer.bodies[kIntrospection] = json::Value({{"active", false}}).dump();
  std::string first;
  std::thread asking([&] { first = CodeOf(guard->Authenticate("Bearer slow-token", kNow)); });
  introspection.AwaitFetching();
  std::string waiter;
  std::thread waiting([&] { waiter = CodeOf(guard->Authenticate("Bearer slow-token", kNow)); });
  waiting.join();  // joined before the release: a waiter held at the issuer would fail this
  introspection.Release();
  asking.join();
  EXPECT_EQ(waiter, "auth.issuer_unreachable");
  EXPECT_EQ(first, "auth.token_invalid");
  EXPECT_EQ(introspection.fetches, 1);
  EXPECT_TRUE(introspection.released_by_test);
}

// An introspection answer for a DPoP- or certificate-bound token (token_type DPoP, a cnf
// member) is no bearer token's: without the holder's proof it is refused.
TEST(ResourceGuardTest, AnIntrospectedSenderConstrainedTokenIsRefused) {
  FakeIssuer issuer;
  issuer.bodies[kIssuer + "/.well-known/oauth-authorization-server"] =
      json::Value({{"issuer", kIssuer}, {"introspection_endpoint", kIntrospection}}).dump();
  ResourceGuardOptions options = Options();
  options.introspection_client_id = "gateway";
  options.introspection_client_secret = "s3cret";
  auto guard = Guard(issuer, options);
  ASSERT_TRUE(guard->Discover(kNow).ok());
  json::Value answer = Claims("convert");
  answer["active"] = true;
  answer["token_type"] = "DPoP";
  issuer.bodies[kIntrospection] = answer.dump();
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer stolen-dpop", kNow)), "auth.token_invalid");
  answer["token_type"] = "Bearer";
  answer["cnf"] = {{"x5t#S256", "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"}};
  issuer.bodies[kIntrospection] = answer.dump();
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer stolen-mtls", kNow)), "auth.token_invalid");
  answer.erase("cnf");
  issuer.bodies[kIntrospection] = answer.dump();
  EXPECT_EQ(CodeOf(guard->Authenticate("Bearer plain", kNow)), "ok");
}

TEST(ResourceGuardTest, ConfigurationMustBeUsable) {
  FakeIssuer issuer;
  ResourceGuardOptions options = Options();
  options.issuer = "http://issuer.example";  // plain HTTP to another host
  EXPECT_FALSE(ResourceGuard::Create(options, issuer.fetcher()).ok());
  options = Options();
  options.grant_tools.clear();
  EXPECT_FALSE(ResourceGuard::Create(options, issuer.fetcher()).ok());
  options = Options();
  options.issuer = "http://127.0.0.1:4000";
  EXPECT_TRUE(ResourceGuard::Create(options, issuer.fetcher()).ok());
}

}  // namespace
}  // namespace udon::resource_auth
