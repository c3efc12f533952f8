#include "adopt/rewrite.h"

#include <gtest/gtest.h>

#include "adopt/discovery.h"
#include "adopt/jsonc.h"
#include "adopt/internal/test_fixtures.h"
#include "base/file.h"

namespace udon::adopt {
namespace {

using testing::Fixture;

GatewayCommand Gateway() {
  return {"/opt/udon/bin/udon-mcp", "/d/vscode/memory.tools.json", "/d/vscode/memory.pin", "/d/mcp.json",
          "vscode.memory", ""};
}

// The bytes before the entry's value and after it are the original's.
void ExpectOnlyTheEntryChanged(const std::string& before, const std::string& after,
                               const std::vector<std::string>& path) {
  auto old_span = FindMember(*BlankJsonc(before), path);
  auto new_span = FindMember(*BlankJsonc(after), path);
  ASSERT_TRUE(old_span.ok() && new_span.ok());
  EXPECT_EQ(before.substr(0, old_span->begin), after.substr(0, new_span->begin));
  EXPECT_EQ(before.substr(old_span->end), after.substr(new_span->end));
}

TEST(Rewrite, AVsCodeEntryInJsonWithCommentsBecomesTheGatewayAndNothingElseMoves) {
  const std::string before = Fixture("vscode_mcp.json");
  auto after = RewriteEntries(before, {{{"servers", "memory"}, Gateway(), true}});
  ASSERT_TRUE(after.ok()) << after.error().Describe();
  ExpectOnlyTheEntryChanged(before, *after, {"servers", "memory"});
  EXPECT_NE(after->find("// the memory server"), std::string::npos);
  auto document = ParseJsonc(*after);
  ASSERT_TRUE(document.ok());
  const json::Value& entry = (*document)["servers"]["memory"];
  EXPECT_TRUE(IsGated(entry));
  EXPECT_EQ(entry["type"], "stdio");
  EXPECT_EQ(entry["args"], json::Value(GatewayArgs(Gateway())));
  EXPECT_EQ((*document)["servers"]["remote"]["type"], "http");  // the other entry as it was
}

TEST(Rewrite, EnvValuesStayByteForByteUnderCarriedNamesAndTheHostsOwnMembersStay) {
  const std::string before = Fixture("gemini_settings.json");
  auto after = RewriteEntries(before, {{{"mcpServers", "demo"}, Gateway(), false}});
  ASSERT_TRUE(after.ok()) << after.error().Describe();
  ExpectOnlyTheEntryChanged(before, *after, {"mcpServers", "demo"});
  EXPECT_NE(after->find("      \"env\": { \"UDON_UPSTREAM_ENV_API_KEY\": \"$DEMO_KEY\" },\n"), std::string::npos)
      << *after;
  auto entry = (*ParseJsonc(*after))["mcpServers"]["demo"];
  EXPECT_FALSE(entry.contains("cwd"));   // the upstream's, now in D/mcp.json
  EXPECT_FALSE(entry.contains("type"));  // Gemini's entry had none
  EXPECT_EQ(entry["timeout"], 30000);
  EXPECT_EQ(entry["trust"], false);
  EXPECT_EQ(entry["includeTools"], json::Value({"echo"}));
}

TEST(Rewrite, OneLineEntriesStayOnOneLineAndSeveralEntriesOfOneFileAreRewritten) {
  const std::string before = Fixture("claude.json");
  GatewayCommand second = Gateway();
  second.server = "claude-code.memory";
  auto after = RewriteEntries(before, {{{"projects", "/home/me/work", "mcpServers", "demo"}, Gateway(), false},
                                       {{"mcpServers", "memory"}, second, false}});
  ASSERT_TRUE(after.ok()) << after.error().Describe();
  EXPECT_NE(after->find("\"env\": { \"UDON_UPSTREAM_ENV_DEMO_TOKEN\": \"fixture-secret\" } },\n"),
            std::string::npos)
      << *after;
  auto document = *ParseJsonc(*after);
  EXPECT_TRUE(IsGated(document["projects"]["/home/me/work"]["mcpServers"]["demo"]));
  EXPECT_TRUE(IsGated(document["mcpServers"]["memory"]));
  EXPECT_EQ(document["projects"]["/home/me/work"]["allowedTools"], json::Value({"mcp__demo__echo"}));
  EXPECT_EQ(std::count(before.begin(), before.end(), '\n'), std::count(after->begin(), after->end(), '\n'));
}

// Issue 38, item 11: the host sets the entry's env in the process it starts, the gateway
// after --apply; LD_PRELOAD and HOME written for the upstream must not reach it by name.
TEST(Rewrite, TheEntrysEnvNeverReachesTheGatewayUnderItsOwnNames) {
  const std::string before = R"({"mcpServers": {"demo": {"command": "node", "env": {"LD_PRELOAD": "/x/evil.so",
      "HOME": "/elsewhere"}}}})";
  auto after = RewriteEntries(before, {{{"mcpServers", "demo"}, Gateway(), false}});
  ASSERT_TRUE(after.ok()) << after.error().Describe();
  const json::Value env = (*ParseJsonc(*after))["mcpServers"]["demo"]["env"];
  EXPECT_EQ(env, json::Value({{"UDON_UPSTREAM_ENV_LD_PRELOAD", "/x/evil.so"}, {"UDON_UPSTREAM_ENV_HOME", "/elsewhere"}}));
}

// Issue 38, items 2 and 20: a literal header and a password in args move into the rewritten
// entry's env; the host file stays their only holder, each value written once.
TEST(Rewrite, SecretsOutsideEnvMoveIntoTheEntrysEnv) {
  const std::string before = R"({"mcpServers": {
    "pg": {"command": "npx", "args": ["server-postgres", "postgresql://admin:db-pw-1@db/app"]},
    "remote": {"type": "http", "url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer hdr-secret-2"}}
  }})";
  GatewayCommand remote = Gateway();
  remote.server = "claude-code.remote";
  auto after = RewriteEntries(before, {{{"mcpServers", "pg"}, Gateway(), false}, {{"mcpServers", "remote"}, remote, false}});
  ASSERT_TRUE(after.ok()) << after.error().Describe();
  const json::Value document = *ParseJsonc(*after);
  EXPECT_EQ(document["mcpServers"]["pg"]["env"],
            json::Value({{"UDON_UPSTREAM_ARG_1", "postgresql://admin:db-pw-1@db/app"}}));
  EXPECT_EQ(document["mcpServers"]["remote"]["env"], json::Value({{"UDON_UPSTREAM_HEADER_0", "Bearer hdr-secret-2"}}));
  EXPECT_FALSE(document["mcpServers"]["remote"].contains("headers"));
  for (const std::string secret : {"db-pw-1", "hdr-secret-2"}) {
    EXPECT_EQ(after->find(secret), after->rfind(secret)) << secret;
  }
}

TEST(Rewrite, TheCapturesPolicyGoesToTheGateway) {
  GatewayCommand gateway = Gateway();
  EXPECT_EQ(GatewayArgs(gateway).size(), 9u);
  gateway.policy = "/etc/udon/policy.yaml";
  const auto args = GatewayArgs(gateway);
  ASSERT_EQ(args.size(), 11u);
  EXPECT_EQ(args[9], "--policy");
  EXPECT_EQ(args[10], "/etc/udon/policy.yaml");
}

TEST(Rewrite, AMissingEntryIsRefused) {
  auto after = RewriteEntries(Fixture("cursor_mcp.json"), {{{"mcpServers", "nope"}, Gateway(), false}});
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().code, "adopt.entry_missing");
}

}  // namespace
}  // namespace udon::adopt
