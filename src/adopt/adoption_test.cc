#include "adopt/adoption.h"

#include <gtest/gtest.h>

namespace udon::adopt {
namespace {

Entry MakeEntry(json::Value value) {
  Entry entry;
  entry.key = "demo";
  entry.path = {"mcpServers", "demo"};
  entry.pointer = "/mcpServers/demo";
  entry.value = std::move(value);
  entry.transport = entry.value.contains("command") ? "stdio" : "http";
  return entry;
}

const HostFile kUserFile{"claude-code", "user", "/home/me/.claude.json", FileShape::kClaudeJson, ""};
const HostFile kProjectFile{"claude-code", "project", "/srv/project/.mcp.json", FileShape::kMcpServers, "/srv/project"};

TEST(Adoption, EnvValuesStayInTheHostFileAndTheRuntimeEntryNamesThem) {
  auto entry = RuntimeEntry(
      MakeEntry({{"command", "node"}, {"args", {"server.js"}}, {"env", {{"API_KEY", "sk-secret-value"}}}}),
      kUserFile, false);
  ASSERT_TRUE(entry.ok()) << entry.error().Describe();
  EXPECT_EQ((*entry)["env"]["API_KEY"], "${env:UDON_UPSTREAM_ENV_API_KEY}");
  EXPECT_EQ(entry->dump().find("sk-secret-value"), std::string::npos);
  EXPECT_FALSE(entry->contains("cwd"));
  EXPECT_FALSE(entry->contains("sandbox"));
}

TEST(Adoption, AProjectEntryStartsInItsProjectAndTheSandboxFlagApplies) {
  auto entry = RuntimeEntry(MakeEntry({{"command", "node"}, {"cwd", "tools"}}), kProjectFile, true);
  ASSERT_TRUE(entry.ok());
  EXPECT_EQ((*entry)["cwd"], "/srv/project/tools");
  EXPECT_EQ((*entry)["sandbox"], true);
  auto own = RuntimeEntry(MakeEntry({{"command", "node"}, {"sandbox", {{"network", true}}}}), kProjectFile, true);
  EXPECT_EQ((*own)["sandbox"]["network"], true);
  EXPECT_EQ((*own)["cwd"], "/srv/project");
}

TEST(Adoption, ReservedVariablesAreRefused) {
  auto reserved = RuntimeEntry(MakeEntry({{"command", "x"}, {"env", {{"PGPASSWORD", "pw"}}}}), kUserFile, false);
  ASSERT_FALSE(reserved.ok());
  EXPECT_EQ(reserved.error().code, "adopt.reserved_variable");
  EXPECT_EQ(reserved.error().details["variable"], "PGPASSWORD");
}

// Issue 38, items 2 and 20: a literal header (claude mcp add --header), a header that only
// contains a reference, URL credentials and secrets in args are adopted, and D/mcp.json
// holds a reference in their place, never the value.
TEST(Adoption, SecretsOutsideEnvAreReferencedNeverCopied) {
  auto http = RuntimeEntry(MakeEntry({{"url", "https://me:url-pw@x.example/mcp?key=q-secret"},
                                      {"headers", {{"Authorization", "Bearer abc123"}, {"X-Ref", "${TOKEN}"},
                                                   {"X-Part", "sk-part${TOKEN}"}}}}),
                           kUserFile, false);
  ASSERT_TRUE(http.ok()) << http.error().Describe();
  for (const char* secret : {"abc123", "url-pw", "q-secret", "sk-part"}) {
    EXPECT_EQ(http->dump().find(secret), std::string::npos) << secret;
  }
  EXPECT_EQ((*http)["url"], "${env:UDON_UPSTREAM_URL}");
  EXPECT_EQ((*http)["headers"]["X-Ref"], "${TOKEN}");
  auto stdio = RuntimeEntry(
      MakeEntry({{"command", "npx"}, {"args", {"server-postgres", "postgresql://admin:db-pw@db/app", "--api-key=sk-arg"}}}),
      kUserFile, false);
  ASSERT_TRUE(stdio.ok()) << stdio.error().Describe();
  EXPECT_EQ(stdio->dump().find("db-pw"), std::string::npos);
  EXPECT_EQ(stdio->dump().find("sk-arg"), std::string::npos);
  EXPECT_EQ((*stdio)["args"][0], "server-postgres");
}

TEST(Adoption, TheCaptureSeesTheEntrysEnvValues) {
  auto lookup = CaptureEnvironment(
      MakeEntry({{"command", "x"}, {"args", {"--token=t1"}}, {"env", {{"API_KEY", "v1"}}}}));
  EXPECT_EQ(lookup("UDON_UPSTREAM_ENV_API_KEY"), "v1");
  EXPECT_EQ(lookup("UDON_UPSTREAM_ARG_0"), "--token=t1");
  EXPECT_EQ(lookup("UDON_ADOPT_TEST_SURELY_UNSET"), std::nullopt);
}

TEST(Adoption, EntryNamesAreServerKeysAndUnique) {
  EXPECT_EQ(EntryName("demo", {}), "demo");
  EXPECT_EQ(EntryName("demo", {"demo", "demo-2"}), "demo-3");
  EXPECT_EQ(EntryName("my server/ü", {}), "my_server___");
  EXPECT_EQ(EntryName("..", {}), "server");
}

TEST(Adoption, TheRecordRoundTrips) {
  Adoption adoption;
  adoption.entries.push_back({"gemini", "user", "/h/.gemini/settings.json", {"mcpServers", "demo"}, "demo",
                              "gemini.demo", "gemini/demo.tools.json", "gemini/demo.pin", "", false});
  adoption.files["/h/.gemini/settings.json"] = {"gemini", std::string(64, 'a'), "", ""};
  auto back = Adoption::FromJson(adoption.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->ToJson(), adoption.ToJson());
  EXPECT_EQ(Adoption::FromJson(json::Value::object()).error().code, "adopt.record_invalid");
}

}  // namespace
}  // namespace udon::adopt
