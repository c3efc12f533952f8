// Every gate outcome of the contract provoked through the demo server's fault flags (or a
// crafted manifest), asserting the exit status and code and, for every refusal, proving
// from the server's request log that no tools/call arrived. Every case runs in both
// protocol eras: the manifest is captured at 2025-11-25 (initialize) or at 2026-07-28
// (server/discover, per-request _meta, subscriptions/listen) and the gate follows it.
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <ctime>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "json/json.h"
#include "base/sha256.h"
#include "json/canonical.h"
#include "test_support.h"

namespace udon {
namespace {

using testing::ProcessResult;
using testing::TempDir;

// An instant `offset` seconds from now, as manifests write it.
std::string InstantFromNow(long offset) {
  const std::time_t at = std::time(nullptr) + offset;
  std::tm utc{};
  gmtime_r(&at, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

const char* kArgs = R"({"source":"https://assets.example.test/a.blend","angles":4,"resolution":1024})";

class GateFaultsTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

  void SetUp() override {
    UseServer({});
    Run({"capture", "--server", "demo", "-o", dir_.File("tools.json"), "--protocol-version", GetParam()}, 0);
    Review("render_turntable", {"--no-side-effects", "--concurrency", "safe", "--channel", "/source=data",
                                "--channel", "/angles=data", "--channel", "/resolution=data"});
  }

  void TearDown() override { EXPECT_TRUE(testing::Descendants(getpid()).empty()) << "a child process survived"; }

  // The demo server as server "demo", with these extra arguments (faults), logging requests.
  void UseServer(std::vector<std::string> extra) {
    std::vector<std::string> args = {"--log-requests", dir_.File("requests.jsonl")};
    args.insert(args.end(), extra.begin(), extra.end());
    json::Value config = {{"mcpServers", {{"demo", {{"command", testing::DemoServerBinary()}, {"args", args}}}}}};
    dir_.Write("mcp.json", config.dump());
  }

  ProcessResult Run(std::vector<std::string> args, int expected_exit) {
    args.insert(args.begin(), testing::UdonMcpBinary());
    args.insert(args.end(), {"--config", dir_.File("mcp.json")});
    testing::RunOptions options;
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    ProcessResult result = testing::RunProcess(args, options);
    EXPECT_EQ(result.exit_code, expected_exit) << result.out << result.err;
    return result;
  }

  void Review(const std::string& tool, std::vector<std::string> extra) {
    std::vector<std::string> args = {"review", dir_.File("tools.json"), "--server", "demo", "--tool", tool,
                                     "--reviewer", "t@example.test", "--headless", "--independent-calls",
                                     "--model-backed", "false", "--reference-based-io"};
    args.insert(args.end(), extra.begin(), extra.end());
    Run(args, 0);
  }

  std::string Sha() {
    return testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File("tools.json")}).out.substr(0, 64);
  }

