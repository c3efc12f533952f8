// The gate against a server we did not write in the 2026-07-28 era: the official
// TypeScript SDK 2.x server (@modelcontextprotocol/server, tests/peers/sdk2_server.mjs),
// over stdio and Streamable HTTP. Capture negotiates the modern revision, the gate binds
// through server/discover and subscriptions/listen, and x-mcp-header arguments are
// mirrored into the headers the SDK validates.
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "json/json.h"
#include "manifest/instant.h"
#include "test_support.h"

namespace udon {
namespace {

using testing::ProcessResult;
using testing::TempDir;

std::string Sdk2Server() { return testing::SourceDir() + "/tests/peers/sdk2_server.mjs"; }

class Sdk2GateTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

  void SetUp() override {
    UDON_REQUIRE_PEERS();
    json::Value entry;
    if (GetParam() == "http") {
      server_ = std::make_unique<testing::BackgroundProcess>(
          std::vector<std::string>{testing::NodeBinary(), Sdk2Server(), "--transport", "http", "--port", "0",
                                   "--ttl-ms", "86400000"});
      std::string line;
      for (int i = 0; i < 300 && line.empty(); ++i) {
        const std::string output = server_->Output();
        if (output.find('\n') != std::string::npos) line = output.substr(0, output.find('\n'));
        else std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      ASSERT_FALSE(line.empty()) << "the SDK server did not report its port";
      entry = {{"url", json::Parse(line).value()["url"]}};
    } else {
      entry = {{"command", testing::NodeBinary()}, {"args", {Sdk2Server(), "--ttl-ms", "86400000"}}};
    }
    dir_.Write("mcp.json", json::Value({{"mcpServers", {{"sdk", entry}}}}).dump());
  }

  void TearDown() override {
    if (server_) server_->Stop();
    server_.reset();
    EXPECT_TRUE(testing::Descendants(getpid()).empty()) << "a child process survived";
  }

  ProcessResult Udon(std::vector<std::string> args, int expected_exit) {
    args.insert(args.begin(), testing::UdonMcpBinary());
    args.insert(args.end(), {"--config", dir_.File("mcp.json")});
    testing::RunOptions options;
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    ProcessResult result = testing::RunProcess(args, options);
    if (expected_exit >= 0) {
      EXPECT_EQ(result.exit_code, expected_exit) << result.out << result.err;
    }
    return result;
  }

  void Review(const std::string& tool, std::vector<std::string> extra) {
    std::vector<std::string> args = {"review", dir_.File("tools.json"), "--server", "sdk", "--tool", tool,
                                     "--reviewer", "t@example.test", "--headless", "--independent-calls",
                                     "--model-backed", "false", "--reference-based-io", "--concurrency", "safe"};
    args.insert(args.end(), extra.begin(), extra.end());
    Udon(args, 0);
  }

  json::Value Call(const std::string& tool, const std::string& arguments, int expected_exit,
                   std::vector<std::string> extra = {}) {
    const std::string sha =
        testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File("tools.json")}).out.substr(0, 64);
    std::vector<std::string> args = {"call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server",
                                     "sdk", "--tool", tool, "--args", arguments, "--json", "--evidence",
                                     dir_.File("evidence.jsonl")};
    args.insert(args.end(), extra.begin(), extra.end());
    auto out = json::Parse(Udon(args, expected_exit).out);
    EXPECT_TRUE(out.ok());
    return out.ok() ? *out : json::Value();
  }

  std::unique_ptr<testing::BackgroundProcess> server_;
  TempDir dir_;
};

TEST_P(Sdk2GateTest, CaptureNegotiatesTheModernRevisionAndKeepsCachingHints) {
  Udon({"capture", "--server", "sdk", "-o", dir_.File("tools.json"), "--expires-in", "3"}, 0);
  json::Value manifest = json::Parse(dir_.Read("tools.json")).value();
  EXPECT_EQ(manifest["protocolVersion"], "2026-07-28");
  EXPECT_EQ(manifest["servers"]["sdk"]["serverInfo"]["name"], "udon-sdk2-peer");
  const json::Value& page = manifest["servers"]["sdk"]["toolPages"][0];
  EXPECT_EQ(page["ttlMs"], 86400000);  // recorded as sent...
  EXPECT_EQ(page["resultType"], "complete");
  // ...and a day-long freshness hint never stretches a 3-day review.
  const auto captured = manifest::ParseInstant(manifest["capturedAt"].get<std::string>());
  const auto expires = manifest::ParseInstant(manifest["expiresAt"].get<std::string>());
  ASSERT_TRUE(captured && expires);
  EXPECT_EQ(*expires - *captured, 3 * manifest::kSecondsPerDay);
  Udon({"capture", "--server", "sdk", "-o", dir_.File("legacy.json"), "--protocol-version", "2025-11-25"}, 0);
  EXPECT_EQ(json::Parse(dir_.Read("legacy.json")).value()["protocolVersion"], "2025-11-25");
}

TEST_P(Sdk2GateTest, GatedCallsValidateOutputAndMirrorHeaderParameters) {
  Udon({"capture", "--server", "sdk", "-o", dir_.File("tools.json")}, 0);
  Review("add", {"--no-side-effects", "--channel", "/a=data", "--channel", "/b=data"});
  Review("lookup", {"--no-side-effects", "--channel", "/region=data", "--channel", "/key=data"});
  json::Value sum = Call("add", R"({"a":2,"b":40})", 0, {"--expect-output"});
  EXPECT_EQ(sum["structuredContent"]["sum"], 42);
  // Over HTTP the SDK refuses a tools/call whose Mcp-Param-Region does not match the body.
  json::Value looked = Call("lookup", R"({"region":"eu-west \u00e9","key":"k"})", 0);
  EXPECT_EQ(looked["ok"], true) << looked;
  const std::string evidence = dir_.Read("evidence.jsonl");
  EXPECT_EQ(evidence.find("eu-west"), std::string::npos) << "argument values never reach evidence";
  EXPECT_NE(evidence.find("\"era\":\"modern\""), std::string::npos);
  EXPECT_NE(evidence.find("\"subscription\":\"active\""), std::string::npos) << evidence;
}

TEST_P(Sdk2GateTest, AToolAddedAfterReviewLeavesTheReviewedToolBound) {
  Udon({"capture", "--server", "sdk", "-o", dir_.File("tools.json")}, 0);
  Review("add", {"--no-side-effects", "--channel", "/a=data", "--channel", "/b=data"});
  Review("add_tool", {"--side-effect", "adds_tool", "--channel", "/name=data"});
  // The call changes the catalog; the server announces it on the subscription. Whether the
  // notice lands before the result depends on the transport's ordering, so either the call
  // completes or it is withheld as indeterminate (and the pair is invalidated for good).
  json::Value added = Call("add_tool", R"({"name":"late_tool"})", -1);
  const std::string code = added.value("ok", false) ? "ok" : added.value("code", "");
  ASSERT_TRUE(code == "ok" || code == "call.indeterminate") << added;
  if (code == "call.indeterminate") {
    EXPECT_EQ(Call("add", R"({"a":1,"b":1})", 3)["code"], "manifest.invalidated");
    return;
  }
  if (GetParam() == "http") {
    // The long-lived server now lists one more tool; the reviewed Tool object is unchanged.
    EXPECT_EQ(Call("add", R"({"a":1,"b":1})", 0)["structuredContent"]["sum"], 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, Sdk2GateTest, ::testing::Values("stdio", "http"),
                         [](const ::testing::TestParamInfo<std::string>& transport) { return transport.param; });

}  // namespace
}  // namespace udon
