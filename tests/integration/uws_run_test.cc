// udon-mcp validate and run end to end against the demo server: capture, review, a UWS
// document chaining three tools, over stdio and Streamable HTTP; drift met midway.
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "json/json.h"
#include "test_support.h"

namespace udon {
namespace {

using testing::ProcessResult;
using testing::RunOptions;
using testing::TempDir;

constexpr const char* kSecretText = "Canary sentence one. Canary sentence two!";

// The workflow: analyze a text, convert its word count from km to m, render the asset.
std::string Workflow(const std::string& sha) {
  const std::string binding = R"(x-openudon-mcp: {manifest: ./mcp/demo.tools.json, manifestSha256: )" + sha +
                              ", server: demo, tool: ";
  return R"(uws: 1.9.1
info: {title: three demo tools, version: '1.0.0'}
operations:
  - operationId: analyze
    x-uws-operation-profile: openudon.mcp-tool-call.0.1
    )" + binding + R"(analyze_text}
    request: {body: {text: $inputs.text}}
    outputs: {words: $response.body#/words}
  - operationId: convert
    x-uws-operation-profile: openudon.mcp-tool-call.0.1
    )" + binding + R"(convert_units}
    request: {body: {value: $inputs.value, from: km, to: m}}
    successCriteria: [{condition: $response.body#/category == "length"}]
    outputs: {meters: $response.body#/value}
  - operationId: render
    x-uws-operation-profile: openudon.mcp-tool-call.0.1
    )" + binding + R"(render_turntable}
    request: {body: {source: $inputs.asset, angles: 4, resolution: 1024}}
    outputs: {first: $response.body#/renderedUris/0, all: $response.body#/renderedUris}
workflows:
  - workflowId: main
    type: sequence
    inputs:
      type: object
      required: [text, asset]
      properties: {text: {type: string}, asset: {type: string}}
    steps:
      - {stepId: stats, operationRef: analyze, inputs: {text: $inputs.text}}
      - {stepId: meters, operationRef: convert, inputs: {value: $steps.stats.outputs.words}}
      - stepId: views
        type: parallel
        steps:
          - {stepId: render_a, operationRef: render, inputs: {asset: $inputs.asset}}
          - {stepId: render_b, operationRef: render, inputs: {asset: $inputs.asset}, when: $steps.meters.outputs.meters > 1000}
    outputs:
      words: $steps.stats.outputs.words
      meters: $steps.meters.outputs.meters
      firstImage: $steps.render_a.outputs.first
      images: $steps.render_b.outputs.all
)";
}

class UwsRunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

  void SetUp() override {
    WriteConfig("mcp.json", {});
    std::filesystem::create_directories(dir_.File("mcp"));
    ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("mcp/demo.tools.json")}).exit_code, 0);
    Review("analyze_text", R"({"/text": "data"})");
    Review("convert_units", R"({"/value": "data", "/from": "data", "/to": "data"})");
    Review("render_turntable", R"({"/source": "data", "/angles": "data", "/resolution": "data"})");
    ProcessResult digest = testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File("mcp/demo.tools.json")});
    ASSERT_EQ(digest.exit_code, 0) << digest.err;
    sha_ = digest.out.substr(0, 64);
    dir_.Write("flow.uws.yaml", Workflow(sha_));
    dir_.Write("inputs.json", json::Value({{"text", kSecretText}, {"asset", "file:///assets/teapot.blend"}}).dump());
  }

  void TearDown() override { EXPECT_TRUE(testing::Descendants(getpid()).empty()) << "a child process survived"; }

  void WriteConfig(const std::string& name, std::vector<std::string> server_args) {
    server_args.insert(server_args.end(), {"--log-requests", dir_.File("requests.log")});
    json::Value config = {{"mcpServers", {{"demo", {{"command", testing::DemoServerBinary()}, {"args", server_args}}}}}};
    dir_.Write(name, config.dump(2));
  }

  ProcessResult Udon(std::vector<std::string> args, const std::string& config = "mcp.json") {
    args.insert(args.begin(), testing::UdonMcpBinary());
    args.insert(args.end(), {"--config", dir_.File(config)});
    RunOptions options;
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    options.cwd = dir_.path();
    ProcessResult result = testing::RunProcess(args, options);
    EXPECT_EQ(result.err.find("Canary"), std::string::npos) << "input values never reach diagnostics";
    return result;
  }

  void Review(const std::string& tool, const std::string& channels) {
    const std::string file = "review-" + tool + ".json";
    dir_.Write(file, R"({"reviewer": "tester@example.test", "assertions": {"headless": true, "independentCalls": true,
      "modelBacked": false, "sideEffects": [], "concurrency": "safe", "referenceBasedIO": true},
      "inputChannels": )" + channels + "}");
    ProcessResult review = Udon({"review", dir_.File("mcp/demo.tools.json"), "--server", "demo", "--tool", tool,
                                 "--from", dir_.File(file)});
    ASSERT_EQ(review.exit_code, 0) << review.err;
  }

  // tools/call lines of the demo server's request log, by tool.
  std::vector<std::string> CalledTools() {
    std::vector<std::string> tools;
    std::istringstream lines(dir_.Read("requests.log"));
    std::string line;
    while (std::getline(lines, line)) {
      auto entry = json::Parse(line);
      if (entry.ok() && entry->value("method", "") == "tools/call") tools.push_back(entry->value("tool", ""));
    }
    return tools;
  }

  void ExpectOutputs(const ProcessResult& run) {
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    auto out = json::Parse(run.out);
    ASSERT_TRUE(out.ok()) << run.out;
    EXPECT_EQ((*out)["ok"], true);
    const json::Value& outputs = (*out)["outputs"];
    EXPECT_EQ(outputs["words"], 6);
    EXPECT_EQ(outputs["meters"], 6000);
    ASSERT_TRUE(outputs["firstImage"].is_string());
    EXPECT_EQ(outputs["firstImage"].get<std::string>().rfind("render://turntable/", 0), 0u);
    EXPECT_EQ(outputs["images"].size(), 4u);
    EXPECT_EQ(run.out.find("Canary"), std::string::npos);
  }

  TempDir dir_;
  std::string sha_;
};

