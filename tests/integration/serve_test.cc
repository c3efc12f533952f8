// `udon-mcp serve` end to end with real processes: the gateway in front of the demo server
// over stdio and HTTP; drift mid-session and SIGHUP; evidence; many clients at once.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <sys/stat.h>

#include "demo_http.h"
#include "json/json.h"
#include "line_client.h"
#include "serve_fixture.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

std::vector<std::string> ToolNames(const Json& list_response) {
  std::vector<std::string> names;
  for (const auto& tool : list_response["result"]["tools"]) names.push_back(tool["name"]);
  return names;
}

Json ConvertUnits(int id) {
  return Request(id, "tools/call", {{"name", "convert_units"}, {"arguments", {{"value", 2}, {"from", "kg"}, {"to", "g"}}}});
}

TEST(ServeTest, AStdioHostListsTheReviewedToolsAndCallsThroughTheGate) {
  TempDir dir;
  ReviewedDemo demo(dir);
  ASSERT_TRUE(demo.ok()) << demo.failure;
  LineClient client(demo.ServeArgv());
  client.Send(InitializeRequest(1));
  auto initialized = client.ReadResponse(1);
  ASSERT_TRUE(initialized) << client.Stderr();
  EXPECT_EQ((*initialized)["result"]["serverInfo"]["name"], "udon-mcp-serve");
  EXPECT_EQ((*initialized)["result"]["capabilities"], Json({{"tools", {{"listChanged", true}}}}))
      << "the tools capability and nothing else";
  client.Send(Notification("notifications/initialized"));
  client.Send(Request(2, "tools/list"));
  auto listed = client.ReadResponse(2);
  ASSERT_TRUE(listed);
  const std::vector<std::string> names = ToolNames(*listed);
  EXPECT_NE(std::find(names.begin(), names.end(), "convert_units"), names.end()) << listed->dump();
  client.Send(ConvertUnits(3));
  auto called = client.ReadResponse(3);
  ASSERT_TRUE(called);
  EXPECT_FALSE((*called)["result"].value("isError", false)) << called->dump();
  EXPECT_EQ((*called)["result"]["structuredContent"]["value"], 2000.0);
  // A name that was never reviewed is not forwarded: unknown here.
  client.Send(Request(4, "tools/call", {{"name", "no_such_tool"}, {"arguments", Json::object()}}));
  auto unknown = client.ReadResponse(4);
  ASSERT_TRUE(unknown);
  EXPECT_TRUE(unknown->contains("error")) << unknown->dump();
  client.CloseInput();
  EXPECT_EQ(client.Wait(), 0) << client.Stderr();
  EXPECT_TRUE(Descendants(getpid()).empty()) << "no upstream server outlives the gateway";
  // One value-free record per call, command "serve", with the client's label.
  const std::string evidence = dir.Read("evidence.jsonl");
  auto record = json::Parse(evidence.substr(0, evidence.find('\n')));
  ASSERT_TRUE(record.ok()) << evidence;
  EXPECT_EQ((*record)["command"], "serve");
  EXPECT_EQ((*record)["code"], "ok");
  EXPECT_EQ((*record)["tool"], "convert_units");
  EXPECT_EQ((*record)["client"].get<std::string>().rfind("session-", 0), 0u) << record->dump();
}

// The demo server over HTTP on a fixed port, so it can be restarted in place.
class UpstreamOnPort {
 public:
  UpstreamOnPort(int port, const std::string& log, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {DemoServerBinary(), "--transport", "http", "--port", std::to_string(port),
                                     "--log-requests", log};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<BackgroundProcess>(argv);
    ready_ = WaitForPort(port);
  }
  bool ready() const { return ready_; }
  void Stop() { process_->Stop(); }

 private:
  std::unique_ptr<BackgroundProcess> process_;
  bool ready_ = false;
};

Json RenderTurntable(int id) {
  return Request(id, "tools/call",
                 {{"name", "render_turntable"},
                  {"arguments", {{"source", "blender://assets/teapot"}, {"angles", 3}, {"resolution", 1024}}}});
}

