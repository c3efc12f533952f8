#include "adopt/rewrite.h"

#include <gtest/gtest.h>

#include "adopt/discovery.h"
#include "adopt/jsonc.h"
#include "base/file.h"

namespace udon::adopt {
namespace {

std::string Fixture(const std::string& name) {
  auto text = base::ReadFile(std::string(UDON_SOURCE_DIR) + "/tests/data/adopt/" + name);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : "";
}

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

TEST(Rewrite, EnvStaysByteForByteAndTheHostsOwnMembersStay) {
  const std::string before = Fixture("gemini_settings.json");
  auto after = RewriteEntries(before, {{{"mcpServers", "demo"}, Gateway(), false}});
  ASSERT_TRUE(after.ok()) << after.error().Describe();
  ExpectOnlyTheEntryChanged(before, *after, {"mcpServers", "demo"});
  EXPECT_NE(after->find("      \"env\": { \"API_KEY\": \"$DEMO_KEY\" },\n"), std::string::npos) << *after;
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
  EXPECT_NE(after->find("\"env\": { \"DEMO_TOKEN\": \"fixture-secret\" } },\n"), std::string::npos) << *after;
  auto document = *ParseJsonc(*after);
  EXPECT_TRUE(IsGated(document["projects"]["/home/me/work"]["mcpServers"]["demo"]));
  EXPECT_TRUE(IsGated(document["mcpServers"]["memory"]));
  EXPECT_EQ(document["projects"]["/home/me/work"]["allowedTools"], json::Value({"mcp__demo__echo"}));
  EXPECT_EQ(std::count(before.begin(), before.end(), '\n'), std::count(after->begin(), after->end(), '\n'));
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