TEST_F(UwsRunTest, ValidateReportsTheBoundOperations) {
  ProcessResult validate = Udon({"validate", dir_.File("flow.uws.yaml"), "--json"});
  ASSERT_EQ(validate.exit_code, 0) << validate.out << validate.err;
  json::Value out = json::Parse(validate.out).value();
  EXPECT_EQ(out["mcpOperations"], 3);
  EXPECT_EQ(out["runnable"], true);
}

TEST_F(UwsRunTest, ValidateRefusesABadPinWithItsCode) {
  std::string doc = Workflow(std::string(64, 'a'));
  dir_.Write("bad-pin.uws.yaml", doc);
  ProcessResult validate = Udon({"validate", dir_.File("bad-pin.uws.yaml"), "--json"});
  EXPECT_EQ(validate.exit_code, 3) << validate.out << validate.err;
  json::Value out = json::Parse(validate.out).value();
  EXPECT_EQ(out["code"], "manifest.digest_mismatch");
  EXPECT_EQ(out["details"]["errors"].size(), 3u);
}

TEST_F(UwsRunTest, RunsThreeToolsOverStdio) {
  ProcessResult run = Udon({"run", dir_.File("flow.uws.yaml"), "--inputs", dir_.File("inputs.json"), "--json",
                            "--evidence", dir_.File("evidence.jsonl")});
  ExpectOutputs(run);
  EXPECT_EQ(CalledTools(), (std::vector<std::string>{"analyze_text", "convert_units", "render_turntable",
                                                     "render_turntable"}));
  std::istringstream lines(dir_.Read("evidence.jsonl"));
  std::string line;
  int records = 0;
  while (std::getline(lines, line)) {
    json::Value record = json::Parse(line).value();
    EXPECT_EQ(record["command"], "run");
    EXPECT_EQ(record["code"], "ok");
    ++records;
  }
  EXPECT_EQ(records, 4);
  EXPECT_EQ(dir_.Read("evidence.jsonl").find("Canary"), std::string::npos);
}

// The strace binary on PATH, or empty.
std::string FindStrace() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / "strace";
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