bool Saw(const std::vector<Json>& seen, const std::string& method) {
  return std::any_of(seen.begin(), seen.end(), [&](const Json& m) { return m.value("method", "") == method; });
}

// Reads until `method` arrives (or the output ends or stalls).
bool AwaitNotification(LineClient& client, const std::string& method) {
  for (;;) {
    auto line = client.ReadLine();
    if (!line) return false;
    auto message = json::Parse(*line);
    if (message.ok() && message->value("method", "") == method) return true;
  }
}

// A reviewed demo server over HTTP on a fixed port, which a test restarts with a fault to
// make its catalog drift mid-session.
class ServeDriftTest : public ::testing::Test {
 protected:
  void SetUp() override {
    upstream_ = std::make_unique<UpstreamOnPort>(port_, dir_.File("before.log"));
    ASSERT_TRUE(upstream_->ready());
    demo_ = std::make_unique<ReviewedDemo>(dir_, std::vector<std::string>{},
                                           "http://127.0.0.1:" + std::to_string(port_) + "/mcp");
    ASSERT_TRUE(demo_->ok()) << demo_->failure;
  }
  void RestartUpstreamWith(const std::string& fault) {
    upstream_->Stop();
    upstream_ = std::make_unique<UpstreamOnPort>(port_, dir_.File("after.log"), std::vector<std::string>{"--fault", fault});
    ASSERT_TRUE(upstream_->ready());
  }

  TempDir dir_;
  const int port_ = FreeLoopbackPort();
  std::unique_ptr<UpstreamOnPort> upstream_;
  std::unique_ptr<ReviewedDemo> demo_;
};

TEST_F(ServeDriftTest, DriftMidSessionIsRefusedWithdrawnAndAnnouncedUntilSighupBringsANewPin) {
  dir_.Write("pin", demo_->sha256 + "\n");
  std::vector<std::string> argv = demo_->ServeArgv();
  auto sha = std::find(argv.begin(), argv.end(), "--sha256");
  *sha = "--pin-file";
  *(sha + 1) = dir_.File("pin");
  LineClient client(argv);
  client.Send(InitializeRequest(1));
  ASSERT_TRUE(client.ReadResponse(1)) << client.Stderr();
  client.Send(Notification("notifications/initialized"));
  client.Send(RenderTurntable(2));
  auto first = client.ReadResponse(2);
  ASSERT_TRUE(first);
  ASSERT_FALSE((*first)["result"].value("isError", false)) << first->dump();

  // The upstream comes back with an edited description.
  ASSERT_NO_FATAL_FAILURE(RestartUpstreamWith("description=render_turntable"));
  std::vector<Json> seen;
  client.Send(RenderTurntable(3));
  auto refused = client.ReadResponse(3, &seen);
  ASSERT_TRUE(refused);
  EXPECT_TRUE((*refused)["result"]["isError"].get<bool>());
  EXPECT_EQ((*refused)["result"]["_meta"]["code"], "catalog.tool_drift") << refused->dump();
  EXPECT_EQ((*refused)["result"]["_meta"]["exit"], 3);
  EXPECT_NE((*refused)["result"]["content"][0]["text"].get<std::string>().find("/description"), std::string::npos);
  EXPECT_TRUE(Saw(seen, "notifications/tools/list_changed")) << "the host hears of the withdrawal";
  client.Send(Request(4, "tools/list"));
  auto listed = client.ReadResponse(4);
  ASSERT_TRUE(listed);
  auto names = ToolNames(*listed);
  EXPECT_EQ(std::find(names.begin(), names.end(), "render_turntable"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "convert_units"), names.end()) << "other tools stay";
  EXPECT_EQ(dir_.Read("after.log").find("tools/call"), std::string::npos) << "the drifted tool was never called";

  // Review the new capture, pin it, SIGHUP: the tool returns.
  const std::string new_pin = demo_->Recapture();
  ASSERT_FALSE(new_pin.empty()) << demo_->failure;
  dir_.Write("pin", new_pin + "\n");
  ASSERT_EQ(kill(client.pid(), SIGHUP), 0);
  ASSERT_TRUE(AwaitNotification(client, "notifications/tools/list_changed")) << client.Stderr();
  client.Send(Request(5, "tools/list"));
  listed = client.ReadResponse(5);
  ASSERT_TRUE(listed);
  names = ToolNames(*listed);
  EXPECT_NE(std::find(names.begin(), names.end(), "render_turntable"), names.end());
  client.Send(RenderTurntable(6));
  auto again = client.ReadResponse(6);
  ASSERT_TRUE(again);
  EXPECT_FALSE((*again)["result"].value("isError", false)) << again->dump();
  client.CloseInput();
  EXPECT_EQ(client.Wait(), 0) << client.Stderr();
}

