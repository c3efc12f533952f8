// serve --auth oauth with real parts (issue 40 part 1): the oidc-provider authorization
// server of tests/peers/oauth, mcp-remote (the host-side OAuth most hosts use) logging in
// through the gateway's own RFC 9728 metadata with the peers' login driver as the browser,
// and then the token it obtained used directly: the scope mapping holds for tools/list and
// tools/call, the evidence names the caller only keyed, and forged or missing tokens get
// RFC 6750 challenges.
#include <gtest/gtest.h>

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "json/json.h"
#include "serve_fixture.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Peer(const std::string& name) { return SourceDir() + "/tests/peers/oauth/" + name; }

// mcp-remote's stored access token (its *_tokens.json in the config directory).
std::string StoredAccessToken(const std::string& config_dir) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(config_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 12 && name.substr(name.size() - 12) == "_tokens.json") {
      auto tokens = json::Parse(Slurp(entry.path().string()));
      if (tokens.ok() && tokens->contains("access_token")) return (*tokens)["access_token"].get<std::string>();
    }
  }
  return {};
}

Json ModernMessage(int id, const std::string& method, Json params) {
  params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                     {"io.modelcontextprotocol/clientCapabilities", Json::object()}};
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

class ServeOAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    demo_ = std::make_unique<ReviewedDemo>(dir_);
    ASSERT_TRUE(demo_->ok()) << demo_->failure;
    issuer_process_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{NodeBinary(), Peer("authorization-server.mjs")});
    issuer_ = AwaitOutput(*issuer_process_, std::regex(R"re("issuer":"([^"]+)")re"));
    ASSERT_FALSE(issuer_.empty()) << issuer_process_->Output();
    port_ = FreeLoopbackPort();
    audience_ = "http://127.0.0.1:" + std::to_string(port_) + "/mcp";
    gateway_ = std::make_unique<BackgroundProcess>(demo_->ServeArgv(
        {"--transport", "http", "--listen", "127.0.0.1:" + std::to_string(port_), "--auth", "oauth", "--issuer",
         issuer_, "--audience", audience_, "--scope-tools", "mcp:tools=convert_units"}));
    ASSERT_FALSE(AwaitOutput(*gateway_, std::regex(R"re(listening on (http://\S+))re")).empty()) << gateway_->Output();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  }

  // A modern request with `token` (none when empty): the status and the JSON-RPC answer.
  std::pair<httplib::Result, Json> Ask(const std::string& token, const Json& message) {
    httplib::Headers headers = {{"Accept", "application/json, text/event-stream"},
                                {"MCP-Protocol-Version", "2026-07-28"},
                                {"Mcp-Method", message["method"].get<std::string>()}};
    if (message["params"].contains("name")) headers.emplace("Mcp-Name", message["params"]["name"].get<std::string>());
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto result = client_->Post("/mcp", headers, message.dump(), "application/json");
    Json answer;
    if (result) {
      std::string body = result->body;
      if (const std::size_t data = body.rfind("data: "); data != std::string::npos) {
        body = body.substr(data + 6, body.find('\n', data) - data - 6);
      }
      if (auto parsed = json::Parse(body); parsed.ok()) answer = *parsed;
    }
    return {std::move(result), answer};
  }

  TempDir dir_;
  std::unique_ptr<ReviewedDemo> demo_;
  std::unique_ptr<BackgroundProcess> issuer_process_;
  std::unique_ptr<BackgroundProcess> gateway_;
  std::unique_ptr<httplib::Client> client_;
  std::string issuer_;
  std::string audience_;
  int port_ = 0;
};

TEST_F(ServeOAuthTest, AHostLogsInThroughTheMetadataAndSeesAndCallsOnlyItsScopesTools) {
  // Without a token: the challenge points at the metadata, which names the issuer.
  auto [refused, refusal] = Ask("", ModernMessage(1, "tools/list", Json::object()));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  const std::string metadata_url = "http://127.0.0.1:" + std::to_string(port_) +
                                   "/.well-known/oauth-protected-resource/mcp";
  EXPECT_EQ(refused->get_header_value("WWW-Authenticate"),
            "Bearer resource_metadata=\"" + metadata_url + "\", scope=\"mcp:tools\"");
  auto metadata = client_->Get("/.well-known/oauth-protected-resource/mcp");
  ASSERT_TRUE(metadata);
  auto document = json::Parse(metadata->body);
  ASSERT_TRUE(document.ok()) << metadata->body;
  EXPECT_EQ((*document)["resource"], audience_);
  EXPECT_EQ((*document)["authorization_servers"], Json::array({issuer_}));

  // mcp-remote discovers all of it, registers, logs in (the driver plays the browser) and lists.
  const std::string config_dir = dir_.File("mcp-remote");
  std::filesystem::create_directories(config_dir);
  ProcessResult anchor = RunProcess({NodeBinary(), Peer("mcp-remote-anchor.mjs"), audience_, "--config-dir", config_dir});
  ASSERT_EQ(anchor.exit_code, 0) << anchor.out << anchor.err << gateway_->Output();
  auto listed = json::Parse(anchor.out.substr(anchor.out.find('{')));
  ASSERT_TRUE(listed.ok()) << anchor.out;
  EXPECT_EQ((*listed)["tools"], Json::array({"convert_units"})) << "mcp:tools maps to convert_units alone";

  // The token the host obtained: the mapping holds for tools/call too.
  const std::string token = StoredAccessToken(config_dir);
  ASSERT_FALSE(token.empty());
  auto [called, call] = Ask(token, ModernMessage(2, "tools/call", {{"name", "convert_units"},
                                                                   {"arguments", {{"value", 2}, {"from", "kg"}, {"to", "g"}}}}));
  ASSERT_TRUE(called);
  EXPECT_EQ(called->status, 200);
  EXPECT_FALSE(call["result"].value("isError", false)) << call.dump();
  auto [outside, refusal_result] =
      Ask(token, ModernMessage(3, "tools/call", {{"name", "analyze_text"}, {"arguments", {{"text", "x"}}}}));
  ASSERT_TRUE(outside);
  EXPECT_TRUE(refusal_result["result"].value("isError", false)) << refusal_result.dump();
  EXPECT_EQ(refusal_result["result"]["_meta"]["code"], "auth.insufficient_scope") << refusal_result.dump();

  // The evidence names the caller keyed, never its name or token.
  const std::string evidence = Slurp(demo_->evidence);
  EXPECT_NE(evidence.find("\"callerHmacSha256\""), std::string::npos) << evidence;
  EXPECT_EQ(evidence.find(token), std::string::npos);
  EXPECT_EQ(evidence.find("\"alice\""), std::string::npos);
  EXPECT_EQ(gateway_->Output().find(token), std::string::npos);

  // A forged token (its signature changed) and one for another audience are refused.
  std::string forged = token;
  forged[forged.size() - 5] = forged[forged.size() - 5] == 'A' ? 'B' : 'A';
  auto [forged_result, forged_answer] = Ask(forged, ModernMessage(4, "tools/list", Json::object()));
  ASSERT_TRUE(forged_result);
  EXPECT_EQ(forged_result->status, 401);
  EXPECT_EQ(forged_result->get_header_value("WWW-Authenticate").rfind("Bearer error=\"invalid_token\"", 0), 0U);
}

// Claude Code, a host that does MCP's OAuth itself: `claude mcp login` discovers the gateway's
// metadata, registers, and waits for the browser's redirect on its loopback listener. It
// insists on a terminal, so it runs under script(1)'s pseudo-terminal; its "browser" is a
// script that writes the URL down, for the login driver to follow. Then Claude Code's own
// health check connects with the token it stored.
TEST_F(ServeOAuthTest, ClaudeCodeLogsInWithMcpLoginAndConnects) {
  const std::string claude = SourceDir() + "/tests/node_modules/.bin/claude";
  if (!std::filesystem::exists(claude)) GTEST_SKIP() << "@anthropic-ai/claude-code is not installed in tests/";
  if (OnPath("script").empty()) GTEST_SKIP() << "script (util-linux) is not installed";
  const std::string bin = dir_.File("bin");
  std::filesystem::create_directories(bin);
  std::filesystem::create_directories(dir_.File("home"));
  const std::string opener = bin + "/open-url";
  {
    std::ofstream script(opener);
    script << "#!/bin/sh\necho \"$1\" >> '" << dir_.File("opened.txt") << "'\n";
  }
  std::filesystem::permissions(opener, std::filesystem::perms::owner_all);
  const std::string node_dir = std::filesystem::path(NodeBinary()).parent_path().string();
  RunOptions options;
  options.cwd = dir_.File("home");
  options.env = {{"HOME", dir_.File("home")},
                 {"BROWSER", opener},
                 {"PATH", bin + ":" + node_dir + ":" + std::string(std::getenv("PATH"))},
                 {"DISABLE_AUTOUPDATER", "1"}};
  ProcessResult added = RunProcess({claude, "mcp", "add", "--scope", "user", "--transport", "http", "udon", audience_},
                                   options);
  ASSERT_EQ(added.exit_code, 0) << added.out << added.err;

  BackgroundProcess login({OnPath("script"), "-qfc", claude + " mcp login udon", "/dev/null"}, options);
  std::string url;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (url.empty() && std::chrono::steady_clock::now() < deadline && login.running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::string opened = Slurp(dir_.File("opened.txt"));
    url = opened.substr(0, opened.find('\n'));
  }
  ASSERT_EQ(url.rfind(issuer_ + "/auth?", 0), 0U) << login.Output();
  ProcessResult driven = RunProcess({NodeBinary(), Peer("login-driver.mjs"), url});
  ASSERT_EQ(driven.exit_code, 0) << driven.out << driven.err;
  const auto exit_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (login.running() && std::chrono::steady_clock::now() < exit_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(login.Output().find("Authenticated with \"udon\""), std::string::npos) << login.Output();

  ProcessResult listed = RunProcess({claude, "mcp", "list"}, options);
  EXPECT_NE(listed.out.find("udon: " + audience_ + " (HTTP) - \u2714 Connected"), std::string::npos)
      << listed.out << listed.err << gateway_->Output();
}

}  // namespace
}  // namespace udon::testing