// Issue 21: the static checks and content trust share the run's one read of the manifest;
// the gate reads it again before every gated call (the proposal requires that), and
// nothing else does. strace counts the opens of the manifest's path.
TEST_F(UwsRunTest, ARunOpensTheManifestOncePlusOncePerGatedCall) {
  const std::string strace = FindStrace();
  // scripts/install-deps.sh installs strace: in CI its absence is a failure, not a skip.
  if (strace.empty() && std::getenv("CI") != nullptr) FAIL() << "strace is not installed";
  if (strace.empty()) GTEST_SKIP() << "strace is not installed";
  dir_.Write("policy.json", R"({"blockOnFindings": "high"})");  // content trust runs too
  RunOptions options;
  options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
  options.cwd = dir_.path();
  ProcessResult run = testing::RunProcess(
      {strace, "-f", "-qq", "-e", "trace=openat", "-o", dir_.File("openat.log"), testing::UdonMcpBinary(), "run",
       dir_.File("flow.uws.yaml"), "--inputs", dir_.File("inputs.json"), "--json", "--policy",
       dir_.File("policy.json"), "--evidence", dir_.File("evidence.jsonl"), "--config", dir_.File("mcp.json")},
      options);
  if (run.exit_code != 0 && dir_.Read("openat.log").empty()) GTEST_SKIP() << "strace cannot trace here: " << run.err;
  ExpectOutputs(run);
  std::istringstream calls(dir_.Read("evidence.jsonl"));
  int gated_calls = 0;
  for (std::string line; std::getline(calls, line);) ++gated_calls;
  EXPECT_EQ(gated_calls, 4);
  std::istringstream trace(dir_.Read("openat.log"));
  int opens = 0;
  for (std::string line; std::getline(trace, line);) {
    if (line.find("openat(") != std::string::npos && line.find("demo.tools.json") != std::string::npos) ++opens;
  }
  EXPECT_EQ(opens, 1 + gated_calls);
}

