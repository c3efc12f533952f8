#include "oauth/tokens.h"

#include <gtest/gtest.h>

namespace udon::oauth {
namespace {

TEST(TokenResponseParse, ReadsABearerResponse) {
  auto tokens = ParseTokenResponse(
      200, R"({"access_token":"at-value","token_type":"bearer","expires_in":60,"refresh_token":"rt-value","scope":"a b"})");
  ASSERT_TRUE(tokens.ok()) << tokens.error().Describe();
  EXPECT_EQ(tokens->access_token, "at-value");
  EXPECT_EQ(tokens->token_type, "Bearer");
  EXPECT_EQ(tokens->expires_in, 60);
  StoredLogin login;
  login.refresh_token = "old";
  ApplyTokens(*tokens, 1000, login);
  EXPECT_EQ(login.expires_at_unix, 1060);
  EXPECT_EQ(login.refresh_token, "rt-value");
  EXPECT_EQ(login.scopes, (std::vector<std::string>{"a", "b"}));
  // A refresh without a new refresh token keeps the old one.
  ApplyTokens(*ParseTokenResponse(200, R"({"access_token":"x","token_type":"Bearer"})"), 2000, login);
  EXPECT_EQ(login.refresh_token, "rt-value");
  EXPECT_EQ(login.expires_at_unix, 0);
}

// What a hostile token endpoint answers: never a stored login, never its bytes in the error.
TEST(TokenResponseParse, RefusesGarbageOtherTypesAndErrorsWithoutEchoingThem) {
  const std::vector<std::pair<long, std::string>> answers = {
      {200, "<html>secret-page</html>"},
      {200, "[]"},
      {200, R"({"access_token":"secret-token","token_type":"DPoP"})"},
      {200, R"({"access_token":"secret-token"})"},
      {200, R"({"access_token":"","token_type":"Bearer"})"},
      {200, R"({"access_token":"secret-token","token_type":"Bearer","expires_in":"60"})"},
      {200, R"({"access_token":"secret-token","token_type":"Bearer","expires_in":-1})"},
      {200, R"({"access_token":"secret-token","access_token":"other","token_type":"Bearer"})"},
      {200, R"({"access_token":")" + std::string(20000, 'a') + R"(","token_type":"Bearer"})"},
      {400, R"({"error":"invalid_grant","error_description":"secret-description"})"},
      {500, "secret-page"},
  };
  for (const auto& [status, body] : answers) {
    auto tokens = ParseTokenResponse(status, body);
    ASSERT_FALSE(tokens.ok()) << body.substr(0, 80);
    EXPECT_EQ(tokens.error().code, "auth.token_failed");
    const std::string shown = tokens.error().Describe() + tokens.error().details.dump();
    EXPECT_EQ(shown.find("secret"), std::string::npos) << shown;
  }
  EXPECT_EQ(ParseTokenResponse(400, R"({"error":"invalid_grant"})").error().details["error"], "invalid_grant");
  EXPECT_EQ(ParseTokenResponse(400, R"({"error":"x\"y"})").error().details["error"], "invalid");
}

TEST(RegistrationResponseParse, ReadsAPublicOrConfidentialClient) {
  auto client = ParseRegistrationResponse(201, R"({"client_id":"c1","token_endpoint_auth_method":"none"})");
  ASSERT_TRUE(client.ok());
  EXPECT_EQ(client->client_id, "c1");
  EXPECT_EQ(client->kind, ClientKind::kDynamic);
  EXPECT_EQ(client->token_endpoint_auth_method, "none");
  auto confidential = ParseRegistrationResponse(200, R"({"client_id":"c2","client_secret":"s","client_secret_expires_at":0})");
  ASSERT_TRUE(confidential.ok());
  EXPECT_EQ(confidential->token_endpoint_auth_method, "client_secret_basic");
}

TEST(RegistrationResponseParse, RefusesWhatIsNotRfc7591) {
  for (const auto& [status, body] : std::vector<std::pair<long, std::string>>{
           {400, R"({"error":"invalid_redirect_uri"})"}, {201, "{}"}, {201, R"({"client_id":7})"},
           {201, R"({"client_id":"c","token_endpoint_auth_method":"private_key_jwt"})"},
           {201, R"({"client_id":"c","token_endpoint_auth_method":"client_secret_post"})"}, {201, "nope"}}) {
    auto client = ParseRegistrationResponse(status, body);
    ASSERT_FALSE(client.ok()) << body;
    EXPECT_EQ(client.error().code, "auth.registration_failed");
  }
}

}  // namespace
}  // namespace udon::oauth
