#include "oauth/discovery.h"

#include <gtest/gtest.h>

namespace udon::oauth {
namespace {

TEST(HttpUrlParse, TakesApartAndRefusesWhatCouldMisleadAComparison) {
  Result<HttpUrl> url = ParseHttpUrl("HTTPS://MCP.Example:443/a/mcp?x=1");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->Origin(), "https://mcp.example");
  EXPECT_EQ(url->path, "/a/mcp");
  EXPECT_EQ(url->query, "x=1");
  EXPECT_EQ(ParseHttpUrl("http://127.0.0.1:8080")->Origin(), "http://127.0.0.1:8080");
  EXPECT_TRUE(ParseHttpUrl("http://[::1]:9/x")->IsLoopback());
  // A name that starts like a loopback address is a name, resolved anywhere.
  EXPECT_FALSE(ParseHttpUrl("http://127.0.0.1.evil.example/")->IsLoopback());
  EXPECT_FALSE(ParseHttpUrl("http://127.evil.example/")->IsLoopback());
  EXPECT_FALSE(ParseHttpUrl("http://localhost.evil.example/")->IsLoopback());
  for (const char* bad : {"https://user@evil.example/", "https://good.example@evil.example/", "ftp://x/",
                          "https://x/#frag", "https:///path", "https://x:0/", "https://x:65536/", "https://x:8a/",
                          "https://ex ample/", "https://x/\n", "//x/", "https://[::1/", "https://x\\@y/"}) {
    Result<HttpUrl> parsed = ParseHttpUrl(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().code, "auth.url_invalid") << bad;
  }
}

TEST(CanonicalResourceTest, DropsDefaultPortQueryAndTrailingSlash) {
  EXPECT_EQ(*CanonicalResource("HTTPS://Mcp.Example:443/mcp/"), "https://mcp.example/mcp");
  EXPECT_EQ(*CanonicalResource("https://mcp.example/"), "https://mcp.example");
  EXPECT_EQ(*CanonicalResource("http://127.0.0.1:3000/mcp?session=1"), "http://127.0.0.1:3000/mcp");
}

TEST(WwwAuthenticate, ReadsTheBearerChallengeAmongOthers) {
  auto challenge = ParseWwwAuthenticate(
      R"(Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://m.example/.well-known/oauth-protected-resource/mcp")");
  ASSERT_TRUE(challenge.has_value());
  EXPECT_EQ(challenge->error, "insufficient_scope");
  EXPECT_EQ(challenge->scope, "a b");
  EXPECT_EQ(challenge->resource_metadata, "https://m.example/.well-known/oauth-protected-resource/mcp");
  auto token68 = ParseWwwAuthenticate(R"(Basic dXNlcg==, bearer Resource_Metadata="https://m.example/x")");
  ASSERT_TRUE(token68.has_value());
  EXPECT_EQ(token68->resource_metadata, "https://m.example/x");
  auto bare = ParseWwwAuthenticate("Bearer");
  ASSERT_TRUE(bare.has_value());
  EXPECT_FALSE(bare->resource_metadata.has_value());
  auto escaped = ParseWwwAuthenticate(R"(Bearer scope="a\"b")");
  ASSERT_TRUE(escaped.has_value());
  EXPECT_EQ(escaped->scope, "a\"b");
}

// Two readers of one header must not pick different metadata: ambiguity is no challenge.
TEST(WwwAuthenticate, IgnoresAmbiguousOrMalformedChallenges) {
  for (const char* bad : {R"(Bearer resource_metadata="https://a.example/", resource_metadata="https://b.example/")",
                          R"(Bearer resource_metadata="https://a.example/)", R"(Bearer scope=)", "=", "Basic realm=\"x\"",
                          "", R"(Bearer resource_metadata="a)" "\x01" R"(b")"}) {
    EXPECT_FALSE(ParseWwwAuthenticate(bad).has_value()) << bad;
  }
}

TEST(ResourceMetadataUrl, AcceptsOnlyTheServersOwnOrigin) {
  EXPECT_TRUE(CheckResourceMetadataUrl("https://mcp.example/.well-known/oauth-protected-resource/mcp",
                                       "https://mcp.example/mcp")
                  .ok());
  for (const char* foreign : {"https://evil.example/.well-known/oauth-protected-resource",
                              "http://mcp.example/.well-known/oauth-protected-resource",
                              "https://mcp.example:8443/.well-known/oauth-protected-resource",
                              "https://mcp.example.evil.example/x"}) {
    Result<std::string> checked = CheckResourceMetadataUrl(foreign, "https://mcp.example/mcp");
    ASSERT_FALSE(checked.ok()) << foreign;
    EXPECT_EQ(checked.error().code, "auth.metadata_foreign") << foreign;
  }
}

TEST(ProtectedResourceLocations, PathInsertedThenRoot) {
  EXPECT_EQ(ProtectedResourceMetadataUrls(*ParseHttpUrl("https://m.example/public/mcp/")),
            (std::vector<std::string>{"https://m.example/.well-known/oauth-protected-resource/public/mcp",
                                      "https://m.example/.well-known/oauth-protected-resource"}));
  EXPECT_EQ(ProtectedResourceMetadataUrls(*ParseHttpUrl("https://m.example")),
            (std::vector<std::string>{"https://m.example/.well-known/oauth-protected-resource"}));
}

std::string Prm(const std::string& resource) {
  return R"({"resource":")" + resource + R"(","authorization_servers":["https://as.example"],"scopes_supported":["a","b"]})";
}

TEST(ProtectedResourceMetadata, AcceptsTheServerOrAPrefixAtASegmentBoundary) {
  for (const char* resource : {"https://m.example/mcp", "https://m.example/mcp/", "https://m.example", "https://M.EXAMPLE:443/"}) {
    Result<ProtectedResource> parsed = ParseProtectedResourceMetadata(Prm(resource), "https://m.example/mcp");
    ASSERT_TRUE(parsed.ok()) << resource << " " << parsed.error().Describe();
    EXPECT_EQ(parsed->authorization_servers, std::vector<std::string>{"https://as.example"});
  }
}

TEST(ProtectedResourceMetadata, RefusesMetadataOfAnotherResource) {
  for (const char* resource : {"https://evil.example/mcp", "https://m.example/mcpx", "https://m.example/mcp/deeper",
                               "http://m.example/mcp", "https://m.example:444/mcp", "https://m.example/other",
                               "https://m.example/mcp?x", "not a url"}) {
    Result<ProtectedResource> parsed = ParseProtectedResourceMetadata(Prm(resource), "https://m.example/mcp");
    ASSERT_FALSE(parsed.ok()) << resource;
    EXPECT_EQ(parsed.error().code, "auth.resource_mismatch") << resource;
  }
}

TEST(ProtectedResourceMetadata, RefusesWhatIsNotMetadata) {
  for (const char* bytes : {"", "[]", "{}", R"({"resource":"https://m.example/mcp"})",
                            R"({"resource":"https://m.example/mcp","authorization_servers":"https://as.example"})",
                            R"({"resource":"https://m.example/mcp","authorization_servers":[1]})",
                            R"({"resource":"https://m.example/mcp","resource":"https://m.example/mcp","authorization_servers":["x"]})"}) {
    Result<ProtectedResource> parsed = ParseProtectedResourceMetadata(bytes, "https://m.example/mcp");
    ASSERT_FALSE(parsed.ok()) << bytes;
    EXPECT_EQ(parsed.error().code, "auth.metadata_invalid") << bytes;
  }
  std::string huge = R"({"resource":"https://m.example/mcp","authorization_servers":["x"],"pad":")" +
                     std::string(300 * 1024, 'a') + "\"}";
  EXPECT_EQ(ParseProtectedResourceMetadata(huge, "https://m.example/mcp").error().code, "auth.metadata_invalid");
}

TEST(AuthorizationServerLocations, FollowsMcpsOrder) {
  EXPECT_EQ(*AuthorizationServerMetadataUrls("https://as.example/tenant1/"),
            (std::vector<std::string>{"https://as.example/.well-known/oauth-authorization-server/tenant1",
                                      "https://as.example/.well-known/openid-configuration/tenant1",
                                      "https://as.example/tenant1/.well-known/openid-configuration"}));
  EXPECT_EQ(*AuthorizationServerMetadataUrls("https://as.example"),
            (std::vector<std::string>{"https://as.example/.well-known/oauth-authorization-server",
                                      "https://as.example/.well-known/openid-configuration"}));
  EXPECT_EQ(AuthorizationServerMetadataUrls("https://as.example/?tenant=1").error().code, "auth.url_invalid");
}

std::string AsMetadata(const std::string& issuer, const std::string& methods = R"(["S256"])",
                       const std::string& token_endpoint = "https://as.example/token") {
  return R"({"issuer":")" + issuer + R"(","authorization_endpoint":"https://as.example/auth","token_endpoint":")" +
         token_endpoint + R"(","registration_endpoint":"https://as.example/reg","code_challenge_methods_supported":)" +
         methods + R"(,"authorization_response_iss_parameter_supported":true,"client_id_metadata_document_supported":true})";
}

TEST(AuthorizationServerMetadata, ReadsTheEndpointsAndFlags) {
  Result<AuthorizationServer> parsed = ParseAuthorizationServerMetadata(AsMetadata("https://as.example"), "https://as.example");
  ASSERT_TRUE(parsed.ok()) << parsed.error().Describe();
  EXPECT_EQ(parsed->token_endpoint, "https://as.example/token");
  EXPECT_EQ(parsed->registration_endpoint, "https://as.example/reg");
  EXPECT_TRUE(parsed->authorization_response_iss_parameter_supported);
  EXPECT_TRUE(parsed->client_id_metadata_document_supported);
}

TEST(AuthorizationServerMetadata, RefusesAnotherIssuerEvenOneCharacterApart) {
  for (const char* issuer : {"https://as.example/", "https://evil.example", "https://AS.example", "https://as.example/t"}) {
    Result<AuthorizationServer> parsed = ParseAuthorizationServerMetadata(AsMetadata(issuer), "https://as.example");
    ASSERT_FALSE(parsed.ok()) << issuer;
    EXPECT_EQ(parsed.error().code, "auth.issuer_mismatch") << issuer;
  }
}

TEST(AuthorizationServerMetadata, RefusesAServerWithoutS256) {
  for (const char* methods : {R"(["plain"])", "[]", R"("S256")", R"(["s256"])"}) {
    Result<AuthorizationServer> parsed =
        ParseAuthorizationServerMetadata(AsMetadata("https://as.example", methods), "https://as.example");
    ASSERT_FALSE(parsed.ok()) << methods;
    EXPECT_TRUE(parsed.error().code == "auth.pkce_unsupported" || parsed.error().code == "auth.metadata_invalid")
        << methods;
  }
  std::string absent = AsMetadata("https://as.example");
  absent.replace(absent.find("\"code_challenge_methods_supported\""), std::string("\"code_challenge_methods_supported\":[\"S256\"],").size(), "");
  EXPECT_EQ(ParseAuthorizationServerMetadata(absent, "https://as.example").error().code, "auth.pkce_unsupported");
}

TEST(AuthorizationServerMetadata, RefusesPlainHttpEndpointsOffLoopback) {
  Result<AuthorizationServer> parsed = ParseAuthorizationServerMetadata(
      AsMetadata("https://as.example", R"(["S256"])", "http://as.example/token"), "https://as.example");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, "auth.insecure_endpoint");
  EXPECT_EQ(ParseAuthorizationServerMetadata(AsMetadata("http://as.example"), "http://as.example").error().code,
            "auth.insecure_endpoint");
  EXPECT_TRUE(ParseAuthorizationServerMetadata(
                  AsMetadata("http://127.0.0.1:9", R"(["S256"])", "http://127.0.0.1:9/token"), "http://127.0.0.1:9")
                  .ok());
}

TEST(ScopeSelection, ChallengeThenScopesSupportedThenNone) {
  ProtectedResource resource;
  resource.scopes_supported = {"read", "write"};
  BearerChallenge challenge;
  challenge.scope = "read";
  EXPECT_EQ(SelectScope(challenge, resource), "read");
  EXPECT_EQ(SelectScope(std::nullopt, resource), "read write");
  EXPECT_EQ(SelectScope(std::nullopt, ProtectedResource{}), std::nullopt);
}

}  // namespace
}  // namespace udon::oauth
