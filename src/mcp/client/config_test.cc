#include "mcp/client/config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

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
  ASSERT_TRUE(config.ok()) << config.error().Describe();
  auto found = config->Find("a");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().code, "config.invalid");
  EXPECT_EQ(found.error().details["variable"], "MISSING_ONE");
  EXPECT_EQ(found.error().details["server"], "a");
  EXPECT_NE(found.error().message.find("MISSING_ONE"), std::string::npos);
  EXPECT_NE(found.error().message.find("'a'"), std::string::npos);
  EXPECT_EQ(found.error().pointer, "/mcpServers/a/env/K");
  EXPECT_EQ(found.error().Describe().find(kSecret), std::string::npos);
  EXPECT_EQ(found.error().details.dump().find(kSecret), std::string::npos);
}

TEST(ConfigTest, AnUnusableEntryFailsOnlyTheCommandsThatUseIt) {
  auto config = ParseRuntimeConfig(R"({"mcpServers": {
      "github": {"command": "x", "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}"}},
      "notion": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${NOTION_TOKEN}"}},
      "broken": {"command": 7},
      "memory": {"command": "node", "args": ["${env:HOME}/m.js"]}}})",
                                   FakeEnv({{"HOME", "/home/u"}}));
  ASSERT_TRUE(config.ok()) << config.error().Describe();
  auto memory = config->Find("memory");
  ASSERT_TRUE(memory.ok()) << memory.error().Describe();
  EXPECT_EQ(memory->args, std::vector<std::string>{"/home/u/m.js"});
  EXPECT_EQ(config->Find("github").error().pointer, "/mcpServers/github/env/GITHUB_TOKEN");
  EXPECT_EQ(config->Find("notion").error().details["variable"], "NOTION_TOKEN");
  EXPECT_EQ(config->Find("broken").error().pointer, "/mcpServers/broken/command");
  EXPECT_EQ(config->Find("absent").error().code, "config.server_unknown");
}

TEST(ConfigTest, ReadsAnHttpEntrysOAuthClientAndRefusesBadMembers) {
  auto config = ParseRuntimeConfig(R"({"mcpServers": {
      "gh": {"url": "https://h/mcp", "oauth": {"clientId": "id", "clientSecret": "${env:S}", "redirectPort": 8976,
             "resource": false}},
      "plain": {"url": "https://h/other", "oauth": {}},
      "unknown": {"url": "https://h/x", "oauth": {"client_id": "id"}},
      "secret_only": {"url": "https://h/x", "oauth": {"clientSecret": "s"}},
      "port": {"url": "https://h/x", "oauth": {"redirectPort": 70000}},
      "stdio": {"command": "x", "oauth": {}}}})",
                                   FakeEnv({{"S", "the-secret"}}));
  ASSERT_TRUE(config.ok()) << config.error().Describe();
  auto gh = config->Find("gh");
  ASSERT_TRUE(gh.ok() && gh->oauth.has_value());
  EXPECT_EQ(gh->oauth->client_id, "id");
  EXPECT_EQ(gh->oauth->client_secret, "the-secret");
  EXPECT_EQ(gh->oauth->redirect_port, 8976);
  EXPECT_FALSE(gh->oauth->send_resource);
  EXPECT_EQ(gh->Describe().find("the-secret"), std::string::npos);
  auto plain = config->Find("plain");
  ASSERT_TRUE(plain.ok() && plain->oauth.has_value());
  EXPECT_TRUE(plain->oauth->send_resource);
  for (const char* bad : {"unknown", "secret_only", "port", "stdio"}) {
    EXPECT_EQ(config->Find(bad).error().code, "config.invalid") << bad;
  }
}

// The command line's hook gives an http entry its stored login; stdio entries never see it.
TEST(ConfigTest, FindRunsTheHttpHookOnACopy) {
  auto config = ParseRuntimeConfig(R"({"mcpServers": {"r": {"url": "https://h/mcp"}, "s": {"command": "x"}}})",
                                   FakeEnv({}));
  ASSERT_TRUE(config.ok());
  int calls = 0;
  config->authorize_http = [&calls](ServerConfig& server) -> Status {
    ++calls;
    server.headers.emplace_back("Authorization", "Bearer t");
    return OkStatus();
  };
  EXPECT_EQ(config->Find("r")->headers.size(), 1u);
  EXPECT_EQ(config->Find("r")->headers.size(), 1u);  // not added twice to the stored entry
  EXPECT_TRUE(config->Find("s").ok());
  EXPECT_EQ(calls, 2);
  config->authorize_http = [](ServerConfig&) -> Status { return udon::MakeError("auth.login_required", "log in"); };
  EXPECT_EQ(config->Find("r").error().code, "auth.login_required");
}

