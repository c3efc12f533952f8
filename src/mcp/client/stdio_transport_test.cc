#include "mcp/client/stdio_transport.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "mcp/client/connection.h"
#include "mcp/client/least_privilege.h"
#include "test_support.h"

namespace udon::mcp {
namespace {

using std::chrono::milliseconds;

ServerConfig Shell(const std::string& script) {
  ServerConfig server;
  server.key = "sh";
  server.command = "/bin/sh";
  server.args = {"-c", script};
  return server;
}

// Answers every line with a result for id 1 (enough for one request at a time).
constexpr const char* kAnswerOne =
    R"(while read -r line; do printf '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}\n'; done)";

struct StdioHarness {
  explicit StdioHarness(ServerConfig server, StdioOptions options = {}) {
    auto owned = std::make_unique<StdioTransport>(std::move(server), options);
    transport = owned.get();
    connection = std::make_unique<Connection>(std::move(owned));
  }
  StdioTransport* transport = nullptr;
  std::unique_ptr<Connection> connection;
};

StdioOptions ShortGrace() {
  StdioOptions options;
  options.shutdown_grace = milliseconds(200);
  return options;
}

TEST(StdioTransportTest, ExchangesNewlineDelimitedMessages) {
  StdioHarness h(Shell(kAnswerOne));
  ASSERT_TRUE(h.connection->Start().ok());
  auto response = h.connection->Request("x", nullptr, milliseconds(30'000));
  ASSERT_TRUE(response.ok()) << response.error().Describe();
  EXPECT_EQ(response->message.result["ok"], true);
  h.connection->Close();
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

// A gateway starts servers on the thread of the request that needs one; that thread ends
// and the pooled connection serves the next request. PR_SET_PDEATHSIG is tied to the forking
// thread, so a fork on the caller's thread would have the server killed right then.
TEST(StdioTransportTest, AServerStartedOnAThreadThatEndsKeepsServing) {
  StdioHarness h(Shell(kAnswerOne));
  Status started = OkStatus();
  std::thread([&] { started = h.connection->Start(); }).join();
  ASSERT_TRUE(started.ok()) << started.error().Describe();
  std::this_thread::sleep_for(milliseconds(100));  // a kill on thread exit would have landed
  auto response = h.connection->Request("x", nullptr, milliseconds(30'000));
  ASSERT_TRUE(response.ok()) << response.error().Describe();
  EXPECT_EQ(response->message.result["ok"], true);
  h.connection->Close();
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, AppliesEnvAndCwd) {
  udon::testing::TempDir dir;
  ServerConfig server = Shell(
      R"sh(read -r line; printf '{"jsonrpc":"2.0","id":1,"result":{"v":"%s","d":"%s"}}\n' "$UDON_T" "$(pwd)")sh");
  server.env = {{"UDON_T", "value-1"}};
  server.cwd = dir.path();
  StdioHarness h(server);
  ASSERT_TRUE(h.connection->Start().ok());
  auto response = h.connection->Request("x", nullptr, milliseconds(30'000));
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->message.result["v"], "value-1");
  EXPECT_EQ(response->message.result["d"], dir.path());
  h.connection->Close();
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, MissingCommandIsSpawnFailed) {
  ServerConfig server;
  server.command = "/nonexistent/udon-no-such-server";
  StdioTransport transport(server);
  Status started = transport.Start({});
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().code, "mcp.spawn_failed");
  // The configured command and the OS error make it fixable.
  EXPECT_NE(started.error().message.find("\"/nonexistent/udon-no-such-server\""), std::string::npos)
      << started.error().message;
  EXPECT_NE(started.error().message.find("No such file or directory"), std::string::npos) << started.error().message;
  EXPECT_EQ(started.error().details["errno"], ENOENT);
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, ServerIgnoringStdinCloseAndSigtermIsKilled) {
  StdioHarness h(Shell("trap '' TERM; sleep 1000"), ShortGrace());
  ASSERT_TRUE(h.connection->Start().ok());
  EXPECT_FALSE(udon::testing::Descendants(getpid()).empty());
  h.connection->Close();
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, AServerThatExitsOnStdinCloseIsReapedWithoutWaitingTheGrace) {
  StdioOptions options;
  // A close that waited the grace would stall the suite for ten minutes.
  options.shutdown_grace = std::chrono::minutes(10);
  StdioHarness h(Shell("cat >/dev/null"), options);
  ASSERT_TRUE(h.connection->Start().ok());
  EXPECT_FALSE(udon::testing::Descendants(getpid()).empty());
  h.connection->Close();
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, GrandchildrenInTheGroupDieToo) {
  StdioHarness h(Shell("sleep 1000 & sleep 1000 & wait"), ShortGrace());
  ASSERT_TRUE(h.connection->Start().ok());
  h.connection->Close();
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, ServerExitingIsADisconnect) {
  StdioHarness h(Shell("read -r line; exit 3"));
  ASSERT_TRUE(h.connection->Start().ok());
  auto response = h.connection->Request("x", nullptr, milliseconds(30'000));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, "mcp.disconnected");
  EXPECT_EQ(response.error().details["cause"], "mcp.server_exited");
  h.connection->Close();
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, HowTheServerEndedIsKnownWithItsStderr) {
  StdioHarness h(Shell("read -r line; echo last-words >&2; exit 3"));
  ASSERT_TRUE(h.connection->Start().ok());
  EXPECT_EQ(h.transport->exit_description(), "");
  auto response = h.connection->Request("x", nullptr, milliseconds(30'000));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(h.transport->exit_description(), "exited with status 3");
  EXPECT_EQ(h.transport->stderr_tail(), "last-words\n");
  h.connection->Close();

  StdioHarness killed(Shell("read -r line; kill -9 $$"));
  ASSERT_TRUE(killed.connection->Start().ok());
  ASSERT_FALSE(killed.connection->Request("x", nullptr, milliseconds(30'000)).ok());
  EXPECT_EQ(killed.transport->exit_description(), "was killed by signal 9 (SIGKILL)");
  killed.connection->Close();
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, NonJsonOutputFailsClosed) {
  StdioHarness h(Shell("read -r line; echo 'Server started!'; sleep 1000"), ShortGrace());
  ASSERT_TRUE(h.connection->Start().ok());
  auto response = h.connection->Request("x", nullptr, milliseconds(30'000));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().details["cause"], "mcp.malformed_message");
  h.connection->Close();
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, HugeLineIsRefusedWithoutBufferingIt) {
  // 100 MB without a newline; the limit is 1 MiB, so reading stops early.
  StdioOptions options = ShortGrace();
  options.max_message_bytes = 1024 * 1024;
  StdioHarness h(Shell("head -c 104857600 /dev/zero | tr '\\0' a; sleep 1000"), options);
  ASSERT_TRUE(h.connection->Start().ok());
  auto response = h.connection->Request("x", nullptr, milliseconds(60'000));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().details["cause"], "mcp.message_too_large");
  h.connection->Close();
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

// Found by the hostile-peers suite: the reader thread answering pings blocked forever in
// a write to a stdin nobody read, holding the write lock that the timed-out request's
// cancellation (and Close) waited on.
TEST(StdioTransportTest, AServerThatNeverReadsItsStdinCannotWedgeTheClient) {
  StdioOptions options = ShortGrace();
  options.write_stall_limit = milliseconds(300);
  StdioHarness h(Shell(R"(while :; do echo '{"jsonrpc":"2.0","id":"p","method":"ping"}'; done)"), options);
  ASSERT_TRUE(h.connection->Start().ok());
  auto response = h.connection->Request("x", nullptr, milliseconds(300));
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(response.error().code == "mcp.timeout" || response.error().code == "mcp.disconnected")
      << response.error().Describe();
  h.connection->Close();
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, StderrIsDrainedIntoABoundedBuffer) {
  StdioOptions options;
  options.stderr_buffer_bytes = 1000;
  // 1 MB on stderr first: a server blocked on a full stderr pipe would never answer.
  StdioHarness h(Shell(std::string("head -c 1000000 /dev/zero | tr '\\0' e >&2; echo END >&2; ") +
                       kAnswerOne),
                 options);
  ASSERT_TRUE(h.connection->Start().ok());
  auto response = h.connection->Request("x", nullptr, milliseconds(30'000));
  ASSERT_TRUE(response.ok()) << response.error().Describe();
  h.connection->Close();
  const std::string tail = h.transport->stderr_tail();
  EXPECT_LE(tail.size(), 1000u);
  EXPECT_EQ(tail.substr(tail.size() - 4), "END\n");
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, WhatTheServerWroteToStderrAsItExitedIsKeptAfterClose) {
  StdioOptions options;
  options.stderr_buffer_bytes = 1000;
  // Written after stdin closes, right before the exit Close waits for: still in the pipe
  // when the server is reaped.
  StdioHarness h(Shell("cat >/dev/null; head -c 60000 /dev/zero | tr '\\0' e >&2; echo END >&2"), options);
  ASSERT_TRUE(h.connection->Start().ok());
  h.connection->Close();
  const std::string tail = h.transport->stderr_tail();
  ASSERT_GE(tail.size(), 4u);
  EXPECT_EQ(tail.substr(tail.size() - 4), "END\n");
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, CloseIsIdempotentAndSendAfterCloseFails) {
  StdioHarness h(Shell(kAnswerOne));
  ASSERT_TRUE(h.connection->Start().ok());
  h.connection->Close();
  h.connection->Close();
  EXPECT_FALSE(h.transport->Send(MakeNotification("x")).ok());
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, OnlyTheDefaultSetListedNamesAndTheEntrysEnvReachTheServer) {
  setenv("UDON_T_CANARY", "cnry-parent", 1);
  setenv("UDON_T_LISTED", "listed", 1);
  setenv("PGPASSWORD", "pg-secret", 1);
  ServerConfig server = Shell(
      R"sh(read -r line; printf '{"jsonrpc":"2.0","id":1,"result":{"c":"%s","l":"%s","p":"%s","e":"%s"}}\n' "${UDON_T_CANARY-unset}" "${UDON_T_LISTED-unset}" "${PGPASSWORD-unset}" "${UDON_T-unset}")sh");
  server.inherit_env = {"UDON_T_LISTED", "PGPASSWORD"};
  server.env = {{"UDON_T", "configured"}};
  StdioHarness h(server);
  ASSERT_TRUE(h.connection->Start().ok());
  auto response = h.connection->Request("x", nullptr, milliseconds(30'000));
  unsetenv("UDON_T_CANARY");
  unsetenv("UDON_T_LISTED");
  unsetenv("PGPASSWORD");
  ASSERT_TRUE(response.ok()) << response.error().Describe();
  EXPECT_EQ(response->message.result["c"], "unset");
  EXPECT_EQ(response->message.result["l"], "listed");
  EXPECT_EQ(response->message.result["p"], "unset");
  EXPECT_EQ(response->message.result["e"], "configured");
  h.connection->Close();
}

TEST(StdioTransportTest, ASandboxedServerAnswersAndItsWholeTreeIsGoneAfterClose) {
  if (access("/usr/bin/bwrap", X_OK) != 0 && std::getenv("CI") == nullptr) {
    GTEST_SKIP() << "bubblewrap is not installed (scripts/install-deps.sh installs it)";
  }
  Status available = CheckSandboxAvailable("/usr/bin/bwrap");
  ASSERT_TRUE(available.ok()) << available.error().Describe() << " " << available.error().details.dump();
  ServerConfig server = Shell(std::string("sleep 1000 & sleep 1000 & ") + kAnswerOne);
  server.sandbox = SandboxSettings{};
  StdioHarness h(server, ShortGrace());
  ASSERT_TRUE(h.connection->Start().ok());
  auto response = h.connection->Request("x", nullptr, milliseconds(30'000));
  ASSERT_TRUE(response.ok()) << response.error().Describe() << " " << h.transport->stderr_tail();
  EXPECT_EQ(response->message.result["ok"], true);
  h.connection->Close();
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
}

TEST(StdioTransportTest, ASandboxThatCannotBeBuiltStartsNothing) {
  udon::testing::TempDir dir;
  ServerConfig server = Shell("touch '" + dir.File("started") + "'; " + kAnswerOne);
  server.sandbox = SandboxSettings{};
  setenv("UDON_MCP_BWRAP", "/nonexistent/udon-bwrap", 1);
  StdioTransport transport(server);
  Status started = transport.Start({});
  unsetenv("UDON_MCP_BWRAP");
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().code, "config.invalid");
  EXPECT_EQ(started.error().details["reason"], "bwrap_missing");
  EXPECT_TRUE(udon::testing::Descendants(getpid()).empty());
  EXPECT_FALSE(std::filesystem::exists(dir.File("started")));
}

}  // namespace
}  // namespace udon::mcp
