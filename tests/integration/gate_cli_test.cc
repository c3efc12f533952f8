// The manifest and gate commands end to end against a server we did not write
// (@modelcontextprotocol/server-everything), over stdio and Streamable HTTP: capture,
// check, review, diff, verify, call; digest pinning; drift; secrets; process hygiene.
#include <sys/prctl.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "json/json.h"
#include "test_support.h"

namespace udon {
namespace {

using testing::ProcessResult;
using testing::RunOptions;
using testing::TempDir;

const char* kCanaryEnv = "UDON_TEST_CANARY_TOKEN";
const char* kCanary = "canary-secret-5d1e0c2b";

std::string EverythingEntry() {
  return testing::PeerModuleDir("@modelcontextprotocol/server-everything") + "/dist/index.js";
}

class GateCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Orphans of anything we start are re-parented to this process, so a leaked server
    // shows up in Descendants().
    prctl(PR_SET_CHILD_SUBREAPER, 1);
  }

  void SetUp() override {
    UDON_REQUIRE_PEERS();
    // The secret travels only through the config's env expansion: it must never surface.
    json::Value config = {{"mcpServers",
                           {{"everything",
                             {{"command", testing::NodeBinary()},
                              {"args", {EverythingEntry(), "stdio"}},
                              {"env", {{"EVERYTHING_TOKEN", std::string("${env:") + kCanaryEnv + "}"}}}}},
                            {"marker",
                             {{"command", "/bin/sh"},
                              {"args", {"-c", "touch " + dir_.File("server-started") + "; exec sleep 30"}}}}}}};
    dir_.Write("mcp.json", config.dump(2));
  }

  void TearDown() override {
    // Every server a command started is gone when the command is.
    EXPECT_TRUE(testing::Descendants(getpid()).empty()) << "a child process survived";
  }

  ProcessResult Udon(std::vector<std::string> args) {
    args.insert(args.begin(), testing::UdonMcpBinary());
    args.insert(args.end(), {"--config", dir_.File("mcp.json")});
    RunOptions options;
    options.env[kCanaryEnv] = kCanary;
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    options.cwd = dir_.path();
    ProcessResult result = testing::RunProcess(args, options);
    EXPECT_EQ(result.out.find(kCanary), std::string::npos);
    EXPECT_EQ(result.err.find(kCanary), std::string::npos);
    return result;
  }

  std::string Digest(const std::string& file) {
    ProcessResult result = testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File(file)});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out.substr(0, 64);
  }

  void CaptureAndReview(const std::string& file) {
    ProcessResult capture = Udon({"capture", "--server", "everything", "-o", dir_.File(file)});
    ASSERT_EQ(capture.exit_code, 0) << capture.err;
    ProcessResult review = Udon({"review", dir_.File(file), "--server", "everything", "--tool",
                                 "get-structured-content", "--reviewer", "tester@example.test", "--headless",
                                 "--independent-calls", "--model-backed", "false", "--no-side-effects",
                                 "--concurrency", "safe", "--reference-based-io", "--channel", "/location=data"});
    ASSERT_EQ(review.exit_code, 0) << review.err;
  }

  TempDir dir_;
};