TEST(ConfigTest, ClaudeCodeReferencesAndDefaults) {
  auto config = ParseRuntimeConfig(R"({"mcpServers": {
      "a": {"command": "${DIR}/bin/server", "args": ["${DIR}", "${MODE:-fast}", "${EMPTY:-dflt}", "${SET:-unused}", "$LITERAL"]}}})",
                                   FakeEnv({{"DIR", "/d"}, {"EMPTY", ""}, {"SET", "given"}}));
  ASSERT_TRUE(config.ok()) << config.error().Describe();
  auto a = config->Find("a");
  ASSERT_TRUE(a.ok()) << a.error().Describe();
  EXPECT_EQ(a->command, "/d/bin/server");
  EXPECT_EQ(a->args, (std::vector<std::string>{"/d", "fast", "dflt", "given", "$LITERAL"}));
  // The same rules as ${env:NAME}: unset without a default is invalid, udon-mcp's own are refused.
  auto unset = ParseRuntimeConfig(R"({"mcpServers": {"a": {"command": "x", "args": ["${NOPE}"]}}})", FakeEnv({}));
  ASSERT_TRUE(unset.ok());
  EXPECT_EQ(unset->Find("a").error().details["variable"], "NOPE");
  for (const char* text : {R"({"mcpServers": {"a": {"command": "x", "args": ["${PGPASSWORD}"]}}})",
                           R"({"mcpServers": {"a": {"command": "x", "args": ["${UDON_MCP_KEY:-x}"]}}})"}) {
    auto reserved = ParseRuntimeConfig(text, FakeEnv({{"PGPASSWORD", kSecret}}));
    ASSERT_FALSE(reserved.ok()) << text;
    EXPECT_TRUE(reserved.error().details.contains("variable")) << text;
  }
}

TEST(ConfigTest, ClientShapes) {
  auto config = ParseRuntimeConfig(R"({"servers": {
      "streamable": {"type": "streamable-http", "url": "https://h/mcp"},
      "plain": {"type": "http", "url": "https://h/mcp", "timeout": 2500},
      "local": {"type": "stdio", "command": "x", "autoApprove": ["t"], "alwaysAllow": ["t"]},
      "off": {"type": "stdio", "command": "x", "disabled": true},
      "prompted": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${input:token}"}},
      "legacy": {"type": "sse", "url": "https://h/sse"}},
      "inputs": [{"type": "promptString", "id": "token", "password": true}]})",
                                   FakeEnv({}));
  ASSERT_TRUE(config.ok()) << config.error().Describe();
  EXPECT_EQ(config->Find("streamable")->type, ServerType::kHttp);
  EXPECT_EQ(config->Find("plain")->timeout_ms, 2500);
  EXPECT_FALSE(config->Find("streamable")->timeout_ms.has_value());
  EXPECT_TRUE(config->Find("local").ok());
  EXPECT_EQ(config->Find("off").error().code, "config.server_unknown");
  EXPECT_NE(config->Find("off").error().message.find("disabled"), std::string::npos);
  auto prompted = config->Find("prompted");
  EXPECT_EQ(prompted.error().code, "config.invalid");
  EXPECT_NE(prompted.error().message.find("never prompts"), std::string::npos);
  EXPECT_EQ(prompted.error().pointer, "/servers/prompted/headers/Authorization");
  auto legacy = config->Find("legacy");
  EXPECT_EQ(legacy.error().code, "config.invalid");
  EXPECT_NE(legacy.error().message.find("HTTP+SSE"), std::string::npos);
  EXPECT_EQ(legacy.error().pointer, "/servers/legacy/type");

  // Windsurf's serverUrl.
  auto windsurf = ParseRuntimeConfig(R"({"mcpServers": {"w": {"serverUrl": "https://h/mcp"}}})", FakeEnv({}));
  ASSERT_TRUE(windsurf.ok());
  EXPECT_EQ(windsurf->Find("w")->url, "https://h/mcp");
  for (const char* text : {R"({"mcpServers": {"w": {"serverUrl": "https://h/mcp", "url": "https://h/mcp"}}})",
                           R"({"mcpServers": {"w": {"serverUrl": "ftp://h"}}})",
                           R"({"mcpServers": {"w": {"command": "x", "serverUrl": "https://h"}}})",
                           R"({"mcpServers": {"w": {"command": "x", "timeout": "5s"}}})",
                           R"({"mcpServers": {"w": {"command": "x", "timeout": 0}}})"}) {
    auto refused = ParseRuntimeConfig(text, FakeEnv({}));
    ASSERT_TRUE(refused.ok()) << text;
    EXPECT_EQ(refused->Find("w").error().code, "config.invalid") << text;
  }
}

