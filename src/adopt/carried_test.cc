// Issue 38, items 2, 11 and 20 from the attacker's side: what a host entry carries for its
// upstream never lands outside the host file, and never in the gateway's own environment.
#include "adopt/carried.h"

#include <gtest/gtest.h>

namespace udon::adopt {
namespace {

std::vector<std::string> Names(const SplitEntry& split) {
  std::vector<std::string> names;
  for (const CarriedVariable& variable : split.carried) names.push_back(variable.name);
  return names;
}

TEST(Carried, CredentialsInArgsMoveOutAndPlainArgumentsStay) {
  const json::Value entry = {
      {"command", "npx"},
      {"args",
       {"-y", "@modelcontextprotocol/server-postgres", "postgresql://admin:hunter2-pw@db.example/app",
        "--api-key=sk-live-arg", "--token", "tok-next-arg", "host=db user=me password=conn-pw", "--verbose",
        "${env:PLAIN}", "--header", "Authorization: Bearer hdr-arg"}}};
  const SplitEntry split = SplitCarried(entry);
  const std::string upstream = split.upstream.dump();
  for (const char* secret : {"hunter2-pw", "sk-live-arg", "tok-next-arg", "conn-pw", "hdr-arg"}) {
    EXPECT_EQ(upstream.find(secret), std::string::npos) << secret;
  }
  EXPECT_EQ(split.upstream["args"][1], "@modelcontextprotocol/server-postgres");
  EXPECT_EQ(split.upstream["args"][2], "${env:UDON_UPSTREAM_ARG_2}");
  EXPECT_EQ(split.upstream["args"][4], "--token");
  EXPECT_EQ(split.upstream["args"][7], "--verbose");
  EXPECT_EQ(split.upstream["args"][8], "${env:PLAIN}");
  EXPECT_EQ(Names(split), (std::vector<std::string>{"UDON_UPSTREAM_ARG_2", "UDON_UPSTREAM_ARG_3",
                                                    "UDON_UPSTREAM_ARG_5", "UDON_UPSTREAM_ARG_6",
                                                    "UDON_UPSTREAM_ARG_10"}));
  EXPECT_EQ(split.carried[0].value, "postgresql://admin:hunter2-pw@db.example/app");
}

TEST(Carried, UrlCredentialsAndQueriesAndAnyHeaderButOneReferenceMoveOut) {
  const json::Value entry = {{"url", "https://user:url-pw@mcp.example/mcp?api_key=query-secret"},
                             {"headers",
                              {{"Authorization", "Bearer literal-secret"},
                               {"X-Mixed", "sk-mixed${SUFFIX}"},
                               {"X-Fallback", "${TOKEN:-fallback-secret}"},
                               {"X-Ref", "${env:TOKEN}"}}}};
  const SplitEntry split = SplitCarried(entry);
  const std::string upstream = split.upstream.dump();
  for (const char* secret : {"url-pw", "query-secret", "literal-secret", "sk-mixed", "fallback-secret"}) {
    EXPECT_EQ(upstream.find(secret), std::string::npos) << secret;
  }
  EXPECT_EQ(split.upstream["url"], "${env:UDON_UPSTREAM_URL}");
  EXPECT_EQ(split.upstream["headers"]["X-Ref"], "${env:TOKEN}");
  EXPECT_EQ(split.carried.size(), 4u);
  const json::Value plain = {{"url", "https://mcp.example/mcp"}, {"headers", {{"Authorization", "${TOKEN}"}}}};
  EXPECT_TRUE(SplitCarried(plain).carried.empty());
  EXPECT_EQ(SplitCarried(plain).upstream, plain);
}

TEST(Carried, EveryEnvMemberTravelsUnderANameTheGatewayIgnores) {
  const json::Value entry = {{"command", "node"},
                             {"env", {{"LD_PRELOAD", "/x/evil.so"}, {"HOME", "/elsewhere"}, {"API_KEY", "k"}}}};
  const SplitEntry split = SplitCarried(entry);
  EXPECT_EQ(split.upstream["env"]["LD_PRELOAD"], "${env:UDON_UPSTREAM_ENV_LD_PRELOAD}");
  EXPECT_EQ(split.upstream["env"]["HOME"], "${env:UDON_UPSTREAM_ENV_HOME}");
  for (const CarriedVariable& variable : split.carried) {
    EXPECT_EQ(variable.name, "UDON_UPSTREAM_ENV_" + variable.env_member);
  }
  EXPECT_EQ(split.carried.size(), 3u);
}

TEST(Carried, OrdinaryArgumentsAreNotSecrets) {
  for (const char* arg : {"server.js", "-y", "@scope/pkg@1.2.3", "--port=8080", "https://example.com/docs",
                          "/home/me/project", "--keyboard-layout-free"}) {
    EXPECT_FALSE(IsSecretArgument(arg, "")) << arg;
  }
  EXPECT_FALSE(IsSecretArgument("8080", "--port"));
  EXPECT_TRUE(IsSecretArgument("value", "--client-secret"));
  EXPECT_FALSE(IsSecretArgument("--next", "--client-secret"));
}

}  // namespace
}  // namespace udon::adopt
