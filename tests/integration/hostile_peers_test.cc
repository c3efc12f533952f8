// The udon-mcp client against hostile peers (tests/support/hostile_peer.cc): for every
// misbehaviour and every transport it applies to, `capture` meets it during tools/list and
// a gated `call` (with a manifest reviewed from the same peer behaving) meets it during
// tools/call. Each run must end with the contract's exit status and stable code, without
// hanging (a generous hard kill, never a timed assertion), with bounded memory, leaving no
// process behind and echoing no byte of the peer's payload.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "json/json.h"
#include "test_support.h"

namespace udon {
namespace {

using testing::ProcessResult;
using testing::TempDir;

constexpr const char* kMarker = "HOSTILE-PAYLOAD-7f3a9c";  // in everything the peer sends
constexpr int kTimeoutSeconds = 3;                          // policy callTimeoutSeconds
constexpr long kMaxRssKb = 512L * 1024L;
// The hard kill: far beyond the timeout plus the transports' shutdown grace periods, so
// only a hang trips it.
constexpr std::chrono::seconds kHardKill{60};

std::string PeerBinary() { return testing::BinaryDir() + "/tests/integration/udon-hostile-peer"; }

// One misbehaviour on one transport and what it must come to. A failure before dispatch
// (capture's tools/list) is server.connect_failed, exit 3; after dispatch it is
// call.indeterminate, exit 5. details.cause is the engine's code (mcp.timeout,
// mcp.disconnected, mcp.stream_ended) and details.transportCause, when the transport
// failed the connection, the transport's (mcp.malformed_message, mcp.message_too_large,
// mcp.server_exited).
struct Behaviour {
  const char* mode;
  const char* transport;        // "stdio" | "http"
  const char* cause;            // nullptr: the peer's answer is eventually good
  const char* transport_cause;  // nullptr: none
};

struct Case {
  Behaviour behaviour;
  const char* during;  // "list" (capture) | "call" (gated call)
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.behaviour.transport << " " << c.behaviour.mode << " during " << c.during;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return testing::TestIdentifier(std::string(info.param.behaviour.transport) + "_" + info.param.behaviour.mode +
                                 "_during_" + info.param.during);
}

// A hostile HTTP peer for the lifetime of one test.
class HttpPeer {
 public:
  HttpPeer(const std::string& mode, const std::string& during)
      : process_({PeerBinary(), "--transport", "http", "--port", "0", "--mode", mode, "--during", during}) {
    for (int i = 0; i < 400 && url_.empty(); ++i) {
      const std::string output = process_.Output();
      const auto newline = output.find('\n');
      if (newline == std::string::npos) {
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
        continue;
      }
      auto line = json::Parse(output.substr(0, newline));
      if (line.ok() && (*line)["url"].is_string()) url_ = (*line)["url"].get<std::string>();
      else break;
    }
  }
  const std::string& url() const { return url_; }
  pid_t pid() const { return process_.pid(); }
  void Stop() { process_.Stop(); }

 private:
  testing::BackgroundProcess process_;
  std::string url_;
};

class HostilePeersTest : public ::testing::TestWithParam<Case> {
 protected:
  // One good capture, reviewed, shared by every call case: the peer lists the same tool
  // and serverInfo in every mode, and misbehaves only where it is told to.
  static void SetUpTestSuite() {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    reviewed_ = new TempDir();
    WritePolicy(*reviewed_);
    WriteStdioConfig(*reviewed_, "good", "call");
    for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
             {"capture", "--server", "hostile", "-o", reviewed_->File("tools.json"), "--config",
              reviewed_->File("mcp.json"), "--policy", reviewed_->File("policy.json")},
             {"review", reviewed_->File("tools.json"), "--server", "hostile", "--tool", "echo", "--reviewer",
              "t@example.test", "--headless", "--independent-calls", "--model-backed", "false",
              "--reference-based-io", "--no-side-effects", "--concurrency", "safe", "--channel", "/text=data"}}) {
      ProcessResult result = Udon(*reviewed_, args);
      if (result.exit_code != 0) {
        setup_failure_ = args.front() + ": " + result.out + result.err;
        return;
      }
    }
    sha256_ = Udon(*reviewed_, {"digest", reviewed_->File("tools.json")}).out.substr(0, 64);
  }
  static void TearDownTestSuite() {
    delete reviewed_;
    reviewed_ = nullptr;
  }

