// Least privilege for the stdio servers udon-mcp starts (docs/contract.md 7.10), witnessed by
// the server itself: udon-privilege-peer (tests/support/privilege_peer.cc) reports its
// environment's names, the descriptors it inherited, whether it could reach a listener on
// the host's 127.0.0.1 and which files it could write.
//
// - Environment and descriptors through the client library (the transport under test),
//   and the reserved variables through the real udon-mcp binary as well.
// - The sandbox through the real udon-mcp binary: capture and a gated call still work, the
//   host's loopback is out of reach, only the writable directories (and a private /tmp)
//   can be written, and the evidence says so; the unsandboxed control can connect.
// - A sandbox that cannot be built (no bwrap, a kernel refusing namespaces) is
//   config.invalid and the server never starts.
// These tests need a working bubblewrap: where it cannot create namespaces they fail with
// bwrap's reason rather than pass.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "json/json.h"
#include "mcp/client/client.h"
#include "mcp/client/config.h"
#include "mcp/client/least_privilege.h"
#include "test_support.h"

namespace udon {
namespace {

namespace fs = std::filesystem;
using testing::ProcessResult;
using testing::TempDir;

constexpr const char* kCanary = "UDON_LP_CANARY";
constexpr const char* kListed = "UDON_LP_LISTED";

std::string PeerBinary() { return testing::BinaryDir() + "/tests/integration/udon-privilege-peer"; }

bool Contains(const json::Value& array, const json::Value& item) {
  return std::find(array.begin(), array.end(), item) != array.end();
}

// Fails (never skips under CI) when this machine cannot run the sandbox, with bwrap's reason.
void RequireSandbox() {
  if (access("/usr/bin/bwrap", X_OK) != 0 && std::getenv("CI") == nullptr) {
    GTEST_SKIP() << "bubblewrap is not installed (scripts/install-deps.sh installs it)";
  }
  Status available = mcp::CheckSandboxAvailable("/usr/bin/bwrap");
  ASSERT_TRUE(available.ok()) << "the sandbox cannot run here: " << available.error().Describe() << " "
                              << available.error().details.dump();
}

// A listener on the host's 127.0.0.1: connect() succeeds through the backlog alone.
class LoopbackListener {
 public:
  LoopbackListener() : fd_(testing::ListenOnLoopback(port_)) {}
  ~LoopbackListener() {
    if (fd_ >= 0) close(fd_);
  }
  int port() const { return port_; }