// Issue 29, 3: client 1's call ends indeterminate (list_changed during it) while client
// 2's call of another tool of the same server is still listing (every tools/list answer
// waits 3 s): client 2's call is never returned as reviewed. Since issue 41 client 2
// shares client 1's upstream connection (a burst opens one), whose stdio server answers
// in order: the notice then comes either before client 2's send (refused before dispatch)
// or during its call (dispatched, its result withheld as indeterminate).
TEST(ServeTest, AnInvalidationDuringAnotherClientsListingNeverLetsItsCallReturnAsReviewed) {
  TempDir dir;
  ReviewedDemo demo(dir, std::vector<std::string>{"--list-delay-ms", "3000", "--fault",
                                                  "list-changed-during-call=convert_units", "--log-requests",
                                                  dir.File("upstream.log")});
  ASSERT_TRUE(demo.ok()) << demo.failure;
  HttpGateway gateway(demo);
  ASSERT_GT(gateway.port(), 0) << gateway.process().Output();
  RawHttpPeer first(gateway.port());
  RawHttpPeer second(gateway.port());
  ASSERT_TRUE(first.Initialize().contains("result"));
  ASSERT_TRUE(second.Initialize().contains("result"));
  std::thread invalidating([&] {
    auto answer = first.Post(ConvertUnits(2));
    ASSERT_FALSE(answer.messages.empty());
    EXPECT_EQ(answer.messages.back()["result"]["_meta"]["code"], "call.indeterminate") << answer.messages.back();
  });
  // Client 2 starts while client 1 lists; it lists until after client 1's call ended.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto answer = second.Post(RenderTurntable(3));
  invalidating.join();
  ASSERT_FALSE(answer.messages.empty());
  const Json& result = answer.messages.back()["result"];
  EXPECT_TRUE(result.value("isError", false)) << result.dump();
  const std::string code = result["_meta"].value("code", std::string());
  const bool dispatched = dir.Read("upstream.log").find("render_turntable") != std::string::npos;
  if (dispatched) {
    EXPECT_EQ(code, "call.indeterminate") << result.dump();
  } else {
    EXPECT_TRUE(code == "manifest.invalidated" || code == "binding.invalidated") << result.dump();
  }
  EXPECT_FALSE(result.contains("structuredContent")) << "no result returned as reviewed";
}

