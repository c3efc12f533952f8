// serve --settings: what the file may say, and everything else refused with the pointer.
#include "cli/serve_settings.h"

#include <gtest/gtest.h>

namespace udon::cli {
namespace {

TEST(ServeSettingsTest, YamlCoversTheServiceOptions) {
  auto settings = ParseServeSettings(R"(
listen: 0.0.0.0:8101
metricsListen: 127.0.0.1:9464
otlpEndpoint: http://collector:4318
drainSeconds: 30
state: postgresql://udon@db.example.com/udon
auth:
  issuer: https://login.example.com/realms/agents
  audience: https://gateway.example.com/mcp
  scopeTools:
    mcp:read: [search_docs, get_ticket]
    mcp:admin: ['*']
  grantsClaim: roles
  clockSkewSeconds: 30
  introspection:
    clientId: gateway
    secretFile: /etc/udon-mcp/introspection-secret
)");
  ASSERT_TRUE(settings.ok()) << settings.error().message;
  EXPECT_EQ(settings->listen, "0.0.0.0:8101");
  EXPECT_EQ(settings->metrics_listen, "127.0.0.1:9464");
  EXPECT_EQ(settings->otlp_endpoint, "http://collector:4318");
  EXPECT_EQ(settings->drain_seconds, 30);
  EXPECT_EQ(settings->state, "postgresql://udon@db.example.com/udon");
  ASSERT_TRUE(settings->auth);
  EXPECT_EQ(settings->auth->issuer, "https://login.example.com/realms/agents");
  EXPECT_EQ(settings->auth->audience, "https://gateway.example.com/mcp");
  EXPECT_EQ(settings->auth->scope_tools, (std::vector<std::string>{"mcp:admin=*", "mcp:read=search_docs,get_ticket"}));
  EXPECT_EQ(settings->auth->grants_claim, "roles");
  EXPECT_EQ(settings->auth->clock_skew_seconds, 30);
  EXPECT_EQ(settings->auth->introspection_client_id, "gateway");
}

TEST(ServeSettingsTest, JsonIsReadTooAndAbsentMembersStayUnset) {
  auto settings = ParseServeSettings(R"({"listen": "127.0.0.1:0"})");
  ASSERT_TRUE(settings.ok());
  EXPECT_EQ(settings->listen, "127.0.0.1:0");
  EXPECT_FALSE(settings->auth);
  EXPECT_FALSE(settings->drain_seconds);
}

// Strict: a misspelt member is never silently ignored (a typo in auth must not serve with
// another configuration than the one meant); the pointer names it.
TEST(ServeSettingsTest, UnknownMembersAndBadValuesAreRefusedWithTheirPointer) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"listne: 0.0.0.0:8101", "/listne"},
      {"auth:\n  issuer: https://i.example\n  audience: https://g.example/mcp\n  scopeTools: {a: [t]}\n  audiance: x",
       "/auth/audiance"},
      {"auth:\n  issuer: https://i.example\n  audience: https://g.example/mcp", "/auth/scopeTools"},
      {"auth:\n  issuer: https://i.example\n  audience: https://g.example/mcp\n  scopeTools: {a: []}", "/auth/scopeTools/a"},
      {"auth:\n  issuer: https://i.example\n  audience: https://g.example/mcp\n  scopeTools: {a: [t]}\n"
       "  introspection: {clientId: c, secret: s}",
       "/auth/introspection/secret"},
      {"drainSeconds: 4000", "/drainSeconds"},
      {"a/b~c: 1", "/a~1b~0c"},
      {"drainSeconds: '30'", "/drainSeconds"},
      {"state: 7", "/state"},
  };
  for (const auto& [text, pointer] : cases) {
    auto settings = ParseServeSettings(text);
    ASSERT_FALSE(settings.ok()) << text;
    EXPECT_EQ(settings.error().code, "serve.settings_invalid") << text;
    EXPECT_EQ(settings.error().pointer, pointer) << text;
  }
  EXPECT_EQ(ParseServeSettings("[1]").error().code, "serve.settings_invalid");
  EXPECT_EQ(ParseServeSettings("listen: a\nlisten: b").error().code, "serve.settings_invalid");
}

}  // namespace
}  // namespace udon::cli