 private:
  int port_ = 0;
  int fd_ = -1;
};

// Sets variables in this process (the parent udon-mcp's environment) for one test.
class ScopedEnv {
 public:
  ScopedEnv(std::vector<std::pair<std::string, std::string>> values) : values_(std::move(values)) {
    for (const auto& [name, value] : values_) setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : values_) unsetenv(name.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::string>> values_;
};

// The peer's report for one `inspect` call through the client library.
json::Value Inspect(const mcp::ServerConfig& server, const json::Value& arguments = json::Value::object()) {
  mcp::ClientOptions options;
  options.request_timeout = std::chrono::seconds(30);
  auto client = mcp::Client::Connect(server, options);
  EXPECT_TRUE(client.ok()) << client.error().Describe();
  if (!client.ok()) return nullptr;
  auto opened = (*client)->Negotiate();
  EXPECT_TRUE(opened.ok()) << opened.error().Describe();
  auto outcome = (*client)->CallTool("inspect", arguments);
  (*client)->Close();
  EXPECT_TRUE(outcome.ok() && outcome->result) << (outcome.ok() ? "no result" : outcome.error().Describe());
  if (!outcome.ok() || !outcome->result) return nullptr;
  return (*outcome->result)["structuredContent"];
}

mcp::ServerConfig Parse(const json::Value& entry) {
  auto config = mcp::ParseRuntimeConfig(json::Value({{"mcpServers", {{"peer", entry}}}}).dump(), mcp::ProcessEnv());
  EXPECT_TRUE(config.ok()) << config.error().Describe();
  return config.ok() ? config->servers.at("peer") : mcp::ServerConfig{};
}

TEST(LeastPrivilegeTest, TheServerSeesTheDefaultSetItsEnvAndWhatItsEntryListsOnly) {
  ScopedEnv parent({{kCanary, "cnry-parent-1"}, {kListed, "listed"}, {"PGPASSWORD", "pg-secret"},
                    {"UDON_MCP_STATE", "postgres://state"}, {"LC_TIME", "C"}});
  const json::Value env = Inspect(Parse({{"command", PeerBinary()},
                                         {"env", {{"CONFIGURED", "yes"}}},
                                         {"inheritEnv", {kListed}}}))["env"];
  EXPECT_FALSE(Contains(env, kCanary)) << env.dump();
  EXPECT_TRUE(Contains(env, kListed)) << env.dump();
  EXPECT_TRUE(Contains(env, "CONFIGURED")) << env.dump();
  EXPECT_TRUE(Contains(env, "PATH")) << env.dump();
  EXPECT_TRUE(Contains(env, "LC_TIME")) << env.dump();
  EXPECT_FALSE(Contains(env, "PGPASSWORD")) << env.dump();
  EXPECT_FALSE(Contains(env, "UDON_MCP_STATE")) << env.dump();
}

TEST(LeastPrivilegeTest, StateUrlAndPasswordNeverReachAServerEvenWhenListed) {
  ScopedEnv parent({{kCanary, "cnry-parent-2"}, {"PGPASSWORD", "pg-secret"}, {"UDON_MCP_STATE", "postgres://state"}});
  // Built by hand: the configuration loader refuses these entries before they get here.
  mcp::ServerConfig listed;
  listed.key = "peer";
  listed.command = PeerBinary();
  listed.inherit_env = {"PGPASSWORD", "UDON_MCP_STATE"};
  const json::Value env = Inspect(listed)["env"];
  EXPECT_FALSE(Contains(env, "PGPASSWORD")) << env.dump();
  EXPECT_FALSE(Contains(env, "UDON_MCP_STATE")) << env.dump();

  mcp::ServerConfig everything = listed;
  everything.inherit_env_all = true;
  const json::Value all = Inspect(everything)["env"];
  EXPECT_TRUE(Contains(all, kCanary)) << all.dump();
  EXPECT_FALSE(Contains(all, "PGPASSWORD")) << all.dump();
  EXPECT_FALSE(Contains(all, "UDON_MCP_STATE")) << all.dump();
}

TEST(LeastPrivilegeTest, OnlyStdinStdoutAndStderrReachTheServer) {
  // Descriptors opened the careless way (no O_CLOEXEC), as a library or a stream might.
  const int file = open("/dev/null", O_RDONLY);
  const int sock = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(file, 3);
  ASSERT_GE(sock, 3);
  mcp::ServerConfig server;
  server.key = "peer";
  server.command = PeerBinary();
  EXPECT_EQ(Inspect(server)["fds"], json::Value({0, 1, 2}));
  close(file);
  close(sock);
}

TEST(LeastPrivilegeTest, OnlyStdinStdoutAndStderrReachASandboxedServer) {
  RequireSandbox();
  const int file = open("/dev/null", O_RDONLY);
  ASSERT_GE(file, 3);
  mcp::ServerConfig server;
  server.key = "peer";
  server.command = PeerBinary();
  server.sandbox = mcp::SandboxSettings{};
  EXPECT_EQ(Inspect(server)["fds"], json::Value({0, 1, 2}));
  close(file);
}

// capture, review, digest and a gated call through the udon-mcp binary.
class SandboxCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    outside_ = testing::BinaryDir() + "/tests/integration/least-privilege-outside-" + std::to_string(getpid());
    fs::create_directories(outside_);
    fs::create_directories(dir_.File("out"));
    fs::create_directories(dir_.File("state"));
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(outside_, ignored);
  }