TEST(ServeTest, ADigestMismatchRefusesToStart) {
  TempDir dir;
  ReviewedDemo demo(dir);
  ASSERT_TRUE(demo.ok()) << demo.failure;
  std::vector<std::string> argv = demo.ServeArgv();
  *(std::find(argv.begin(), argv.end(), "--sha256") + 1) = std::string(64, 'a');
  ProcessResult run = RunProcess(argv);
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("manifest.digest_mismatch"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << "nothing on the MCP channel";
}

// Issue 29, item 9: a host sees why the gateway refused to start, not only "Connection
// closed": its server/discover and initialize are answered with the code and the fixed
// message (no values), then the gateway exits 3 as before.
TEST(ServeTest, AStartUpRefusalIsTheAnswerToTheHostsDiscoverAndInitialize) {
  TempDir dir;
  ReviewedDemo demo(dir);
  ASSERT_TRUE(demo.ok()) << demo.failure;
  std::vector<std::string> argv = demo.ServeArgv();
  *(std::find(argv.begin(), argv.end(), "--sha256") + 1) = std::string(64, 'a');
  LineClient client(argv);
  client.Send(Request("probe", "server/discover"));
  auto discovered = client.ReadResponse("probe");
  ASSERT_TRUE(discovered) << client.Stderr();
  client.Send(InitializeRequest(1));
  auto initialized = client.ReadResponse(1);
  ASSERT_TRUE(initialized) << client.Stderr();
  for (const Json& answer : {*discovered, *initialized}) {
    ASSERT_TRUE(answer.contains("error")) << answer.dump();
    EXPECT_EQ(answer["error"]["code"], -32603);
    const std::string message = answer["error"]["message"];
    EXPECT_EQ(message.rfind("manifest.digest_mismatch: ", 0), 0u) << message;
    EXPECT_EQ(message.find(demo.sha256), std::string::npos) << "no values: " << message;
    EXPECT_EQ(message.find(std::string(64, 'a')), std::string::npos) << "no values: " << message;
    EXPECT_EQ(answer["error"]["data"], Json({{"code", "manifest.digest_mismatch"}, {"exit", 3}}));
  }
  EXPECT_EQ(client.Wait(), 3) << "it exits once initialize is answered, stdin still open";
  EXPECT_NE(client.Stderr().find("manifest.digest_mismatch"), std::string::npos) << client.Stderr();
}

// Issue 29, item 7 end to end: a property the server added (its name the server's text) is
// "*" in what the host hears; serve's stderr (escaped) and the evidence keep it whole.
TEST_F(ServeDriftTest, ADriftedPropertyNameReachesOnlyStderrAndEvidenceNeverTheHost) {
  LineClient client(demo_->ServeArgv());
  client.Send(InitializeRequest(1));
  ASSERT_TRUE(client.ReadResponse(1)) << client.Stderr();
  client.Send(Notification("notifications/initialized"));
  ASSERT_NO_FATAL_FAILURE(RestartUpstreamWith("input-schema=render_turntable"));
  client.Send(RenderTurntable(2));
  auto refused = client.ReadResponse(2);
  ASSERT_TRUE(refused) << client.Stderr();
  EXPECT_EQ((*refused)["result"]["_meta"]["code"], "catalog.tool_drift") << refused->dump();
  const std::string text = (*refused)["result"]["content"][0]["text"];
  EXPECT_NE(text.find("/inputSchema/properties/*"), std::string::npos) << text;
  EXPECT_EQ(refused->dump().find("priority"), std::string::npos) << refused->dump();
  client.CloseInput();
  EXPECT_EQ(client.Wait(), 0) << client.Stderr();
  EXPECT_NE(client.Stderr().find("render_turntable differs at /inputSchema/properties/priority (added)"),
            std::string::npos)
      << client.Stderr();
  EXPECT_NE(dir_.Read("evidence.jsonl").find("/inputSchema/properties/priority"), std::string::npos);
}

std::string HostilePeerBinary() { return BinaryDir() + "/tests/integration/udon-hostile-peer"; }

Json HostileEntry(const std::string& mode, const std::string& during) {
  return {{"command", HostilePeerBinary()}, {"args", {"--transport", "stdio", "--mode", mode, "--during", during}}};
}

// One gateway in front of a well-behaved demo server and a hostile peer: whatever the peer
// does (at the byte level, during the gate's listing or during the call), the gateway
// neither crashes nor wedges, the host sees a refusal or failure and no peer bytes (or,
// where the peer's answer is eventually good, the result), and the other server's tools
// keep working.
struct Hostility {
  const char* mode;
  const char* during;  // "list": the gate's listing; "call": the tools/call
  bool eventually_good;
};

class ServeHostileTest : public ::testing::TestWithParam<Hostility> {};

TEST_P(ServeHostileTest, AHostileUpstreamNeverCrashesOrWedgesTheGatewayAndOtherToolsKeepWorking) {
  const Hostility& hostility = GetParam();
  TempDir dir;
  dir.Write("policy.json", R"({"callTimeoutSeconds": 3})");
  // The peer speaks 2025-11-25 only, so both are captured (and gated) at that version.
  ReviewedDemo demo(dir, Json{{"demo", {{"command", DemoServerBinary()}}}, {"hostile", HostileEntry("good", "call")}},
                    {"--protocol-version", "2025-11-25"});
  ASSERT_TRUE(demo.ok()) << demo.failure;
  demo.Reconfigure(Json{{"demo", {{"command", DemoServerBinary()}}},
                        {"hostile", HostileEntry(hostility.mode, hostility.during)}});
  LineClient client(demo.ServeArgv({"--policy", dir.File("policy.json")}));
  client.Send(InitializeRequest(1));
  ASSERT_TRUE(client.ReadResponse(1)) << client.Stderr();
  client.Send(Request(2, "tools/call", {{"name", "hostile__echo"}, {"arguments", {{"text", "hello"}}}}));
  auto hostile = client.ReadResponse(2);
  ASSERT_TRUE(hostile) << "the gateway answered nothing: " << client.Stderr();
  ASSERT_TRUE(hostile->contains("result")) << hostile->dump();
  const Json& result = (*hostile)["result"];
  if (hostility.eventually_good) {
    EXPECT_FALSE(result.value("isError", false)) << hostile->dump();
  } else {
    EXPECT_TRUE(result.value("isError", false)) << hostile->dump();
    const int exit = result["_meta"].value("exit", 0);
    if (std::string(hostility.during) == "list") {
      EXPECT_EQ(exit, 3) << hostile->dump();
    } else {
      EXPECT_TRUE(exit == 4 || exit == 5) << hostile->dump();
    }
    EXPECT_EQ(hostile->dump().find("HOSTILE-PAYLOAD"), std::string::npos) << "no peer bytes reach the host";
  }
  client.Send(Request(3, "tools/call", {{"name", "demo__convert_units"},
                                        {"arguments", {{"value", 2}, {"from", "kg"}, {"to", "g"}}}}));
  auto good = client.ReadResponse(3);
  ASSERT_TRUE(good) << client.Stderr();
  EXPECT_FALSE((*good)["result"].value("isError", false)) << good->dump();
  client.CloseInput();
  EXPECT_EQ(client.Wait(), 0) << client.Stderr();
  EXPECT_TRUE(Descendants(getpid()).empty());
}

INSTANTIATE_TEST_SUITE_P(Modes, ServeHostileTest,
                         ::testing::Values(Hostility{"non-json", "list", false}, Hostility{"deep", "list", false},
                                           Hostility{"duplicate-key", "list", false},
                                           Hostility{"invalid-utf8", "list", false},
                                           Hostility{"huge-line", "call", false},
                                           Hostility{"exit-mid-frame", "call", false},
                                           Hostility{"hang-up", "call", false}, Hostility{"wrong-id", "call", false},
                                           Hostility{"flood", "call", true}, Hostility{"stderr-flood", "call", true}),
                         [](const ::testing::TestParamInfo<Hostility>& param_info) {
                           return TestIdentifier(std::string(param_info.param.mode) + "_during_" +
                                                 param_info.param.during);
                         });

struct ProcessFootprint {
  long fds = 0;
  long threads = 0;
  long rss_kb = 0;
};

ProcessFootprint FootprintOf(pid_t pid) {
  ProcessFootprint footprint;
  const std::string proc = "/proc/" + std::to_string(pid);
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(proc + "/fd")) ++footprint.fds;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(proc + "/task")) ++footprint.threads;
  std::ifstream status(proc + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) footprint.rss_kb = std::stol(line.substr(6));
  }
  return footprint;
}