  static void WritePolicy(const TempDir& dir) {
    dir.Write("policy.json", "{\"callTimeoutSeconds\": " + std::to_string(kTimeoutSeconds) + "}");
  }
  static void WriteStdioConfig(const TempDir& dir, const std::string& mode, const std::string& during) {
    json::Value args = {"--transport", "stdio", "--mode", mode, "--during", during};
    dir.Write("mcp.json",
              json::Value({{"mcpServers", {{"hostile", {{"command", PeerBinary()}, {"args", args}}}}}}).dump());
  }
  static ProcessResult Udon(const TempDir& dir, std::vector<std::string> args) {
    args.insert(args.begin(), testing::UdonMcpBinary());
    testing::RunOptions options;
    options.env["UDON_MCP_STATE_DIR"] = dir.File("state");
    options.timeout = kHardKill;
    return testing::RunProcess(args, options);
  }

  // Runs the case's command against the peer; checks everything but the outcome.
  ProcessResult RunAgainstPeer(const Case& c, const std::vector<pid_t>& allowed_children) {
    std::vector<std::string> args;
    if (std::string(c.during) == "list") {
      args = {"capture", "--server", "hostile", "-o", dir_.File("captured.json"), "--json"};
    } else {
      args = {"call", "--manifest", reviewed_->File("tools.json"), "--sha256", sha256_, "--server", "hostile",
              "--tool", "echo", "--args", R"({"text":"hello"})", "--json", "--evidence", dir_.File("evidence.jsonl")};
    }
    args.insert(args.end(), {"--config", dir_.File("mcp.json"), "--policy", dir_.File("policy.json")});
    ProcessResult result = Udon(dir_, args);
    EXPECT_FALSE(result.timed_out) << "udon-mcp hung; killed after " << kHardKill.count() << " s";
    EXPECT_LT(result.max_rss_kb, kMaxRssKb) << "peak RSS " << result.max_rss_kb << " KiB";
    RecordProperty("maxRssKb", static_cast<int>(result.max_rss_kb));
    EXPECT_EQ(result.err.find(kMarker), std::string::npos) << "peer payload on stderr: " << result.err;
    EXPECT_EQ(result.out.find(kMarker), std::string::npos) << "peer payload on stdout";
    EXPECT_EQ(dir_.Read("evidence.jsonl").find(kMarker), std::string::npos) << "peer payload in evidence";
    std::vector<pid_t> left = testing::Descendants(getpid());
    std::erase_if(left, [&](pid_t pid) {
      return std::find(allowed_children.begin(), allowed_children.end(), pid) != allowed_children.end();
    });
    EXPECT_TRUE(left.empty()) << "a child process survived udon-mcp";
    return result;
  }

  void ExpectOutcome(const Case& c, const ProcessResult& result) {
    const bool list = std::string(c.during) == "list";
    const Behaviour& b = c.behaviour;
    EXPECT_EQ(result.exit_code, b.cause == nullptr ? 0 : list ? 3 : 5) << result.out << result.err;
    auto out = json::Parse(result.out);
    ASSERT_TRUE(out.ok()) << "stdout is not one JSON document: " << result.out;
    if (b.cause == nullptr) {
      EXPECT_EQ((*out)["ok"], true) << result.out;
      return;
    }
    EXPECT_EQ((*out)["ok"], false);
    EXPECT_EQ((*out)["code"], list ? "server.connect_failed" : "call.indeterminate") << result.out;
    EXPECT_EQ((*out)["details"]["cause"], b.cause) << result.out;
    if (b.transport_cause == nullptr) {
      EXPECT_FALSE((*out)["details"].contains("transportCause")) << result.out;
    } else {
      EXPECT_EQ((*out)["details"]["transportCause"], b.transport_cause) << result.out;
    }
  }

  static TempDir* reviewed_;
  static std::string sha256_;
  static std::string setup_failure_;
  TempDir dir_;
};

TempDir* HostilePeersTest::reviewed_ = nullptr;
std::string HostilePeersTest::sha256_;
std::string HostilePeersTest::setup_failure_;