TEST(ConfigTest, RefusesBadShapes) {
  // Bad roots refuse the whole file.
  for (const char* text : {R"([])", R"({})", R"({"mcpServers": {}, "servers": {}})",
                           R"({"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}})"}) {
    auto config = ParseRuntimeConfig(text, FakeEnv({}));
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_EQ(config.error().code, "config.invalid") << text;
  }
  // A bad entry refuses only commands that use it.
  const char* bad[] = {
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
      R"({"mcpServers": {"a": {"command": "x", "args": ["${workspace folder}"]}}})",
      R"({"mcpServers": {"a": {"command": "x", "disabled": "yes"}}})",
  };
  for (const char* text : bad) {
    auto config = ParseRuntimeConfig(text, FakeEnv({}));
    ASSERT_TRUE(config.ok()) << text;
    const std::string key = config->unusable.count("bad key!") ? "bad key!" : "a";
    auto found = config->Find(key);
    ASSERT_FALSE(found.ok()) << text;
    EXPECT_EQ(found.error().code, "config.invalid") << text;
    EXPECT_EQ(found.error().details["server"], key) << text;
  }
  std::string long_key(65, 'k');
  auto long_config = ParseRuntimeConfig(R"({"mcpServers": {")" + long_key + R"(": {"command": "x"}}})", FakeEnv({}));
  ASSERT_TRUE(long_config.ok());
  EXPECT_FALSE(long_config->Find(long_key).ok());
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

TEST(ConfigTest, UdonMcpsOwnVariablesCannotBeExpandedAnywhere) {
  const EnvLookup env = FakeEnv({{"UDON_MCP_STATE", "postgres://u@db/state"}, {"PGPASSWORD", kSecret}});
  for (const char* text :
       {R"({"mcpServers": {"s": {"command": "x", "env": {"STATE": "${env:UDON_MCP_STATE}"}}}})",
        R"({"mcpServers": {"s": {"command": "x", "args": ["--password=${env:PGPASSWORD}"]}}})",
        R"({"mcpServers": {"h": {"url": "http://127.0.0.1/mcp", "headers": {"X-Pw": "${env:PGPASSWORD}"}}}})"}) {
    auto config = ParseRuntimeConfig(text, env);
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_EQ(config.error().code, "config.invalid");
    EXPECT_TRUE(config.error().details.contains("variable"));
    EXPECT_EQ(config.error().Describe().find(kSecret), std::string::npos);
  }
  // The entry's own literal values are the server's credentials, not udon-mcp's.
  auto literal = ParseRuntimeConfig(R"({"mcpServers": {"pg": {"command": "x", "env": {"PGHOST": "db"}}}})", env);
  ASSERT_TRUE(literal.ok());
}

TEST(ConfigTest, InheritEnvAndSandboxMembers) {
  udon::testing::TempDir dir;
  auto config = ParseRuntimeConfig(R"({"mcpServers": {
      "a": {"command": "x", "inheritEnv": ["GITHUB_TOKEN"], "sandbox": {"writable": ["out"]}},
      "b": {"command": "x", "inheritEnv": true, "sandbox": true}}})",
                                   FakeEnv({}), dir.path());
  ASSERT_TRUE(config.ok()) << config.error().Describe();
  const ServerConfig& a = config->servers.at("a");
  EXPECT_EQ(a.inherit_env, std::vector<std::string>{"GITHUB_TOKEN"});
  ASSERT_TRUE(a.sandbox.has_value());
  EXPECT_EQ(a.sandbox->writable, std::vector<std::string>{dir.path() + "/out"});
  EXPECT_EQ(a.pointer, "/mcpServers/a");
  EXPECT_TRUE(config->servers.at("b").inherit_env_all);
  // inheritEnv: true is allowed, and flagged.
  ASSERT_EQ(config->warnings.size(), 1u);
  EXPECT_NE(config->warnings[0].find("'b'"), std::string::npos);
  EXPECT_NE(config->servers.at("b").Describe().find("sandboxed"), std::string::npos);
  // The writable directory does not exist yet: the server cannot run, the others can.
  auto found = config->Find("a");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().code, "config.invalid");
  EXPECT_EQ(found.error().pointer, "/mcpServers/a/sandbox/writable/0");

  for (const char* text : {R"({"mcpServers": {"s": {"url": "http://127.0.0.1/mcp", "sandbox": true}}})",
                           R"({"mcpServers": {"s": {"url": "http://127.0.0.1/mcp", "inheritEnv": ["A"]}}})",
                           R"({"mcpServers": {"s": {"command": "x", "inheritEnv": ["AWS_*"]}}})",
                           R"({"mcpServers": {"s": {"command": "x", "sandbox": {"network": false, "rw": []}}}})"}) {
    auto parsed = ParseRuntimeConfig(text, FakeEnv({}));
    ASSERT_TRUE(parsed.ok()) << text;
    EXPECT_EQ(parsed->Find("s").error().code, "config.invalid") << text;
  }
  // Naming udon-mcp's own variables refuses the whole file, used or not.
  auto reserved = ParseRuntimeConfig(R"({"mcpServers": {"s": {"command": "x", "inheritEnv": ["PGPASSWORD"]},
                                                        "t": {"command": "y"}}})", FakeEnv({}));
  ASSERT_FALSE(reserved.ok());
  EXPECT_EQ(reserved.error().code, "config.invalid");
  EXPECT_EQ(reserved.error().details["variable"], "PGPASSWORD");
}

}  // namespace
}  // namespace udon::mcp
