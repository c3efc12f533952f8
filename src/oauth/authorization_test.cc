#include "oauth/authorization.h"

#include <set>

#include <gtest/gtest.h>

namespace udon::oauth {
namespace {

TEST(Pkce, MatchesTheRfc7636TestVector) {
  EXPECT_EQ(S256Challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

TEST(Pkce, VerifiersAndStatesAreFreshAndInTheAlphabet) {
  std::set<std::string> seen;
  for (int i = 0; i < 16; ++i) {
    Result<Pkce> pkce = MakePkce();
    ASSERT_TRUE(pkce.ok());
    EXPECT_EQ(pkce->verifier.size(), 43u);
    EXPECT_EQ(pkce->verifier.find_first_not_of(
                  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
              std::string::npos);
    EXPECT_EQ(pkce->challenge, S256Challenge(pkce->verifier));
    EXPECT_TRUE(seen.insert(pkce->verifier).second);
    Result<std::string> state = MakeState();
    ASSERT_TRUE(state.ok());
    EXPECT_TRUE(seen.insert(*state).second);
  }
}

TEST(Form, EncodesAndDecodes) {
  EXPECT_EQ(FormEncode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
  auto pairs = ParseForm("a=1&b=x+y%21&&c");
  ASSERT_TRUE(pairs.has_value());
  EXPECT_EQ(*pairs, (std::vector<std::pair<std::string, std::string>>{{"a", "1"}, {"b", "x y!"}, {"c", ""}}));
  EXPECT_FALSE(ParseForm("a=%").has_value());
  EXPECT_FALSE(ParseForm("a=%2").has_value());
  EXPECT_FALSE(ParseForm("a=%zz").has_value());
}

TEST(AuthorizationUrlTest, CarriesEveryParameterEncoded) {
  AuthorizationRequest request{"https://as.example/auth?tenant=1", "client 1", "http://127.0.0.1:5/callback",
                               "challenge", "state", "mcp:tools offline_access", "https://m.example/mcp"};
  EXPECT_EQ(AuthorizationUrl(request),
            "https://as.example/auth?tenant=1&response_type=code&client_id=client%201&redirect_uri=http%3A%2F%2F127.0.0.1%"
            "3A5%2Fcallback&code_challenge=challenge&code_challenge_method=S256&state=state&scope=mcp%3Atools%"
            "20offline_access&resource=https%3A%2F%2Fm.example%2Fmcp");
  request.resource.reset();
  request.scope.reset();
  EXPECT_EQ(AuthorizationUrl(request).find("resource="), std::string::npos);
  EXPECT_EQ(AuthorizationUrl(request).find("scope="), std::string::npos);
}

RedirectExpectation Expected(bool iss_required = true) {
  return {"/callback", "the-state", "https://as.example", iss_required};
}

TEST(AuthorizationResponse, ReturnsTheCodeOfAMatchingRedirect) {
  auto code = ParseAuthorizationResponse("/callback?code=abc&state=the-state&iss=https%3A%2F%2Fas.example", Expected());
  ASSERT_TRUE(code.ok()) << code.error().Describe();
  EXPECT_EQ(*code, "abc");
  EXPECT_TRUE(ParseAuthorizationResponse("/callback?code=abc&state=the-state", Expected(false)).ok());
}

TEST(AuthorizationResponse, RefusesAnotherOrMissingState) {
  for (const char* target : {"/callback?code=abc&iss=https%3A%2F%2Fas.example",
                             "/callback?code=abc&state=other&iss=https%3A%2F%2Fas.example",
                             "/callback?code=abc&state=the-stat&iss=https%3A%2F%2Fas.example",
                             "/callback?error=access_denied&state=forged"}) {
    auto code = ParseAuthorizationResponse(target, Expected());
    ASSERT_FALSE(code.ok()) << target;
    EXPECT_EQ(code.error().code, "auth.state_mismatch") << target;
  }
}

// A mix-up attack: a code from another authorization server, delivered with our state.
TEST(AuthorizationResponse, RefusesAnotherIssuerOrAMissingPromisedIss) {
  for (const char* target : {"/callback?code=abc&state=the-state&iss=https%3A%2F%2Fevil.example",
                             "/callback?code=abc&state=the-state&iss=https%3A%2F%2Fas.example%2F",
                             "/callback?code=abc&state=the-state"}) {
    auto code = ParseAuthorizationResponse(target, Expected());
    ASSERT_FALSE(code.ok()) << target;
    EXPECT_EQ(code.error().code, "auth.iss_mismatch") << target;
  }
  // Not promised, but sent and wrong: still refused.
  EXPECT_EQ(ParseAuthorizationResponse("/callback?code=abc&state=the-state&iss=https%3A%2F%2Fevil.example", Expected(false))
                .error()
                .code,
            "auth.iss_mismatch");
}

TEST(AuthorizationResponse, RefusesDuplicatesOtherPathsAndNoCode) {
  for (const char* target : {"/callback?code=abc&state=the-state&state=the-state&iss=https%3A%2F%2Fas.example",
                             "/callback?code=abc&code=def&state=the-state&iss=https%3A%2F%2Fas.example",
                             "/favicon.ico", "/callbackx?code=abc&state=the-state",
                             "/callback?state=the-state&iss=https%3A%2F%2Fas.example",
                             "/callback?code=%zz&state=the-state"}) {
    auto code = ParseAuthorizationResponse(target, Expected());
    ASSERT_FALSE(code.ok()) << target;
    EXPECT_EQ(code.error().code, "auth.redirect_invalid") << target;
  }
}

TEST(AuthorizationResponse, ReportsADenialWithItsCodeOnly) {
  auto code = ParseAuthorizationResponse(
      "/callback?error=access_denied&error_description=secret%20text&state=the-state&iss=https%3A%2F%2Fas.example", Expected());
  ASSERT_FALSE(code.ok());
  EXPECT_EQ(code.error().code, "auth.login_denied");
  EXPECT_EQ(code.error().details["error"], "access_denied");
  EXPECT_EQ(code.error().Describe().find("secret"), std::string::npos);
  EXPECT_EQ(code.error().details.dump().find("secret"), std::string::npos);
}

}  // namespace
}  // namespace udon::oauth