// 8 hosts at once, 500 calls each, over HTTP: every call answered, and the gateway's
// descriptors and threads bounded by how many clients call at once, never by how many
// calls were made: its pools start threads and upstream connections lazily, so a slow
// machine may reach full concurrency only in a later round (seen in CI: +4 threads after
// round 1). A leak of one thread or descriptor per hundred calls would exceed the bound.
TEST(ServeTest, EightClientsTimesFiveHundredCallsKeepDescriptorsThreadsAndMemoryFlat) {
  constexpr int kClients = 8;
  constexpr int kRounds = 5;
  constexpr int kCallsPerRound = 100;
  // Per client calling at once: the HTTP server's connection and work threads, and an
  // upstream stdio connection's two readers (and its exit watcher without pidfd).
  constexpr long kThreadsPerClient = 5;
  // Per client calling at once: its HTTP connection (the server may not have closed it
  // yet), and an upstream stdio connection's three pipes and pidfd.
  constexpr long kFdsPerClient = 5;
  TempDir dir;
  ReviewedDemo demo(dir);
  ASSERT_TRUE(demo.ok()) << demo.failure;
  HttpGateway gateway(demo);
  ASSERT_GT(gateway.port(), 0) << gateway.process().Output();
  std::vector<std::unique_ptr<RawHttpPeer>> peers;
  for (int i = 0; i < kClients; ++i) {
    peers.push_back(std::make_unique<RawHttpPeer>(gateway.port()));
    ASSERT_TRUE(peers.back()->Initialize().contains("result"));
  }
  const ProcessFootprint idle = FootprintOf(gateway.process().pid());
  std::atomic<int> failures{0};
  std::vector<ProcessFootprint> after_round;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c) {
      threads.emplace_back([&, c] {
        for (int i = 0; i < kCallsPerRound; ++i) {
          auto answer = peers[c]->Post(ConvertUnits(1000 + i));
          const bool ok = answer.status == 200 && !answer.messages.empty() &&
                          answer.messages.back().contains("result") &&
                          !answer.messages.back()["result"].value("isError", false) &&
                          answer.messages.back()["result"]["structuredContent"]["value"] == 2000.0;
          if (!ok) ++failures;
        }
      });
    }
    for (auto& thread : threads) thread.join();
    after_round.push_back(FootprintOf(gateway.process().pid()));
  }
  EXPECT_EQ(failures.load(), 0);
  for (std::size_t round = 0; round < after_round.size(); ++round) {
    const ProcessFootprint& now = after_round[round];
    EXPECT_LE(now.fds, idle.fds + kFdsPerClient * kClients)
        << "after round " << round + 1 << ": descriptors grew from " << idle.fds << " to " << now.fds;
    EXPECT_LE(now.threads, idle.threads + kThreadsPerClient * kClients)
        << "after round " << round + 1 << ": threads grew from " << idle.threads << " to " << now.threads;
  }
  const ProcessFootprint& first = after_round.front();
  const ProcessFootprint& last = after_round.back();
  if (!kUnderSanitizer) {
    EXPECT_LE(last.rss_kb, first.rss_kb + 8 * 1024) << "RSS grew from " << first.rss_kb << " to " << last.rss_kb << " KiB";
  }
  std::printf("serve footprint idle, then after rounds of %d calls: fds %ld, %ld -> %ld; threads %ld, %ld -> %ld; "
              "RSS %ld -> %ld KiB\n",
              kClients * kCallsPerRound, idle.fds, first.fds, last.fds, idle.threads, first.threads, last.threads,
              first.rss_kb, last.rss_kb);
  // One record per call.
  std::ifstream evidence(demo.evidence);
  int records = 0;
  for (std::string line; std::getline(evidence, line);) ++records;
  EXPECT_EQ(records, kClients * kRounds * kCallsPerRound);
}

