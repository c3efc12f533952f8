// The MCP client against real peers: @modelcontextprotocol/server-everything over stdio
// and Streamable HTTP, and process hygiene on every path.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "mcp/client/client.h"
#include "mcp/client/stdio_transport.h"
#include "test_support.h"

namespace udon::mcp {
namespace {

using std::chrono::milliseconds;
using udon::testing::Descendants;

std::string EverythingEntry() {
  return udon::testing::PeerModuleDir("@modelcontextprotocol/server-everything") +
         "/dist/index.js";
}

ServerConfig EverythingStdio() {
  ServerConfig server;
  server.key = "everything";
  server.command = udon::testing::NodeBinary();
  server.args = {EverythingEntry(), "stdio"};
  return server;
}

std::vector<json::Value> AllTools(const ToolPages& pages) {
  std::vector<json::Value> tools;
  for (const auto& page : pages.pages) {
    for (const auto& tool : page["tools"]) tools.push_back(tool);
  }
  return tools;
}

const json::Value* FindTool(const std::vector<json::Value>& tools, const std::string& name) {
  for (const auto& tool : tools) {
    if (tool["name"] == name) return &tool;
  }
  return nullptr;
}

bool SawListChanged(Connection& connection) {
  for (const Event& event : connection.EventsSince(0)) {
    if (event.method == "notifications/tools/list_changed") return true;
  }
  return false;
}

// The checks both transports share: initialize, full listing, get-sum, structured content.
void ExerciseEverything(Client& client) {
  auto init = client.Initialize();
  ASSERT_TRUE(init.ok()) << init.error().Describe();
  EXPECT_EQ(init->protocol_version, "2025-11-25");
  EXPECT_EQ(init->server_info["name"], "mcp-servers/everything");
  EXPECT_TRUE(init->capabilities["tools"].is_object());

  auto pages = client.ListAllTools();
  ASSERT_TRUE(pages.ok()) << pages.error().Describe();
  const auto tools = AllTools(*pages);
  EXPECT_GE(tools.size(), 12u);
  const json::Value* sum = FindTool(tools, "get-sum");
  const json::Value* structured = FindTool(tools, "get-structured-content");
  ASSERT_NE(sum, nullptr);
  ASSERT_NE(structured, nullptr);
  EXPECT_TRUE((*structured)["outputSchema"].is_object());

  auto sum_call = client.CallTool("get-sum", {{"a", 19}, {"b", 23}});
  ASSERT_TRUE(sum_call.ok()) << sum_call.error().Describe();
  ASSERT_TRUE(sum_call->result.has_value());
  EXPECT_NE((*sum_call->result)["content"].dump().find("42"), std::string::npos);

  auto weather = client.CallTool("get-structured-content", {{"location", "Chicago"}});
  ASSERT_TRUE(weather.ok()) << weather.error().Describe();
  ASSERT_TRUE(weather->result.has_value());
  EXPECT_TRUE((*weather->result)["structuredContent"]["temperature"].is_number());

  auto unknown = client.CallTool("no-such-tool", json::Value::object());
  ASSERT_TRUE(unknown.ok()) << unknown.error().Describe();
  // The SDK reports an unknown tool either way; both shapes are surfaced raw.
  EXPECT_TRUE(unknown->error.has_value() || (*unknown->result)["isError"] == true);
}

TEST(McpClientIntegrationTest, EverythingOverStdio) {
  UDON_REQUIRE_PEERS();
  auto client = Client::Connect(EverythingStdio());
  ASSERT_TRUE(client.ok()) << client.error().Describe();
  ExerciseEverything(**client);
  // server-everything registers a tool in oninitialized and announces it.
  for (int i = 0; i < 100 && !SawListChanged((*client)->connection()); ++i) {
    (*client)->connection().WaitForEventAfter((*client)->connection().LastSequence(),
                                              milliseconds(100));
  }
  EXPECT_TRUE(SawListChanged((*client)->connection()));
  (*client)->Close();
  EXPECT_TRUE(Descendants(getpid()).empty());
}

class EverythingHttp {
 public:
  EverythingHttp() : port_(udon::testing::FreeLoopbackPort()) {
    udon::testing::RunOptions options;
    options.env["PORT"] = std::to_string(port_);
    process_ = std::make_unique<udon::testing::BackgroundProcess>(
        std::vector<std::string>{udon::testing::NodeBinary(), "-r",
                                 udon::testing::SourceDir() + "/tests/peers/bind-loopback.cjs",
                                 EverythingEntry(), "streamableHttp"},
        options);
    ready_ = udon::testing::WaitForPort(port_);
  }
  bool ready() const { return ready_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }
  udon::testing::BackgroundProcess& process() { return *process_; }