  ProcessResult Udon(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), testing::UdonMcpBinary());
    testing::RunOptions options;
    options.env = std::move(env);
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    options.cwd = dir_.path();
    return testing::RunProcess(args, options);
  }

  void WriteConfig(const json::Value& entry) {
    dir_.Write("mcp.json", json::Value({{"mcpServers", {{"peer", entry}}}}).dump(2));
  }

  // capture + review + digest; returns the pin.
  std::string Reviewed() {
    ProcessResult capture = Udon({"capture", "--server", "peer", "-o", "tools.json"});
    EXPECT_EQ(capture.exit_code, 0) << capture.out << capture.err;
    ProcessResult review = Udon({"review", "tools.json", "--server", "peer", "--tool", "inspect", "--reviewer",
                                 "tester@example.test", "--headless", "--independent-calls", "--model-backed",
                                 "false", "--side-effect", "writes_files", "--concurrency", "safe",
                                 "--reference-based-io", "--channel", "/connectPort=data", "--channel",
                                 "/writePaths=data"});
    EXPECT_EQ(review.exit_code, 0) << review.out << review.err;
    return Udon({"digest", "tools.json"}).out.substr(0, 64);
  }

  ProcessResult Call(const std::string& sha, const json::Value& arguments,
                     std::map<std::string, std::string> env = {}) {
    return Udon({"call", "--json", "--manifest", "tools.json", "--sha256", sha, "--server", "peer", "--tool", "inspect",
                 "--args", arguments.dump(), "--expect-output", "--evidence", "evidence.jsonl"},
                std::move(env));
  }

  json::Value LastEvidence() {
    std::istringstream lines(dir_.Read("evidence.jsonl"));
    std::string line, last;
    while (std::getline(lines, line)) {
      if (!line.empty()) last = line;
    }
    return json::Value::parse(last);
  }

  TempDir dir_;
  std::string outside_;  // a host directory outside /tmp, not listed as writable
};

TEST_F(SandboxCliTest, ASandboxedServerAnswersCaptureAndAGatedCallButReachesNeitherLoopbackNorFiles) {
  RequireSandbox();
  LoopbackListener listener;
  ASSERT_GT(listener.port(), 0);
  WriteConfig({{"command", PeerBinary()}, {"sandbox", {{"network", false}, {"writable", {dir_.File("out")}}}}});
  const std::string sha = Reviewed();
  const std::string private_tmp = "/tmp/udon-lp-private-" + std::to_string(getpid());
  ProcessResult call = Call(sha, {{"connectPort", listener.port()},
                                  {"writePaths", {dir_.File("out/allowed.txt"), outside_ + "/denied.txt",
                                                  dir_.File("denied.txt"), private_tmp}}});
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  const json::Value report = json::Value::parse(call.out)["structuredContent"];
  EXPECT_EQ(report["connected"], false) << "the host's 127.0.0.1 must be out of reach";
  EXPECT_EQ(report["written"], json::Value({true, false, false, true})) << report.dump();
  EXPECT_EQ(report["fds"], json::Value({0, 1, 2}));
  EXPECT_TRUE(fs::exists(dir_.File("out/allowed.txt")));
  EXPECT_FALSE(fs::exists(outside_ + "/denied.txt"));
  EXPECT_FALSE(fs::exists(dir_.File("denied.txt")));
  EXPECT_FALSE(fs::exists(private_tmp)) << "the sandbox's /tmp must be its own";
  const json::Value evidence = LastEvidence();
  EXPECT_EQ(evidence["sandbox"], json::Value({{"enabled", true}, {"network", false}, {"writable", 1}}))
      << evidence.dump();
}

TEST_F(SandboxCliTest, WithoutASandboxTheSameServerReachesTheHostLoopback) {
  LoopbackListener listener;
  WriteConfig({{"command", PeerBinary()}});
  const std::string sha = Reviewed();
  ProcessResult call = Call(sha, {{"connectPort", listener.port()}, {"writePaths", {outside_ + "/control.txt"}}});
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  const json::Value report = json::Value::parse(call.out)["structuredContent"];
  EXPECT_EQ(report["connected"], true);
  EXPECT_EQ(report["written"], json::Value({true}));
  EXPECT_EQ(LastEvidence()["sandbox"], json::Value({{"enabled", false}}));
}