TEST(ServeTest, OverHttpAGivenTokenIsRequiredAndNoTokenIsForLoopbackOnly) {
  TempDir dir;
  ReviewedDemo demo(dir);
  ASSERT_TRUE(demo.ok()) << demo.failure;
  // --no-token beyond loopback: refused before anything listens.
  ProcessResult open = RunProcess(demo.ServeArgv({"--transport", "http", "--listen", "0.0.0.0:0", "--no-token"}));
  EXPECT_EQ(open.exit_code, 2) << open.err;
  EXPECT_NE(open.err.find("--no-token"), std::string::npos) << open.err;

  dir.Write("token", "gateway-token-0123456789abcdef\n");
  HttpGateway gateway(demo, {"--token-file", dir.File("token")}, HttpGateway::Token::kAsGiven);
  ASSERT_GT(gateway.port(), 0) << gateway.process().Output();
  httplib::Client http("127.0.0.1", gateway.port());
  const std::string initialize = InitializeRequest(1).dump();
  auto refused = http.Post("/mcp", {{"Accept", "application/json, text/event-stream"}}, initialize, "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  auto wrong = http.Post("/mcp",
                         {{"Accept", "application/json, text/event-stream"}, {"Authorization", "Bearer not-the-token"}},
                         initialize, "application/json");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto admitted = http.Post(
      "/mcp",
      {{"Accept", "application/json, text/event-stream"}, {"Authorization", "Bearer gateway-token-0123456789abcdef"}},
      initialize, "application/json");
  ASSERT_TRUE(admitted);
  EXPECT_EQ(admitted->status, 200) << admitted->body;
  EXPECT_EQ(gateway.process().Output().find("gateway-token"), std::string::npos) << "the token is never printed";
}