  // A gated call; returns the --json result.
  json::Value Call(int expected_exit, const std::string& tool = "render_turntable", const std::string& args = kArgs,
                   std::vector<std::string> extra = {"--expect-output"}) {
    std::vector<std::string> argv = {"call", "--manifest", dir_.File("tools.json"), "--sha256", Sha(), "--server",
                                     "demo", "--tool", tool, "--args", args, "--json", "--evidence",
                                     dir_.File("evidence.jsonl")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    ProcessResult result = Run(argv, expected_exit);
    auto parsed = json::Parse(result.out);
    EXPECT_TRUE(parsed.ok()) << result.out;
    return parsed.ok() ? *parsed : json::Value();
  }

  int CallsLogged() {
    int calls = 0;
    const std::string log = dir_.Read("requests.jsonl");
    for (std::size_t at = 0; (at = log.find("\"tools/call\"", at)) != std::string::npos; ++at) ++calls;
    return calls;
  }

  void ExpectRefusal(const std::vector<std::string>& faults, const std::string& code) {
    SCOPED_TRACE(code);
    std::vector<std::string> args;
    for (const auto& fault : faults) args.insert(args.end(), {"--fault", fault});
    UseServer(args);
    dir_.Write("requests.jsonl", "");
    json::Value out = Call(3);
    EXPECT_EQ(out["code"], code);
    EXPECT_EQ(CallsLogged(), 0) << "a refused gate must not dispatch";
  }

  bool modern() const { return GetParam() == "2026-07-28"; }

  TempDir dir_;
};

TEST_P(GateFaultsTest, HappyPathReturnsTheValidatedResult) {
  json::Value out = Call(0);
  EXPECT_EQ(out["structuredContent"]["renderedUris"].size(), 4u);
  EXPECT_EQ(CallsLogged(), 1);
}

TEST_P(GateFaultsTest, CatalogDriftOfEveryKindIsRefused) {
  for (const char* fault : {"description", "input-schema", "output-schema", "annotations", "execution"}) {
    ExpectRefusal({fault}, "catalog.tool_drift");
  }
  ExpectRefusal({"remove-tool"}, "catalog.tool_missing");
  ExpectRefusal({"rename-tool"}, "catalog.tool_missing");
  ExpectRefusal({"duplicate-tool"}, "catalog.tool_duplicate");
  ExpectRefusal({"duplicate-tool-last"}, "catalog.tool_duplicate");
}

TEST_P(GateFaultsTest, ServerIdentityAndProtocolMustMatch) {
  ExpectRefusal({"server-version"}, "server.server_info_mismatch");
  ExpectRefusal({"protocol-version"}, "server.protocol_version_mismatch");
}

TEST_P(GateFaultsTest, PaginationAndStabilityFailuresAreRefused) {
  ExpectRefusal({"cursor-loop"}, "catalog.pagination_invalid");
  ExpectRefusal({"sampling-during-list"}, "server.request_refused");
  ExpectRefusal({"elicitation-during-list"}, "server.request_refused");
}

TEST_P(GateFaultsTest, AListChangedAfterInitializationIsAbsorbed) {
  UseServer({"--fault", "list-changed-after-initialized"});
  json::Value out = Call(0);
  EXPECT_TRUE(out["ok"].get<bool>());
}

TEST_P(GateFaultsTest, ListChangedDuringTheCallIsIndeterminateAndInvalidatesForGood) {
  UseServer({"--fault", "list-changed-during-call"});
  json::Value out = Call(5);
  EXPECT_EQ(out["code"], "call.indeterminate");
  EXPECT_EQ(CallsLogged(), 1);
  EXPECT_FALSE(out.contains("structuredContent"));
  // A new process, a healthy server: still refused, nothing dispatched.
  UseServer({});
  dir_.Write("requests.jsonl", "");
  json::Value later = Call(3);
  EXPECT_EQ(later["code"], "manifest.invalidated");
  EXPECT_EQ(CallsLogged(), 0);
  // An unrelated edit re-pinned (a new digest, the same stale capture) does not revive it.
  json::Value doc = json::Parse(dir_.Read("tools.json")).value();
  doc["x-note"] = "edited after the invalidation";
  dir_.Write("tools.json", doc.dump(2));
  EXPECT_EQ(Call(3)["code"], "manifest.invalidated");
  EXPECT_EQ(CallsLogged(), 0);
  // A new capture (a second later at least) and review do.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  Run({"capture", "--server", "demo", "-o", dir_.File("tools.json"), "--protocol-version", GetParam(), "--force"}, 0);
  Review("render_turntable", {"--no-side-effects", "--concurrency", "safe", "--channel", "/source=data",
                              "--channel", "/angles=data", "--channel", "/resolution=data"});
  EXPECT_EQ(Call(0)["ok"], true);
}

TEST_P(GateFaultsTest, FailuresAfterDispatch) {
  struct Case {
    const char* fault;
    const char* code;
    int exit;
  };
  for (const Case& c : {Case{"call-is-error", "call.tool_error", 4},
                        Case{"call-no-structured-content", "call.structured_content_missing", 4},
                        Case{"call-bad-structured-content", "call.output_schema_violation", 4},
                        Case{"call-rpc-error", "call.protocol_error", 4},
                        Case{"call-is-error-string", "call.protocol_error", 4},
                        Case{"sampling-during-call", "call.server_request_refused", 4},
                        Case{"elicitation-during-call", "call.server_request_refused", 4},
                        Case{"crash-during-call", "call.indeterminate", 5}}) {
    SCOPED_TRACE(c.fault);
    UseServer({"--fault", c.fault});
    json::Value out = Call(c.exit);
    EXPECT_EQ(out["code"], c.code);
    EXPECT_FALSE(out.contains("structuredContent"));
  }
}

TEST_P(GateFaultsTest, AHungCallTimesOutIndeterminate) {
  UseServer({"--fault", "hang-during-call"});
  json::Value out = Call(5, "render_turntable", kArgs, {"--expect-output", "--timeout", "1"});
  EXPECT_EQ(out["code"], "call.indeterminate");
  EXPECT_EQ(CallsLogged(), 1);
}

TEST_P(GateFaultsTest, StaticRefusalsNeedNoServer) {
  UseServer({});
  dir_.Write("requests.jsonl", "");
  json::Value unreviewed = Call(3, "analyze_text", R"({"text":"a"})");
  EXPECT_EQ(unreviewed["code"], "review.missing");
  json::Value invalid = Call(3, "render_turntable", R"({"source":"https://a.example/x","angles":99,"resolution":1024})");
  EXPECT_EQ(invalid["code"], "input.schema_violation");
  EXPECT_EQ(CallsLogged(), 0);
  // A crafted manifest: a review of the task-required tool (the review command refuses to
  // write one), re-pinned.
  json::Value doc = json::Parse(dir_.Read("tools.json")).value();
  json::Value review = doc["servers"]["demo"]["reviews"]["render_turntable"];
  review["inputChannels"] = json::Value::object();
  doc["servers"]["demo"]["reviews"]["async_render"] = review;
  dir_.Write("tools.json", doc.dump(2));
  json::Value task = Call(3, "async_render", "{}", {});
  EXPECT_EQ(task["code"], "catalog.task_required");
  // Expired: an edited expiry in the past.
  doc["expiresAt"] = "2020-01-02T00:00:00Z";
  doc["capturedAt"] = "2020-01-01T00:00:00Z";
  dir_.Write("tools.json", doc.dump(2));
  EXPECT_EQ(Call(3)["code"], "manifest.expired");
  EXPECT_EQ(CallsLogged(), 0);
}

TEST_P(GateFaultsTest, InstantsFromTheFutureAreRefusedEverywhere) {
  // A year ahead with a 29-day window: within maxReviewWindowDays and never expired today.
  json::Value doc = json::Parse(dir_.Read("tools.json")).value();
  const long year = 365 * 86'400;
  doc["capturedAt"] = InstantFromNow(year);
  doc["expiresAt"] = InstantFromNow(year + 29 * 86'400);
  doc["servers"]["demo"]["reviews"]["render_turntable"]["reviewedAt"] = InstantFromNow(year + 3600);
  dir_.Write("tools.json", doc.dump(2));
  UseServer({});
  dir_.Write("requests.jsonl", "");

  ProcessResult check = Run({"check", dir_.File("tools.json"), "--json"}, 3);
  EXPECT_EQ(json::Parse(check.out).value()["code"], "manifest.invalid_instant") << check.out;
  ProcessResult verify = Run({"verify", "--manifest", dir_.File("tools.json"), "--sha256", Sha(), "--server", "demo",
                              "--tool", "render_turntable", "--json"},
                             3);
  EXPECT_EQ(json::Parse(verify.out).value()["code"], "manifest.invalid_instant") << verify.out;
  json::Value call = Call(3);
  EXPECT_EQ(call["code"], "manifest.invalid_instant");
  EXPECT_EQ(call["details"]["pointer"], "/capturedAt");
  // Recording a review on such a capture is refused too, and nothing is written.
  const std::string before = dir_.Read("tools.json");
  ProcessResult review = Run({"review", dir_.File("tools.json"), "--server", "demo", "--tool", "analyze_text",
                              "--reviewer", "t@example.test", "--headless", "--independent-calls", "--model-backed",
                              "false", "--reference-based-io", "--no-side-effects", "--concurrency", "safe",
                              "--channel", "/text=data", "--json"},
                             3);
  EXPECT_EQ(json::Parse(review.out).value()["code"], "manifest.invalid_instant") << review.out;
  EXPECT_EQ(dir_.Read("tools.json"), before);
  EXPECT_EQ(CallsLogged(), 0);

  // A review dated before its capture is refused by the gate as well.
  doc = json::Parse(dir_.Read("tools.json")).value();
  doc["capturedAt"] = InstantFromNow(-3600);
  doc["expiresAt"] = InstantFromNow(86'400);
  doc["servers"]["demo"]["reviews"]["render_turntable"]["reviewedAt"] = InstantFromNow(-7200);
  dir_.Write("tools.json", doc.dump(2));
  EXPECT_EQ(Call(3)["code"], "manifest.invalid_instant");
  EXPECT_EQ(CallsLogged(), 0);
}

TEST_P(GateFaultsTest, ADigestMismatchSpawnsNothing) {
  std::remove(dir_.File("requests.jsonl").c_str());
  std::string sha = Sha();
  sha[10] = sha[10] == '0' ? '1' : '0';
  ProcessResult result = Run({"call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server", "demo",
                              "--tool", "render_turntable", "--args", kArgs, "--json"},
                             3);
  EXPECT_EQ(json::Parse(result.out).value()["code"], "manifest.digest_mismatch");
  EXPECT_NE(access(dir_.File("requests.jsonl").c_str(), F_OK), 0) << "the server was started";
}

TEST_P(GateFaultsTest, ASerializedToolNeverOverlapsUnderEightParallelCallers) {
  Review("append_ledger", {"--side-effect", "appends_ledger_entry", "--concurrency", "serialize", "--channel",
                           "/entry=data"});
  // One shared HTTP server, so overlapping calls would meet inside it.
  testing::BackgroundProcess server({testing::DemoServerBinary(), "--transport", "http", "--port", "0",
                                     "--ledger-delay-ms", "100"});
  std::string line;
  for (int i = 0; i < 200 && line.empty(); ++i) {
    const std::string output = server.Output();
    if (output.find('\n') != std::string::npos) line = output.substr(0, output.find('\n'));
    else std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(line.empty()) << "the server did not report its port";
  const std::string url = json::Parse(line).value()["url"].get<std::string>();
  // Same server key, now over HTTP: the reviewed serverInfo and tools are the same.
  dir_.Write("mcp.json", json::Value({{"mcpServers", {{"demo", {{"url", url}}}}}}).dump());
  std::atomic<int> ok{0}, overlapped{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < 8; ++i) {
    callers.emplace_back([&, i] {
      testing::RunOptions options;
      options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
      ProcessResult result = testing::RunProcess(
          {testing::UdonMcpBinary(), "call", "--manifest", dir_.File("tools.json"), "--sha256", Sha(), "--server",
           "demo", "--tool", "append_ledger", "--args", "{\"entry\":\"e" + std::to_string(i) + "\"}",
           "--expect-output", "--json", "--config", dir_.File("mcp.json")},
          options);
      auto out = json::Parse(result.out);
      if (result.exit_code == 0 && out.ok()) {
        ++ok;
        if ((*out)["structuredContent"]["overlapped"] == true) ++overlapped;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(overlapped.load(), 0);
  server.Stop();
}

// The demo server over HTTP as server "demo" (same serverInfo and tools as over stdio).
class HttpDemo {
 public:
  explicit HttpDemo(std::vector<std::string> extra) {
    std::vector<std::string> args = {testing::DemoServerBinary(), "--transport", "http", "--port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = std::make_unique<testing::BackgroundProcess>(args);
    for (int i = 0; i < 200 && line_.empty(); ++i) {
      const std::string output = server_->Output();
      if (output.find('\n') != std::string::npos) line_ = output.substr(0, output.find('\n'));
      else std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~HttpDemo() { server_->Stop(); }
  std::string Url() const { return line_.empty() ? std::string() : json::Parse(line_).value()["url"].get<std::string>(); }

 private:
  std::unique_ptr<testing::BackgroundProcess> server_;
  std::string line_;
};

TEST_P(GateFaultsTest, ModernResultsAskingForInputOrOfUnknownTypeAreRefused) {
  if (!modern()) GTEST_SKIP() << "resultType belongs to 2026-07-28";
  UseServer({"--fault", "call-input-required"});
  EXPECT_EQ(Call(4)["code"], "call.server_request_refused");
  UseServer({"--fault", "call-unknown-result-type"});
  EXPECT_EQ(Call(4)["code"], "call.protocol_error");
}

TEST_P(GateFaultsTest, ModernSubscriptionStatesAreRecorded) {
  if (!modern()) GTEST_SKIP() << "subscriptions/listen belongs to 2026-07-28";
  Call(0);
  UseServer({"--fault", "listen-unsupported"});
  Call(0);  // no change notices offered: the binding rests on the comparison alone
  const std::string evidence = dir_.Read("evidence.jsonl");
  EXPECT_NE(evidence.find("\"subscription\":\"active\""), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("\"subscription\":\"declined\""), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("\"era\":\"modern\""), std::string::npos);
}

TEST_P(GateFaultsTest, ModernServerInfoDriftMidBindingAndALostSubscriptionOverHttp) {
  if (!modern()) GTEST_SKIP() << "result _meta serverInfo and listen streams belong to 2026-07-28";
  {
    HttpDemo drifting({"--fault", "server-info-drift-after=1", "--log-requests", dir_.File("requests.jsonl")});
    ASSERT_FALSE(drifting.Url().empty()) << "the server did not report its port";
    dir_.Write("mcp.json", json::Value({{"mcpServers", {{"demo", {{"url", drifting.Url()}}}}}}).dump());
    EXPECT_EQ(Call(0)["ok"], true);
    // Discovery still names the reviewed serverInfo; the list results no longer do.
    dir_.Write("requests.jsonl", "");
    EXPECT_EQ(Call(3)["code"], "server.server_info_mismatch");
    EXPECT_EQ(CallsLogged(), 0);
  }
  {
    HttpDemo dropping({"--fault", "listen-drop", "--log-requests", dir_.File("requests.jsonl")});
    ASSERT_FALSE(dropping.Url().empty());
    dir_.Write("mcp.json", json::Value({{"mcpServers", {{"demo", {{"url", dropping.Url()}}}}}}).dump());
    dir_.Write("requests.jsonl", "");
    json::Value out = Call(3);
    EXPECT_EQ(out["code"], "server.connect_failed");
    EXPECT_EQ(CallsLogged(), 0);
  }
}

TEST_P(GateFaultsTest, AServerOfTheOtherEraIsRefused) {
  UseServer({"--era", modern() ? "legacy" : "modern"});
  dir_.Write("requests.jsonl", "");
  EXPECT_EQ(Call(3)["code"], "server.connect_failed");
  EXPECT_EQ(CallsLogged(), 0);
}

// Gate correctness II, 1: on a reused connection (probe), a list_changed during a later
// call's listing changes the bound catalog: refused before dispatch, recorded for good.
TEST_P(GateFaultsTest, AProbeOnAReusedConnectionStopsDispatchingAfterAChange) {
  UseServer({"--fault", "list-changed-after-list@after-first-list=1"});
  dir_.Write("requests.jsonl", "");
  ProcessResult result = Run({"probe", "--manifest", dir_.File("tools.json"), "--sha256", Sha(), "--server", "demo",
                              "--tool", "render_turntable", "--args", kArgs, "--repeat", "3", "--json",
                              "--evidence", dir_.File("evidence.jsonl")},
                             3);
  json::Value report = json::Parse(result.out).value();
  EXPECT_EQ(report["outcomes"], (json::Value{{"binding.invalidated", 1}, {"manifest.invalidated", 1}, {"ok", 1}}));
  EXPECT_EQ(CallsLogged(), 1) << "only the call before the change may dispatch";
  // During the second call's listing, or right after it and before dispatch.
  EXPECT_NE(dir_.Read("evidence.jsonl").find("\"invalidation\":\"list_changed_"), std::string::npos);
  UseServer({});
  EXPECT_EQ(Call(3)["code"], "manifest.invalidated");
}

// Gate correctness II, 10: the first indeterminate outcome ends the probe.
TEST_P(GateFaultsTest, AProbeStopsAtTheFirstIndeterminateOutcome) {
  Review("append_ledger", {"--side-effect", "appends_ledger_entry", "--concurrency", "serialize", "--channel",
                           "/entry=data"});
  UseServer({"--fault", "hang-during-call=append_ledger"});
  dir_.Write("requests.jsonl", "");
  ProcessResult result = Run({"probe", "--manifest", dir_.File("tools.json"), "--sha256", Sha(), "--server", "demo",
                              "--tool", "append_ledger", "--args", R"({"entry":"x"})", "--repeat", "3",
                              "--allow-side-effects", "--timeout", "1", "--json"},
                             5);
  json::Value report = json::Parse(result.out).value();
  EXPECT_EQ(report["verdict"], "stopped_indeterminate");
  EXPECT_EQ(report["stopped"]["afterRepetition"], 1);
  EXPECT_EQ(report["stopped"]["notRun"], 2);
  EXPECT_EQ(CallsLogged(), 1) << "no side-effecting call may follow an unknown outcome";
  ProcessResult text = Run({"probe", "--manifest", dir_.File("tools.json"), "--sha256", Sha(), "--server", "demo",
                            "--tool", "append_ledger", "--args", R"({"entry":"x"})", "--repeat", "2",
                            "--allow-side-effects", "--timeout", "1"},
                           5);
  EXPECT_NE(text.out.find("stopped: repetition 1 was indeterminate"), std::string::npos) << text.out;
}

// Gate correctness II, 4: a notice the server wrote before it read tools/call is seen
// before dispatch. The server here announces a change after every listing: whether the
// notice lands during the listing (re-list, then unstable) or after the comparison
// (invalidated), no call may go out.
TEST_P(GateFaultsTest, ANoticeWrittenBeforeTheCallNeverLetsItDispatch) {
  if (modern()) GTEST_SKIP() << "the barrier orders one stdio channel; 2026-07-28 notices travel on listen";
  UseServer({"--fault", "list-changed-after-list"});
  for (int i = 0; i < 12; ++i) {
    dir_.Write("requests.jsonl", "");
    std::filesystem::remove_all(dir_.File("state"));  // each run's refusal is recorded
    json::Value out = Call(3);
    EXPECT_TRUE(out["code"] == "binding.invalidated" || out["code"] == "catalog.unstable") << out.dump();
    EXPECT_EQ(CallsLogged(), 0) << "run " << i;
  }
}

// Gate correctness II, 12: list, compare, arguments and dispatch happen under the lock,
// and the wait for it is bounded by policy.
TEST_P(GateFaultsTest, ASerializeLockWaitIsBoundedAndRefusesBeforeDispatch) {
  Review("append_ledger", {"--side-effect", "appends_ledger_entry", "--concurrency", "serialize", "--channel",
                           "/entry=data"});
  UseServer({"--fault", "hang-during-call=append_ledger"});
  dir_.Write("requests.jsonl", "");
  dir_.Write("policy.json", R"({"serializeTimeoutSeconds": 1})");
  const std::string sha = Sha();
  std::thread holder([&] {
    Run({"call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server", "demo", "--tool",
         "append_ledger", "--args", R"({"entry":"a"})", "--timeout", "4", "--json"},
        5);
  });
  // Wait until the holder's call reached the server (it then holds the lock).
  for (int i = 0; i < 200 && CallsLogged() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_EQ(CallsLogged(), 1);
  ProcessResult waiting = Run({"call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server", "demo",
                               "--tool", "append_ledger", "--args", R"({"entry":"b"})", "--policy",
                               dir_.File("policy.json"), "--json"},
                              3);
  EXPECT_EQ(json::Parse(waiting.out).value()["code"], "state.lock_timeout");
  holder.join();
  EXPECT_EQ(CallsLogged(), 1);
}

// Gate correctness II, 9: a server that asks for sampling or elicitation while its tools
// are captured gives no manifest.
TEST_P(GateFaultsTest, CaptureRefusesAServerThatSendsRequestsWhileListed) {
  for (const char* fault : {"sampling-during-list", "elicitation-during-list"}) {
    SCOPED_TRACE(fault);
    UseServer({"--fault", fault});
    ProcessResult result = Run({"capture", "--server", "demo", "-o", dir_.File("refused.json"), "--protocol-version",
                                GetParam(), "--json"},
                               3);
    EXPECT_EQ(json::Parse(result.out).value()["code"], "server.request_refused");
    EXPECT_NE(access(dir_.File("refused.json").c_str(), F_OK), 0) << "no manifest may be written";
  }
}

// Gate correctness II, 3: over legacy Streamable HTTP the listing waits for the GET
// stream, so a notice queued right after initialization is never missed. Legacy HTTP gives
// no order between the GET stream and the POST answers: on an idle machine the notice comes
// before the binding and only forces a fresh listing; when the machine delays the stream
// past the comparison, the call fails closed and the invalidation is recorded. What may
// never happen is a call that went ahead without having seen the notice.
TEST_P(GateFaultsTest, ANoticeQueuedAfterInitializationOverHttpIsNeverMissed) {
  if (modern()) GTEST_SKIP() << "the GET stream belongs to the legacy era";
  HttpDemo server({"--fault", "list-changed-after-initialized", "--log-requests", dir_.File("requests.jsonl")});
  ASSERT_FALSE(server.Url().empty());
  dir_.Write("mcp.json", json::Value({{"mcpServers", {{"demo", {{"url", server.Url()}}}}}}).dump());
  dir_.Write("requests.jsonl", "");
  const std::string sha = Sha();
  int dispatched = 0;
  for (int i = 0; i < 20; ++i) {
    SCOPED_TRACE("run " + std::to_string(i));
    // A state directory per run: a run that failed closed must not refuse the next one.
    const std::string evidence = "evidence-" + std::to_string(i) + ".jsonl";
    ProcessResult result = testing::RunProcess(
        {testing::UdonMcpBinary(), "call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server", "demo",
         "--tool", "render_turntable", "--args", kArgs, "--expect-output", "--json", "--evidence", dir_.File(evidence),
         "--config", dir_.File("mcp.json"), "--state-dir", dir_.File("state-" + std::to_string(i))});
    auto record = json::Parse(dir_.Read(evidence));
    ASSERT_TRUE(record.ok()) << record.error().message << ": " << result.out << result.err;
    EXPECT_EQ((*record)["notificationStream"], "established") << record->dump();
    if (result.exit_code == 0) {
      ++dispatched;
      const int seen = record->value("listChangedBeforeBinding", 0) + record->value("disturbedListings", 0);
      EXPECT_GE(seen, 1) << "the call went ahead without the notice: " << record->dump();
      EXPECT_FALSE(record->contains("invalidation")) << record->dump();
      continue;
    }
    const std::string code = (*record)["code"].get<std::string>();
    EXPECT_TRUE(code == "call.indeterminate" || code == "binding.invalidated") << record->dump();
    EXPECT_EQ(result.exit_code, code == "call.indeterminate" ? 5 : 3) << result.out;
    EXPECT_TRUE(record->contains("invalidation")) << record->dump();
    if (code == "call.indeterminate") ++dispatched;
  }
  EXPECT_EQ(CallsLogged(), dispatched);
}

// Issue 24: a result shown as text escapes hidden code points; --json keeps them exact.
TEST_P(GateFaultsTest, AResultShownAsTextNamesItsHiddenCharacters) {
  Review("summarize", {"--no-side-effects", "--concurrency", "safe", "--channel", "/text=data", "--channel",
                       "/maxSentences=data"});
  const std::string rlo = "\xE2\x80\xAE";
  const std::string args = json::Value{{"text", "Read " + rlo + "this."}, {"maxSentences", 1}}.dump();
  ProcessResult text = Run({"call", "--manifest", dir_.File("tools.json"), "--sha256", Sha(), "--server", "demo",
                            "--tool", "summarize", "--args", args},
                           0);
  EXPECT_EQ(text.out.find(rlo), std::string::npos) << text.out;
  EXPECT_EQ(text.err.find(rlo), std::string::npos);
  EXPECT_NE(text.out.find("<U+202E>"), std::string::npos) << text.out;
  EXPECT_NE(text.err.find("the result held 1 hidden character (U+202E)"), std::string::npos) << text.err;
  json::Value exact = Call(0, "summarize", args, {});
  EXPECT_NE(exact["structuredContent"]["summary"].get<std::string>().find(rlo), std::string::npos);
}

// Issue 17, 12: the reviewed inputSchema is in the manifest, so invalid arguments are
// refused before any server is started.
TEST_P(GateFaultsTest, InvalidArgumentsStartNoServer) {
  std::remove(dir_.File("requests.jsonl").c_str());
  json::Value out = Call(3, "render_turntable", R"({"source":"https://a.example/x","angles":99,"resolution":1024})");
  EXPECT_EQ(out["code"], "input.schema_violation");
  EXPECT_NE(access(dir_.File("requests.jsonl").c_str(), F_OK), 0) << "the server was started";
}

// Gate correctness II, 2: a dispatched call whose invalidation cannot be written (the
// state directory is read-only here, mounted so by bubblewrap) still ends indeterminate,
// exit 5, with the write failure said; never exit 1, never a second dispatch.
TEST_P(GateFaultsTest, AnUnwritableStateAfterDispatchIsStillIndeterminate) {
  if (access("/usr/bin/bwrap", X_OK) != 0) {
    if (std::getenv("CI") != nullptr) FAIL() << "bubblewrap is missing (scripts/install-deps.sh installs it)";
    GTEST_SKIP() << "bubblewrap is not installed";
  }
  UseServer({"--fault", "list-changed-during-call"});
  dir_.Write("requests.jsonl", "");
  std::filesystem::create_directories(dir_.File("state"));
  testing::RunOptions options;
  options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
  ProcessResult result = testing::RunProcess(
      {"/usr/bin/bwrap", "--bind", "/", "/", "--ro-bind", dir_.File("state"), dir_.File("state"), "--dev", "/dev",
       "--proc", "/proc", "--", testing::UdonMcpBinary(), "call", "--manifest", dir_.File("tools.json"), "--sha256",
       Sha(), "--server", "demo", "--tool", "render_turntable", "--args", kArgs, "--json", "--config",
       dir_.File("mcp.json")},
      options);
  ASSERT_EQ(result.exit_code, 5) << result.out << result.err;
  json::Value out = json::Parse(result.out).value();
  EXPECT_EQ(out["code"], "call.indeterminate");
  EXPECT_EQ(out["details"]["stateWriteFailed"], "state.write_failed");
  EXPECT_NE(result.err.find("could not be recorded"), std::string::npos) << result.err;
  EXPECT_EQ(CallsLogged(), 1);
}

// The same rule over Streamable HTTP, in both eras. The demo server sends one notice, right
// after it answers the second listing (the second call's); it travels on a stream apart from
// the responses (the GET stream, or subscriptions/listen), so where it lands is up to
// timing (contract 7.5): during the second call's listing or before its dispatch (refused),
// during a call (indeterminate), while the connection sits idle (the next call refused),
// after the third call (recorded when the pool closes the connection), or, on a loaded
// machine, not before the probe closed the connection at all: then the probe never saw it
// (the documented HTTP window) and all three calls went ahead. What is guaranteed: the first
// call goes ahead; every call the server saw is one the probe reports as dispatched; once a
// call saw the notice, no later call is dispatched; and a notice the probe saw is recorded,
// so the binding ends for good and the next call is refused before it reaches the server.
TEST_P(GateFaultsTest, AProbeOverHttpOnAReusedConnectionEndsTheBindingAfterAChange) {
  HttpDemo server({"--fault", "list-changed-after-list@after-first-list=1", "--log-requests",
                   dir_.File("requests.jsonl")});
  ASSERT_FALSE(server.Url().empty());
  dir_.Write("mcp.json", json::Value({{"mcpServers", {{"demo", {{"url", server.Url()}}}}}}).dump());
  dir_.Write("requests.jsonl", "");
  ProcessResult result = testing::RunProcess(
      {testing::UdonMcpBinary(), "probe", "--manifest", dir_.File("tools.json"), "--sha256", Sha(), "--server",
       "demo", "--tool", "render_turntable", "--args", kArgs, "--repeat", "3", "--json", "--config",
       dir_.File("mcp.json")},
      [&] {
        testing::RunOptions options;
        options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
        return options;
      }());
  ASSERT_TRUE(result.exit_code == 0 || result.exit_code == 3 || result.exit_code == 5) << result.out << result.err;
  const json::Value calls = json::Parse(result.out).value()["calls"];
  ASSERT_FALSE(calls.empty()) << result.out;
  EXPECT_EQ(calls[0]["code"], "ok") << "the notice is sent only after the second listing: " << calls.dump();
  int dispatched = 0;
  std::string ended;  // the outcome of the call that saw the notice
  for (const json::Value& call : calls) {
    const std::string code = call["code"].get<std::string>();
    const bool sent = code == "ok" || code == "call.indeterminate";
    dispatched += sent ? 1 : 0;
    EXPECT_FALSE(sent && !ended.empty()) << "dispatched after the notice ended the binding (" << ended
                                         << "): " << calls.dump();
    if (code == "ok") continue;
    EXPECT_TRUE(code == "binding.invalidated" || code == "manifest.invalidated" || code == "call.indeterminate")
        << calls.dump();
    if (ended.empty()) ended = code;
  }
  EXPECT_EQ(CallsLogged(), dispatched) << "the server saw a call the probe did not dispatch: " << calls.dump();
  const bool recorded = std::filesystem::exists(dir_.File("state/invalidated")) &&
                        !std::filesystem::is_empty(dir_.File("state/invalidated"));
  EXPECT_TRUE(recorded || ended.empty()) << "a notice the probe saw was not recorded: " << calls.dump();
  dir_.Write("requests.jsonl", "");
  if (!recorded) {
    EXPECT_EQ(result.exit_code, 0) << calls.dump();
    GTEST_SKIP() << "the notice was still in flight when the probe closed its connection (contract 7.5)";
  }
  EXPECT_EQ(Call(3)["code"], "manifest.invalidated") << "the probe's outcomes: " << calls.dump();
  EXPECT_EQ(CallsLogged(), 0);
}

INSTANTIATE_TEST_SUITE_P(Eras, GateFaultsTest, ::testing::Values("2025-11-25", "2026-07-28"),
                         [](const ::testing::TestParamInfo<std::string>& era) { return testing::TestIdentifier(era.param); });

}  // namespace
}  // namespace udon