TEST_F(GateCliTest, CaptureReviewVerifyCallHappyPath) {
  CaptureAndReview("tools.json");
  json::Value manifest = json::Parse(dir_.Read("tools.json")).value();
  EXPECT_EQ(manifest["protocolVersion"], "2025-11-25");
  EXPECT_EQ(manifest["servers"]["everything"]["serverInfo"]["name"], "mcp-servers/everything");
  EXPECT_EQ(dir_.Read("tools.json").find(kCanary), std::string::npos);

  ProcessResult check = Udon({"check", dir_.File("tools.json"), "--server", "everything", "--tool",
                              "get-structured-content", "--json"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;

  const std::string sha = Digest("tools.json");
  ProcessResult verify = Udon({"verify", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server",
                               "everything", "--tool", "get-structured-content"});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;

  ProcessResult call = Udon({"call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server",
                             "everything", "--tool", "get-structured-content", "--args",
                             R"({"location":"New York"})", "--expect-output", "--json", "--evidence",
                             dir_.File("evidence.jsonl")});
  ASSERT_EQ(call.exit_code, 0) << call.err;
  json::Value out = json::Parse(call.out).value();
  EXPECT_EQ(out["ok"], true);
  EXPECT_TRUE(out["structuredContent"].contains("temperature"));

  const std::string evidence = dir_.Read("evidence.jsonl");
  EXPECT_EQ(evidence.find("New York"), std::string::npos) << "argument values never reach evidence";
  EXPECT_EQ(evidence.find(kCanary), std::string::npos);
  json::Value record = json::Parse(evidence.substr(0, evidence.find('\n'))).value();
  EXPECT_EQ(record["code"], "ok");
  EXPECT_EQ(record["manifestSha256"], sha);
  // server-everything announces a tool right after initialization: recorded, absorbed.
  EXPECT_GE(record["listChangedBeforeBinding"].get<int>(), 1);
}

TEST_F(GateCliTest, APinMismatchStartsNoServer) {
  json::Value config = json::Parse(dir_.Read("mcp.json")).value();
  CaptureAndReview("tools.json");
  json::Value manifest = json::Parse(dir_.Read("tools.json")).value();
  // Re-point the reviewed server key at a process that leaves a marker when started.
  config["mcpServers"]["everything"] = config["mcpServers"]["marker"];
  dir_.Write("mcp.json", config.dump());
  std::string wrong = Digest("tools.json");
  wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
  ProcessResult call = Udon({"call", "--manifest", dir_.File("tools.json"), "--sha256", wrong, "--server",
                             "everything", "--tool", "get-structured-content", "--json"});
  EXPECT_EQ(call.exit_code, 3);
  EXPECT_EQ(json::Parse(call.out).value()["code"], "manifest.digest_mismatch");
  EXPECT_NE(access(dir_.File("server-started").c_str(), F_OK), 0) << "no process may be spawned";
}

TEST_F(GateCliTest, ADriftedToolIsRefusedWithItsPointers) {
  CaptureAndReview("tools.json");
  // A reviewer's snapshot whose description differs from what the server now says:
  // re-pinning the edited file keeps the digest valid, so only the live comparison fails.
  std::string text = dir_.Read("tools.json");
  const std::string needle = "Returns structured content along with an output schema";
  ASSERT_NE(text.find(needle), std::string::npos);
  text.replace(text.find(needle), needle.size(), "Returns structured content (reviewed wording)");
  dir_.Write("edited.json", text);
  ProcessResult diff = testing::RunProcess(
      {testing::UdonMcpBinary(), "diff", dir_.File("tools.json"), dir_.File("edited.json"), "--json"});
  EXPECT_EQ(diff.exit_code, 1);
  EXPECT_NE(diff.out.find("/description"), std::string::npos);

  ProcessResult call = Udon({"call", "--manifest", dir_.File("edited.json"), "--sha256", Digest("edited.json"),
                             "--server", "everything", "--tool", "get-structured-content", "--args",
                             R"({"location":"New York"})", "--json"});
  EXPECT_EQ(call.exit_code, 3);
  json::Value out = json::Parse(call.out).value();
  EXPECT_EQ(out["code"], "catalog.tool_drift");
  EXPECT_EQ(out["details"]["pointers"][0]["pointer"], "/description");
  EXPECT_EQ(call.out.find("reviewed wording"), std::string::npos) << "drift reports pointers, not values";
}

TEST_F(GateCliTest, RefusalsBeforeDispatch) {
  CaptureAndReview("tools.json");
  const std::string sha = Digest("tools.json");
  auto call = [&](const std::string& tool, const std::string& args) {
    return Udon({"call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server", "everything",
                 "--tool", tool, "--args", args, "--json"});
  };
  ProcessResult unreviewed = call("echo", R"({"message":"hi"})");
  EXPECT_EQ(unreviewed.exit_code, 3);
  EXPECT_EQ(json::Parse(unreviewed.out).value()["code"], "review.missing");
  ProcessResult invalid = call("get-structured-content", R"({"location":"Atlantis"})");
  EXPECT_EQ(invalid.exit_code, 3);
  EXPECT_EQ(json::Parse(invalid.out).value()["code"], "input.schema_violation");
  EXPECT_EQ(invalid.out.find("Atlantis"), std::string::npos);
  // A task-required tool can never be reviewed.
  ProcessResult review = Udon({"review", dir_.File("tools.json"), "--server", "everything", "--tool",
                               "simulate-research-query", "--reviewer", "r@example.test", "--headless",
                               "--independent-calls", "--model-backed", "true", "--no-side-effects",
                               "--concurrency", "safe", "--reference-based-io", "--json"});
  EXPECT_EQ(review.exit_code, 3);
  EXPECT_EQ(json::Parse(review.out).value()["code"], "catalog.task_required");
  EXPECT_EQ(Digest("tools.json"), sha) << "a refused review writes nothing";
}

TEST_F(GateCliTest, HttpCaptureEqualsStdioCapture) {
  const int port = testing::FreeLoopbackPort();
  RunOptions server_options;
  server_options.env["PORT"] = std::to_string(port);
  testing::BackgroundProcess server(
      {testing::NodeBinary(), "-r", testing::SourceDir() + "/tests/peers/bind-loopback.cjs", EverythingEntry(),
       "streamableHttp"},
      server_options);
  ASSERT_TRUE(testing::WaitForPort(port)) << server.Output();
  json::Value config = json::Parse(dir_.Read("mcp.json")).value();
  config["mcpServers"]["everything_http"] = {{"url", "http://127.0.0.1:" + std::to_string(port) + "/mcp"},
                                             {"headers", {{"Authorization", std::string("Bearer ${env:") + kCanaryEnv + "}"}}}};
  dir_.Write("mcp.json", config.dump());
  ASSERT_EQ(Udon({"capture", "--server", "everything", "-o", dir_.File("stdio.json")}).exit_code, 0);
  ProcessResult http = Udon({"capture", "--server", "everything_http", "-o", dir_.File("http.json")});
  ASSERT_EQ(http.exit_code, 0) << http.err;
  json::Value a = json::Parse(dir_.Read("stdio.json")).value();
  json::Value b = json::Parse(dir_.Read("http.json")).value();
  EXPECT_EQ(a["servers"]["everything"]["toolPages"], b["servers"]["everything_http"]["toolPages"]);
  EXPECT_EQ(a["servers"]["everything"]["serverInfo"], b["servers"]["everything_http"]["serverInfo"]);
  server.Stop();
}

}  // namespace
}  // namespace udon