TEST_F(SandboxCliTest, NetworkTrueKeepsTheHostNetwork) {
  RequireSandbox();
  LoopbackListener listener;
  WriteConfig({{"command", PeerBinary()}, {"sandbox", {{"network", true}}}});
  const std::string sha = Reviewed();
  ProcessResult call = Call(sha, {{"connectPort", listener.port()}});
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  EXPECT_EQ(json::Value::parse(call.out)["structuredContent"]["connected"], true);
  EXPECT_EQ(LastEvidence()["sandbox"], json::Value({{"enabled", true}, {"network", true}, {"writable", 0}}));
}

TEST_F(SandboxCliTest, ASandboxThatCannotBeBuiltIsConfigInvalidAndNothingStarts) {
  RequireSandbox();
  WriteConfig({{"command", PeerBinary()}, {"sandbox", true}});
  const std::string sha = Reviewed();
  // A missing bwrap, and one that fails the probe as a kernel refusing namespaces would.
  for (const auto& [bwrap, reason] : std::vector<std::pair<std::string, std::string>>{
           {"/nonexistent/bwrap", "bwrap_missing"}, {"/bin/false", "namespaces_refused"}}) {
    SCOPED_TRACE(bwrap);
    WriteConfig({{"command", PeerBinary()}, {"args", {"--touch", dir_.File("started")}}, {"sandbox", true}});
    ProcessResult call = Call(sha, json::Value::object(), {{"UDON_MCP_BWRAP", bwrap}});
    EXPECT_EQ(call.exit_code, 2) << call.out << call.err;
    const json::Value out = json::Value::parse(call.out);
    EXPECT_EQ(out["code"], "config.invalid") << call.out;
    EXPECT_EQ(out["details"]["reason"], reason) << call.out;
    EXPECT_EQ(out["details"]["server"], "peer") << call.out;
    // UDON_MCP_BWRAP's value is an environment value: never in a message or details.
    EXPECT_EQ((call.out + call.err).find(bwrap), std::string::npos) << call.out << call.err;
    EXPECT_FALSE(fs::exists(dir_.File("started"))) << "the server started without its sandbox";
    ProcessResult capture = Udon({"capture", "--server", "peer", "-o", "again.json"}, {{"UDON_MCP_BWRAP", bwrap}});
    EXPECT_EQ(capture.exit_code, 2) << capture.out << capture.err;
    EXPECT_FALSE(fs::exists(dir_.File("started"))) << "capture started the server without its sandbox";
  }
}

TEST_F(SandboxCliTest, ReservedVariablesStayWithUdonMcpAndInheritEnvTrueIsFlagged) {
  WriteConfig({{"command", PeerBinary()}, {"inheritEnv", true}});
  const std::string sha = Reviewed();
  const std::map<std::string, std::string> parent = {
      {kCanary, "cnry-parent-3"}, {"PGPASSWORD", "pg-secret"}, {"UDON_MCP_STATE", dir_.File("shared-state")}};
  ProcessResult call = Call(sha, json::Value::object(), parent);
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  EXPECT_NE(call.err.find("inheritEnv: true"), std::string::npos) << call.err;
  const json::Value env = json::Value::parse(call.out)["structuredContent"]["env"];
  EXPECT_TRUE(Contains(env, kCanary));
  EXPECT_FALSE(Contains(env, "PGPASSWORD"));
  EXPECT_FALSE(Contains(env, "UDON_MCP_STATE"));

  // Named explicitly, they make the configuration invalid: nothing is started.
  for (const json::Value& entry :
       {json::Value({{"command", PeerBinary()}, {"inheritEnv", {"PGPASSWORD"}}}),
        json::Value({{"command", PeerBinary()}, {"env", {{"STATE", "${env:UDON_MCP_STATE}"}}}})}) {
    WriteConfig(entry);
    ProcessResult refused = Call(sha, json::Value::object(), parent);
    EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
    EXPECT_EQ(json::Value::parse(refused.out)["code"], "config.invalid") << refused.out;
  }
}

}  // namespace
}  // namespace udon