 private:
  int port_;
  std::unique_ptr<udon::testing::BackgroundProcess> process_;
  bool ready_ = false;
};

ServerConfig HttpServer(const std::string& url) {
  ServerConfig server;
  server.key = "everything-http";
  server.type = ServerType::kHttp;
  server.url = url;
  server.headers = {{"X-Udon-Test", "header-value"}};
  return server;
}

TEST(McpClientIntegrationTest, EverythingOverStreamableHttp) {
  UDON_REQUIRE_PEERS();
  EverythingHttp peer;
  ASSERT_TRUE(peer.ready()) << peer.process().Output();
  {
    auto client = Client::Connect(HttpServer(peer.url()));
    ASSERT_TRUE(client.ok()) << client.error().Describe();
    ExerciseEverything(**client);
    (*client)->Close();
  }
  // A second connection gets its own session and works the same.
  auto again = Client::Connect(HttpServer(peer.url()));
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE((*again)->Initialize().ok());
  ASSERT_TRUE((*again)->ListAllTools().ok());
  (*again)->Close();
  peer.process().Stop();
  EXPECT_TRUE(Descendants(getpid()).empty());
}

TEST(McpClientIntegrationTest, HttpServerGoneIsAClearError) {
  UDON_REQUIRE_PEERS();
  EverythingHttp peer;
  ASSERT_TRUE(peer.ready()) << peer.process().Output();
  auto client = Client::Connect(HttpServer(peer.url()));
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Initialize().ok());
  peer.process().Stop();
  auto call = (*client)->CallTool("get-sum", {{"a", 1}, {"b", 2}}, milliseconds(10'000));
  ASSERT_FALSE(call.ok());
  EXPECT_EQ(call.error().code, "call.indeterminate");
  (*client)->Close();
}

TEST(McpClientIntegrationTest, StdioServerThatIgnoresStdinAndSigtermLeavesNothing) {
  ServerConfig server;
  server.key = "stubborn";
  server.command = "/bin/sh";
  server.args = {"-c", "trap '' TERM; sleep 1000 & sleep 1000"};
  ClientOptions options;
  options.shutdown_grace = milliseconds(200);
  options.request_timeout = milliseconds(200);
  auto client = Client::Connect(server, options);
  ASSERT_TRUE(client.ok());
  auto init = (*client)->Initialize();
  ASSERT_FALSE(init.ok());
  EXPECT_EQ(init.error().code, "server.connect_failed");
  EXPECT_EQ(init.error().details["cause"], "mcp.timeout");
  EXPECT_FALSE(Descendants(getpid()).empty());
  (*client)->Close();
  EXPECT_TRUE(Descendants(getpid()).empty());
}

bool ProcessGone(pid_t pid) {
  struct stat info;
  return stat(("/proc/" + std::to_string(pid)).c_str(), &info) != 0;
}

TEST(McpClientIntegrationTest, KilledClientTakesItsServerDown) {
  UDON_REQUIRE_PEERS();
  const std::string victim = udon::testing::BinaryDir() + "/tests/integration/mcp_client_victim";
  udon::testing::BackgroundProcess client(
      {victim, udon::testing::NodeBinary(), EverythingEntry(), "stdio"});
  pid_t server_pid = -1;
  for (int i = 0; i < 600 && server_pid < 0; ++i) {
    const std::string out = client.Output();
    auto at = out.find("server-pid ");
    if (at != std::string::npos && out.find('\n', at) != std::string::npos) {
      server_pid = static_cast<pid_t>(std::stol(out.substr(at + 11)));
    } else {
      std::this_thread::sleep_for(milliseconds(50));
    }
  }
  ASSERT_GT(server_pid, 0) << client.Output();
  ASSERT_FALSE(ProcessGone(server_pid));
  kill(client.pid(), SIGKILL);
  client.Stop();
  // The kernel delivers SIGKILL (PR_SET_PDEATHSIG); the orphan is reaped by init.
  for (int i = 0; i < 600 && !ProcessGone(server_pid); ++i) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_TRUE(ProcessGone(server_pid));
  EXPECT_TRUE(Descendants(getpid()).empty());
}

}  // namespace
}  // namespace udon::mcp