// Issue #29 item 8: on loopback without --token-file, serve asked no token, so any local user
// could call tools with the gateway owner's credentials. Now it mints one into the state
// directory (0600), prints the file's path and host configuration, never the token, and a
// host without it is told in words; OAuth discovery finds nothing (404).
TEST(ServeTest, OverHttpOnLoopbackATokenIsMintedAndRequired) {
  TempDir dir;
  ReviewedDemo demo(dir);
  ASSERT_TRUE(demo.ok()) << demo.failure;
  HttpGateway gateway(demo, {}, HttpGateway::Token::kAsGiven);
  ASSERT_GT(gateway.port(), 0) << gateway.process().Output();
  const std::string token_path = demo.state_dir + "/serve-token";
  struct stat info {};
  ASSERT_EQ(::stat(token_path.c_str(), &info), 0) << gateway.process().Output();
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  std::string token = dir.Read("state/serve-token");
  while (!token.empty() && token.back() == '\n') token.pop_back();
  ASSERT_EQ(token.size(), 64u);
  const std::string output = gateway.process().Output();
  EXPECT_EQ(output.find(token), std::string::npos) << "the token is never printed";
  EXPECT_NE(output.find(token_path), std::string::npos) << output;
  EXPECT_NE(output.find("claude mcp add --transport http"), std::string::npos) << output;

  httplib::Client http("127.0.0.1", gateway.port());
  const std::string initialize = InitializeRequest(1).dump();
  auto refused = http.Post("/mcp", {{"Accept", "application/json, text/event-stream"}}, initialize, "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_NE(refused->body.find("requires a bearer token"), std::string::npos) << refused->body;
  auto discovery = http.Get("/.well-known/oauth-protected-resource/mcp");
  ASSERT_TRUE(discovery);
  EXPECT_EQ(discovery->status, 404);
  auto admitted = http.Post("/mcp", {{"Accept", "application/json, text/event-stream"}, {"Authorization", "Bearer " + token}},
                            initialize, "application/json");
  ASSERT_TRUE(admitted);
  EXPECT_EQ(admitted->status, 200) << admitted->body;

  // A restart keeps the private token file, so a configured host keeps working.
  HttpGateway again(demo, {}, HttpGateway::Token::kAsGiven);
  ASSERT_GT(again.port(), 0) << again.process().Output();
  std::string kept = dir.Read("state/serve-token");
  while (!kept.empty() && kept.back() == '\n') kept.pop_back();
  EXPECT_EQ(kept, token);
}

}  // namespace
}  // namespace udon::testing