TEST_F(UwsRunTest, RunsThreeToolsOverHttp) {
  testing::BackgroundProcess server({testing::DemoServerBinary(), "--transport", "http", "--port", "0"});
  std::string url;
  for (int i = 0; i < 200 && url.empty(); ++i) {
    std::string output = server.Output();
    if (auto at = output.find("\"url\":\""); at != std::string::npos) {
      auto end = output.find('"', at + 7);
      if (end != std::string::npos) url = output.substr(at + 7, end - at - 7);
    }
    if (url.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(url.empty()) << server.Output();
  dir_.Write("http.json", json::Value({{"mcpServers", {{"demo", {{"url", url}}}}}}).dump());
  ProcessResult run = Udon({"run", dir_.File("flow.uws.yaml"), "--inputs", dir_.File("inputs.json"), "--json"},
                           "http.json");
  ExpectOutputs(run);
  server.Stop();
}

TEST_F(UwsRunTest, DriftMidwayRefusesLaterSteps) {
  WriteConfig("drift.json", {"--fault", "description@after-first-list=convert_units"});
  std::filesystem::remove(dir_.File("requests.log"));
  ProcessResult run = Udon({"run", dir_.File("flow.uws.yaml"), "--inputs", dir_.File("inputs.json"), "--json"},
                           "drift.json");
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  json::Value out = json::Parse(run.out).value();
  EXPECT_EQ(out["ok"], false);
  EXPECT_EQ(out["code"], "catalog.tool_drift");
  EXPECT_EQ(out["details"]["step"], "main/meters");
  EXPECT_FALSE(out.contains("outputs"));
  EXPECT_EQ(CalledTools(), (std::vector<std::string>{"analyze_text"}));
}

TEST_F(UwsRunTest, IndeterminateCallIsNotRetried) {
  std::string doc = Workflow(sha_);
  doc.replace(doc.find("    outputs: {words"), 0, "    onFailure: [{name: again, type: retry, retryLimit: 3}]\n");
  dir_.Write("retry.uws.yaml", doc);
  WriteConfig("crash.json", {"--fault", "crash-during-call=analyze_text"});
  std::filesystem::remove(dir_.File("requests.log"));
  ProcessResult run = Udon({"run", dir_.File("retry.uws.yaml"), "--inputs", dir_.File("inputs.json"), "--json"},
                           "crash.json");
  EXPECT_EQ(run.exit_code, 5) << run.out << run.err;
  EXPECT_EQ(json::Parse(run.out).value()["code"], "call.indeterminate");
  EXPECT_EQ(CalledTools(), (std::vector<std::string>{"analyze_text"}));
}

TEST_F(UwsRunTest, UnsupportedConstructsAreRefusedBeforeAnythingRuns) {
  std::string doc = Workflow(sha_);
  doc.replace(doc.find("    type: sequence"), 18, "    type: sequence\n    idempotency: {key: $inputs.text}");
  dir_.Write("unsupported.uws.yaml", doc);
  std::filesystem::remove(dir_.File("requests.log"));
  ProcessResult run = Udon({"run", dir_.File("unsupported.uws.yaml"), "--inputs", dir_.File("inputs.json"), "--json"});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  json::Value out = json::Parse(run.out).value();
  EXPECT_EQ(out["code"], "uws.unsupported");
  EXPECT_EQ(out["details"]["construct"], "idempotency");
  EXPECT_EQ(out["details"]["pointer"], "/workflows/0/idempotency");
  EXPECT_FALSE(std::filesystem::exists(dir_.File("requests.log")));
}

// A single-step workflow whose operation declares no outputs; only the step reads the
// tool's result through $response.body.
std::string BodyReadingWorkflow(const std::string& manifest, const std::string& sha) {
  return R"(uws: 1.9.1
info: {title: body read without declared outputs, version: '1.0.0'}
operations:
  - operationId: analyze
    x-uws-operation-profile: openudon.mcp-tool-call.0.1
    x-openudon-mcp: {manifest: )" + manifest + ", manifestSha256: " + sha + R"(, server: demo, tool: analyze_text}
    request: {body: {text: $inputs.text}}
workflows:
  - workflowId: main
    type: sequence
    inputs: {type: object, properties: {text: {type: string}}}
    steps:
      - {stepId: stats, operationRef: analyze, inputs: {text: $inputs.text}, outputs: {words: $response.body#/words}}
    outputs:
      words: $steps.stats.outputs.words
)";
}

TEST_F(UwsRunTest, AResponseBodyReadCountsAsDeclaredOutputs) {
  // At validate time: the reviewed Tool must have an outputSchema. A copy of the manifest
  // whose analyze_text lost it (validate contacts no server).
  json::Value doc = json::Parse(dir_.Read("mcp/demo.tools.json")).value();
  for (auto& page : doc["servers"]["demo"]["toolPages"]) {
    for (auto& tool : page["tools"]) {
      if (tool["name"] == "analyze_text") tool.erase("outputSchema");
    }
  }
  dir_.Write("mcp/no-output.tools.json", doc.dump(2));
  const std::string stripped_sha =
      testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File("mcp/no-output.tools.json")}).out.substr(0, 64);
  dir_.Write("no-output.uws.yaml", BodyReadingWorkflow("./mcp/no-output.tools.json", stripped_sha));
  ProcessResult validate = Udon({"validate", dir_.File("no-output.uws.yaml"), "--json"});
  EXPECT_EQ(validate.exit_code, 3) << validate.out << validate.err;
  json::Value refused = json::Parse(validate.out).value();
  EXPECT_EQ(refused["code"], "binding.output_schema_required");
  EXPECT_EQ(refused["details"]["errors"][0]["pointer"], "/workflows/0/steps/0/outputs/words");

  // At run time: structuredContent is required, so a result without it is exit 4, not null.
  dir_.Write("body.uws.yaml", BodyReadingWorkflow("./mcp/demo.tools.json", sha_));
  ProcessResult validated = Udon({"validate", dir_.File("body.uws.yaml"), "--json"});
  EXPECT_EQ(validated.exit_code, 0) << validated.out << validated.err;
  WriteConfig("bare.json", {"--fault", "call-no-structured-content=analyze_text"});
  std::filesystem::remove(dir_.File("requests.log"));
  ProcessResult run = Udon({"run", dir_.File("body.uws.yaml"), "--inputs", dir_.File("inputs.json"), "--json"},
                           "bare.json");
  EXPECT_EQ(run.exit_code, 4) << run.out << run.err;
  json::Value out = json::Parse(run.out).value();
  EXPECT_EQ(out["code"], "call.structured_content_missing");
  EXPECT_FALSE(out.contains("outputs"));
  EXPECT_EQ(CalledTools(), (std::vector<std::string>{"analyze_text"}));
}

}  // namespace
}  // namespace udon
