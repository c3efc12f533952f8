#include "mcp/config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "test_support.h"

namespace udon::mcp {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

constexpr const char* kSecret = "s3cr3t-value";

TEST(ConfigTest, ParsesMcpServersWithExpansion) {
  auto config = ParseRuntimeConfig(R"({"mcpServers": {
      "farm": {"command": "node", "args": ["server.js", "--token=${env:TOKEN}"],
               "env": {"TOKEN": "${env:TOKEN}", "PLAIN": "x"}, "cwd": "${env:DIR}/sub"},
      "remote": {"url": "http://127.0.0.1:${env:PORT}/mcp",
                 "headers": {"Authorization": "Bearer ${env:TOKEN}"}}}})",
                                   FakeEnv({{"TOKEN", kSecret}, {"DIR", "/srv"}, {"PORT", "8080"}}));
  ASSERT_TRUE(config.ok()) << config.error().Describe();
  auto farm = config->Find("farm");
  ASSERT_TRUE(farm.ok());
  EXPECT_EQ(farm->type, ServerType::kStdio);
  EXPECT_EQ(farm->command, "node");
  EXPECT_EQ(farm->args, (std::vector<std::string>{"server.js", std::string("--token=") + kSecret}));
  EXPECT_EQ(farm->env[0], (std::pair<std::string, std::string>{"PLAIN", "x"}));
  EXPECT_EQ(farm->env[1], (std::pair<std::string, std::string>{"TOKEN", kSecret}));
  EXPECT_EQ(farm->cwd, "/srv/sub");
  auto remote = config->Find("remote");
  ASSERT_TRUE(remote.ok());
  EXPECT_EQ(remote->type, ServerType::kHttp);
  EXPECT_EQ(remote->url, "http://127.0.0.1:8080/mcp");
  EXPECT_EQ(remote->headers[0].second, std::string("Bearer ") + kSecret);
}

TEST(ConfigTest, ParsesTypedServersRoot) {
  auto config = ParseRuntimeConfig(R"({"servers": {
      "a": {"type": "stdio", "command": "x"}, "b": {"type": "http", "url": "https://h/mcp"}}})",
                                   FakeEnv({}));
  ASSERT_TRUE(config.ok()) << config.error().Describe();
  EXPECT_EQ(config->servers.at("a").type, ServerType::kStdio);
  EXPECT_EQ(config->servers.at("b").type, ServerType::kHttp);
}

TEST(ConfigTest, UnsetVariableNamesTheVariableNeverAValue) {
  auto config = ParseRuntimeConfig(
      R"({"mcpServers": {"a": {"command": "x", "env": {"K": "${env:PRESENT}${env:MISSING_ONE}"}}}})",
      FakeEnv({{"PRESENT", kSecret}}));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().code, "config.invalid");
  EXPECT_EQ(config.error().details["variable"], "MISSING_ONE");
  EXPECT_NE(config.error().message.find("MISSING_ONE"), std::string::npos);
  EXPECT_EQ(config.error().pointer, "/mcpServers/a/env/K");
  EXPECT_EQ(config.error().Describe().find(kSecret), std::string::npos);
  EXPECT_EQ(config.error().details.dump().find(kSecret), std::string::npos);
}

TEST(ConfigTest, RefusesBadShapes) {
  const char* bad[] = {
      R"([])",
      R"({})",
      R"({"mcpServers": {}, "servers": {}})",
      R"({"mcpServers": {"bad key!": {"command": "x"}}})",
      R"({"mcpServers": {"a": {"command": "x", "url": "http://h"}}})",
      R"({"mcpServers": {"a": {}}})",
      R"({"mcpServers": {"a": {"command": ""}}})",
      R"({"mcpServers": {"a": {"command": "x", "args": "y"}}})",
      R"({"mcpServers": {"a": {"command": "x", "args": [1]}}})",
      R"({"mcpServers": {"a": {"url": "ftp://h"}}})",
      R"({"mcpServers": {"a": {"url": "http://h", "headers": {"A": "x\ny"}}}})",
      R"({"mcpServers": {"a": {"type": "sse", "url": "http://h"}}})",
      R"({"mcpServers": {"a": {"type": "http", "command": "x"}}})",
      R"({"servers": {"a": {"command": "x"}}})",
      R"({"mcpServers": {"a": {"command": "x", "args": ["${env:"]}}})",
      R"({"mcpServers": {"a": {"command": "x", "args": ["${env:1BAD}"]}}})",
      R"({"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}})",
  };
  for (const char* text : bad) {
    auto config = ParseRuntimeConfig(text, FakeEnv({}));
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_EQ(config.error().code, "config.invalid") << text;
  }
  std::string long_key(65, 'k');
  EXPECT_FALSE(ParseRuntimeConfig(R"({"mcpServers": {")" + long_key + R"(": {"command": "x"}}})",
                                  FakeEnv({}))
                   .ok());
}

TEST(ConfigTest, UnknownServerKey) {
  auto config = ParseRuntimeConfig(R"({"mcpServers": {"a.b-c_1": {"command": "x"}}})", FakeEnv({}));
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(config->Find("a.b-c_1").ok());
  EXPECT_EQ(config->Find("b").error().code, "config.server_unknown");
}

TEST(ConfigTest, LookupOrderFlagThenEnvThenLocalFile) {
  EXPECT_EQ(ResolveConfigPath(std::string("/flag.json"), FakeEnv({{"UDON_MCP_CONFIG", "/env.json"}})),
            "/flag.json");
  EXPECT_EQ(ResolveConfigPath(std::nullopt, FakeEnv({{"UDON_MCP_CONFIG", "/env.json"}})),
            "/env.json");
  EXPECT_EQ(ResolveConfigPath(std::nullopt, FakeEnv({})), "mcp.json");
}

TEST(ConfigTest, LoadResolvesRelativeCwdAgainstTheFile) {
  udon::testing::TempDir dir;
  dir.Write("c.json", R"({"mcpServers": {"a": {"command": "x", "cwd": "work"}}})");
  auto config = LoadRuntimeConfig(std::nullopt, FakeEnv({{"UDON_MCP_CONFIG", dir.File("c.json")}}));
  ASSERT_TRUE(config.ok()) << config.error().Describe();
  EXPECT_EQ(config->path, dir.File("c.json"));
  EXPECT_EQ(config->servers.at("a").cwd, dir.path() + "/work");
  auto missing = LoadRuntimeConfig(dir.File("absent.json"), FakeEnv({}));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, "config.unreadable");
}

TEST(ConfigTest, DescribeShowsNamesNeverValues) {
  auto config = ParseRuntimeConfig(R"({"mcpServers": {
      "s": {"command": "node", "args": ["${env:T}"], "env": {"TOKEN": "${env:T}"}},
      "h": {"url": "https://user:${env:T}@example.test:8443/mcp?key=${env:T}",
            "headers": {"Authorization": "${env:T}"}}}})",
                                   FakeEnv({{"T", kSecret}}));
  ASSERT_TRUE(config.ok());
  const std::string stdio = config->servers.at("s").Describe();
  const std::string http = config->servers.at("h").Describe();
  EXPECT_EQ(stdio.find(kSecret), std::string::npos);
  EXPECT_EQ(http.find(kSecret), std::string::npos);
  EXPECT_NE(stdio.find("TOKEN"), std::string::npos);
  EXPECT_NE(http.find("Authorization"), std::string::npos);
  EXPECT_NE(http.find("example.test:8443"), std::string::npos);
}

}  // namespace
}  // namespace udon::mcp