TEST_P(HostilePeersTest, EndsWithTheContractsCodeBoundedAndClean) {
  const Case& c = GetParam();
  ASSERT_EQ(sha256_.size(), 64u) << "the reviewed capture failed: " << setup_failure_;
  WritePolicy(dir_);
  std::unique_ptr<HttpPeer> http;
  std::vector<pid_t> allowed;
  if (std::string(c.behaviour.transport) == "http") {
    http = std::make_unique<HttpPeer>(c.behaviour.mode, c.during);
    ASSERT_FALSE(http->url().empty()) << "the peer did not report its port";
    allowed.push_back(http->pid());
    dir_.Write("mcp.json", json::Value({{"mcpServers", {{"hostile", {{"url", http->url()}}}}}}).dump());
  } else {
    WriteStdioConfig(dir_, c.behaviour.mode, c.during);
  }
  ProcessResult result = RunAgainstPeer(c, allowed);
  ExpectOutcome(c, result);
  if (c.behaviour.cause == nullptr && std::string(c.during) == "list") {
    // Whatever came around them, the pages captured are the reviewed ones.
    auto captured = json::Parse(dir_.Read("captured.json"));
    auto reviewed = json::Parse(reviewed_->Read("tools.json"));
    ASSERT_TRUE(captured.ok() && reviewed.ok());
    EXPECT_EQ((*captured)["servers"]["hostile"]["toolPages"], (*reviewed)["servers"]["hostile"]["toolPages"]);
  }
  if (http) http->Stop();
  EXPECT_TRUE(testing::Descendants(getpid()).empty());
  // Orphans of a failed case (re-parented to us, the subreaper) must not fail the next.
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

// Why an unreadable frame after dispatch is call.indeterminate and not call.protocol_error:
// it cannot be attributed to our request, the connection is failed closed, so whether the
// tool ran is unknown, and an indeterminate call is never retried (a protocol error may
// be, under a UWS retry policy).
constexpr const char* kMalformed = "mcp.malformed_message";
constexpr const char* kTooLarge = "mcp.message_too_large";
constexpr Behaviour kBehaviours[] = {
    {"good", "stdio", nullptr, nullptr},
    {"flood", "stdio", nullptr, nullptr},  // 10,000 notifications, then the response
    {"non-json", "stdio", "mcp.disconnected", kMalformed},
    {"batch", "stdio", "mcp.disconnected", kMalformed},
    {"wrong-id", "stdio", "mcp.timeout", nullptr},
    {"duplicate-key", "stdio", "mcp.disconnected", kMalformed},
    {"huge-line", "stdio", "mcp.disconnected", kTooLarge},  // 100 MB line
    {"endless-notifications", "stdio", "mcp.timeout", nullptr},
    {"drip", "stdio", "mcp.timeout", nullptr},  // one byte every 200 ms
    {"invalid-utf8", "stdio", "mcp.disconnected", kMalformed},
    {"deep", "stdio", "mcp.disconnected", kMalformed},  // 100,000 levels
    {"exit-mid-frame", "stdio", "mcp.disconnected", "mcp.server_exited"},
    // Requests without end, stdin never read: the write stall limit frees the client.
    {"ping-flood", "stdio", "mcp.timeout", nullptr},
    {"stderr-flood", "stdio", nullptr, nullptr},      // 100 MB on stderr, then the response
    {"good", "http", nullptr, nullptr},
    {"flood", "http", nullptr, nullptr},
    {"non-json", "http", "mcp.disconnected", kMalformed},
    {"batch", "http", "mcp.disconnected", kMalformed},
    {"wrong-id", "http", "mcp.stream_ended", nullptr},  // the body ended without our response
    {"duplicate-key", "http", "mcp.disconnected", kMalformed},
    {"huge-line", "http", "mcp.disconnected", kTooLarge},   // 100 MB JSON body
    {"huge-event", "http", "mcp.disconnected", kTooLarge},  // 100 MB SSE event
    {"endless-notifications", "http", "mcp.timeout", nullptr},  // SSE events, never the response
    {"drip", "http", "mcp.timeout", nullptr},                   // JSON body, one byte every 200 ms
    {"drip-sse", "http", "mcp.timeout", nullptr},               // SSE stream, one byte every 200 ms
    {"invalid-utf8", "http", "mcp.disconnected", kMalformed},
    {"deep", "http", "mcp.disconnected", kMalformed},
    {"exit-mid-frame", "http", "mcp.disconnected", nullptr},  // the peer process exits mid-body
    {"close-mid-body", "http", "mcp.disconnected", nullptr},
    {"wrong-content-type", "http", "mcp.stream_ended", nullptr},
    {"huge-headers", "http", "mcp.disconnected", nullptr},  // 100 MB of response headers
    {"ping-flood", "http", "mcp.timeout", nullptr},         // SSE requests without end
    {"redirect", "http", "mcp.http_status", nullptr},       // redirects are never followed
    // No answer to this request or any later POST (the cancellation included).
    {"black-hole", "http", "mcp.timeout", nullptr},
    {"hang-up", "stdio", "mcp.disconnected", "mcp.server_exited"},  // exits, answering nothing
    {"hang-up", "http", "mcp.disconnected", nullptr},  // closes the connection, answering nothing
};

std::vector<Case> CasesDuring(const char* during) {
  std::vector<Case> cases;
  for (const Behaviour& behaviour : kBehaviours) cases.push_back({behaviour, during});
  return cases;
}

// Found by this suite: capture accepted --timeout and ignored it, waiting out the policy's
// callTimeoutSeconds (here far beyond the hard kill) on a peer that never answers.
TEST(HostilePeersCaptureTest, TimeoutFlagBoundsCapture) {
  TempDir dir;
  dir.Write("policy.json", "{\"callTimeoutSeconds\": 600}");
  json::Value args = {"--transport", "stdio", "--mode", "drip", "--during", "list"};
  dir.Write("mcp.json", json::Value({{"mcpServers", {{"hostile", {{"command", PeerBinary()}, {"args", args}}}}}}).dump());
  testing::RunOptions options;
  options.timeout = kHardKill;
  ProcessResult result = testing::RunProcess(
      {testing::UdonMcpBinary(), "capture", "--server", "hostile", "-o", dir.File("captured.json"), "--json",
       "--timeout", std::to_string(kTimeoutSeconds), "--config", dir.File("mcp.json"), "--policy",
       dir.File("policy.json")},
      options);
  EXPECT_FALSE(result.timed_out) << "capture ignored --timeout";
  EXPECT_EQ(result.exit_code, 3) << result.out << result.err;
  auto out = json::Parse(result.out);
  ASSERT_TRUE(out.ok()) << result.out;
  EXPECT_EQ((*out)["details"]["cause"], "mcp.timeout");
}

// A strict legacy server that exits (stdio) or drops the connection (HTTP) in answer to the
// server/discover probe: capture starts it again (a new connection) and opens with
// initialize, and --json and evidence say so. The same peer behaving refuses the probe as
// an unknown method and is initialized on the same connection.
TEST(HostilePeersCaptureTest, AServerThatHangsUpOnTheProbeIsCapturedAfterARestart) {
  struct Probe {
    const char* transport;
    const char* mode;
    const char* negotiation;
  };
  for (const Probe& probe : {Probe{"stdio", "hang-up", "initialize_after_restart"},
                             Probe{"http", "hang-up", "initialize_after_restart"},
                             Probe{"stdio", "good", "initialize_fallback"},
                             Probe{"http", "good", "initialize_fallback"}}) {
    SCOPED_TRACE(std::string(probe.transport) + " " + probe.mode);
    TempDir dir;
    std::unique_ptr<HttpPeer> http;
    if (std::string(probe.transport) == "http") {
      http = std::make_unique<HttpPeer>(probe.mode, "discover");
      ASSERT_FALSE(http->url().empty()) << "the peer did not report its port";
      dir.Write("mcp.json", json::Value({{"mcpServers", {{"hostile", {{"url", http->url()}}}}}}).dump());
    } else {
      json::Value args = {"--transport", "stdio", "--mode", probe.mode, "--during", "discover"};
      dir.Write("mcp.json",
                json::Value({{"mcpServers", {{"hostile", {{"command", PeerBinary()}, {"args", args}}}}}}).dump());
    }
    testing::RunOptions options;
    options.timeout = kHardKill;
    ProcessResult result = testing::RunProcess(
        {testing::UdonMcpBinary(), "capture", "--server", "hostile", "-o", dir.File("captured.json"), "--json",
         "--evidence", dir.File("evidence.jsonl"), "--config", dir.File("mcp.json")},
        options);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    json::Value out = json::Parse(result.out).value();
    EXPECT_EQ(out["negotiation"]["hostile"], probe.negotiation) << result.out;
    EXPECT_EQ(out["protocolVersion"], "2025-11-25");
    auto captured = json::Parse(dir.Read("captured.json"));
    ASSERT_TRUE(captured.ok()) << "no manifest written";
    EXPECT_EQ((*captured)["servers"]["hostile"]["toolPages"][0]["tools"][0]["name"], "echo");
    auto record = json::Parse(dir.Read("evidence.jsonl"));
    ASSERT_TRUE(record.ok()) << dir.Read("evidence.jsonl");
    EXPECT_EQ((*record)["command"], "capture");
    EXPECT_EQ((*record)["server"], "hostile");
    EXPECT_EQ((*record)["era"], "legacy");
    EXPECT_EQ((*record)["negotiation"], probe.negotiation);
    EXPECT_EQ((*record)["manifestSha256"], out["sha256"]);
    if (http) http->Stop();
  }
}

INSTANTIATE_TEST_SUITE_P(Capture, HostilePeersTest, ::testing::ValuesIn(CasesDuring("list")), CaseName);
INSTANTIATE_TEST_SUITE_P(GatedCall, HostilePeersTest, ::testing::ValuesIn(CasesDuring("call")), CaseName);

}  // namespace
}  // namespace udon
