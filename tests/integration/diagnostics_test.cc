// Issue 17, through the real binary: --diagnostics (the tool's error text, the server's
// stderr tail, the transport's cause on stderr only, never in --json, evidence or
// reports), connect failures that say why, refusals whose text shows what --json knows,
// the note on content blocks never shown, and progress only on a terminal.
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

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

const char* kArgs = R"({"source":"https://assets.example.test/a.blend","angles":4,"resolution":1024})";
const char* kStderrMarker = "demo-stderr-marker-3141";

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class DiagnosticsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

  void TearDown() override { EXPECT_TRUE(testing::Descendants(getpid()).empty()) << "a child process survived"; }

  // The demo server as "demo", started through a shell that first writes a marker to
  // its stderr (what --diagnostics shows as the stderr tail).
  void UseDemo(const std::vector<std::string>& extra) {
    std::string command = std::string("echo ") + kStderrMarker + " >&2; exec '" + testing::DemoServerBinary() + "'";
    for (const std::string& arg : extra) command += " '" + arg + "'";
    UseCommand("/bin/sh", {"-c", command});
  }

  void UseCommand(const std::string& command, const std::vector<std::string>& args) {
    json::Value config = {{"mcpServers", {{"demo", {{"command", command}, {"args", args}}}}}};
    dir_.Write("mcp.json", config.dump());
  }

  std::vector<std::string> Argv(std::vector<std::string> args) const {
    args.insert(args.begin(), testing::UdonMcpBinary());
    args.insert(args.end(), {"--config", dir_.File("mcp.json")});
    return args;
  }

  ProcessResult Run(std::vector<std::string> args, int expected_exit) {
    testing::RunOptions options;
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    ProcessResult result = testing::RunProcess(Argv(std::move(args)), options);
    EXPECT_EQ(result.exit_code, expected_exit) << result.out << result.err;
    return result;
  }

  // Runs under a pseudo-terminal (util-linux script): stdout and stderr both land in out.
  ProcessResult RunOnTerminal(std::vector<std::string> args, int expected_exit) {
    if (access("/usr/bin/script", X_OK) != 0) {
      ADD_FAILURE() << "util-linux script(1) is needed for a pseudo-terminal";
      return {};
    }
    std::string line;
    for (const std::string& arg : Argv(std::move(args))) line += "'" + arg + "' ";
    testing::RunOptions options;
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    ProcessResult result = testing::RunProcess({"/usr/bin/script", "-qec", line, "/dev/null"}, options);
    EXPECT_EQ(result.exit_code, expected_exit) << result.out << result.err;
    return result;
  }

  void CaptureAndReview(const std::string& tool, std::vector<std::string> review) {
    Run({"capture", "--server", "demo", "-o", dir_.File("tools.json"), "--protocol-version", "2025-11-25"}, 0);
    std::vector<std::string> args = {"review", dir_.File("tools.json"), "--server", "demo", "--tool", tool,
                                     "--reviewer", "t@example.test", "--headless", "--independent-calls",
                                     "--model-backed", "false", "--reference-based-io", "--no-side-effects",
                                     "--concurrency", "safe"};
    args.insert(args.end(), review.begin(), review.end());
    Run(args, 0);
  }

  void CaptureAndReviewRender() {
    CaptureAndReview("render_turntable",
                     {"--channel", "/source=data", "--channel", "/angles=data", "--channel", "/resolution=data"});
  }

  std::string Sha() {
    return testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File("tools.json")}).out.substr(0, 64);
  }

  std::vector<std::string> Gate(const std::string& command, const std::string& tool = "render_turntable",
                                const std::string& args = kArgs) {
    std::vector<std::string> argv = {command, "--manifest", dir_.File("tools.json"), "--sha256", Sha(),
                                     "--server", "demo", "--tool", tool};
    if (command != "verify") argv.insert(argv.end(), {"--args", args});
    return argv;
  }

  static std::vector<std::string> With(std::vector<std::string> argv, const std::vector<std::string>& more) {
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
  }

  TempDir dir_;
};

TEST_F(DiagnosticsTest, AToolErrorIsExplainedOnStderrOnlyWithTheFlag) {
  UseDemo({});
  CaptureAndReviewRender();
  UseDemo({"--fault", "call-is-error"});

  ProcessResult plain = Run(Gate("call"), 4);
  EXPECT_TRUE(Contains(plain.err, "[call.tool_error]")) << plain.err;
  EXPECT_TRUE(Contains(plain.err, "--diagnostics shows")) << plain.err;
  EXPECT_FALSE(Contains(plain.err, "injected tool error")) << plain.err;
  EXPECT_FALSE(Contains(plain.err, kStderrMarker)) << plain.err;

  ProcessResult diagnosed =
      Run(With(Gate("call"), {"--diagnostics", "--json", "--evidence", dir_.File("evidence.jsonl")}), 4);
  EXPECT_TRUE(Contains(diagnosed.err, "udon-mcp: diagnostics: tool error: injected tool error")) << diagnosed.err;
  EXPECT_TRUE(Contains(diagnosed.err, std::string("udon-mcp: diagnostics: server stderr: ") + kStderrMarker))
      << diagnosed.err;
  EXPECT_FALSE(Contains(diagnosed.err, "--diagnostics shows")) << diagnosed.err;
  // Never in --json stdout or evidence.
  EXPECT_EQ(json::Parse(diagnosed.out).value()["code"], "call.tool_error");
  EXPECT_FALSE(Contains(diagnosed.out, "injected tool error")) << diagnosed.out;
  EXPECT_FALSE(Contains(diagnosed.out, kStderrMarker)) << diagnosed.out;
  const std::string evidence = dir_.Read("evidence.jsonl");
  EXPECT_FALSE(evidence.empty());
  EXPECT_FALSE(Contains(evidence, "injected tool error"));
  EXPECT_FALSE(Contains(evidence, kStderrMarker));
}

TEST_F(DiagnosticsTest, AFailedCallShowsTheServersErrorMessageAndRunAndProbeTakeTheFlag) {
  UseDemo({});
  CaptureAndReviewRender();
  UseDemo({"--fault", "call-rpc-error"});
  ProcessResult call = Run(With(Gate("call"), {"--diagnostics"}), 4);
  EXPECT_TRUE(Contains(call.err, "udon-mcp: diagnostics: tool error: injected failure")) << call.err;

  UseDemo({"--fault", "call-is-error"});
  ProcessResult probe = Run(With(Gate("probe"), {"--repeat", "2", "--diagnostics", "--json"}), 4);
  EXPECT_TRUE(Contains(probe.err, "udon-mcp: diagnostics: a repetition: tool error: injected tool error")) << probe.err;
  EXPECT_FALSE(Contains(probe.out, "injected tool error")) << "never in the report";
  ProcessResult quiet = Run(With(Gate("probe"), {"--repeat", "1"}), 4);
  EXPECT_TRUE(Contains(quiet.err, "--diagnostics shows")) << quiet.err;
  EXPECT_FALSE(Contains(quiet.err, "injected tool error")) << quiet.err;
}

TEST_F(DiagnosticsTest, AMissingCommandNamesItselfAndTheOsError) {
  UseCommand("udon-no-such-command-2718", {});
  ProcessResult capture = Run({"capture", "--server", "demo", "-o", dir_.File("tools.json")}, 3);
  EXPECT_TRUE(Contains(capture.err, "\"udon-no-such-command-2718\" could not be executed: No such file or directory"))
      << capture.err;
  EXPECT_TRUE(Contains(capture.err, "[server.connect_failed]")) << capture.err;
  EXPECT_FALSE(Contains(capture.err, "server/discover")) << capture.err;
}

TEST_F(DiagnosticsTest, AServerThatExitsAtOnceNamesItsStatusAndTheMethodOfItsEra) {
  UseCommand("/bin/sh", {"-c", std::string("echo ") + kStderrMarker + " >&2; exit 3"});
  // Negotiation restarts a server that hung up on the probe and tries initialize: that is
  // the method that failed.
  ProcessResult negotiated = Run({"capture", "--server", "demo", "-o", dir_.File("tools.json")}, 3);
  EXPECT_TRUE(Contains(negotiated.err, "initialize failed")) << negotiated.err;
  EXPECT_FALSE(Contains(negotiated.err, "server/discover")) << negotiated.err;
  EXPECT_TRUE(Contains(negotiated.err, "the server exited with status 3")) << negotiated.err;
  EXPECT_TRUE(Contains(negotiated.err, "--diagnostics shows")) << negotiated.err;
  EXPECT_FALSE(Contains(negotiated.err, kStderrMarker)) << negotiated.err;
  EXPECT_FALSE(dir_.Read("tools.json").size() > 0);

  ProcessResult diagnosed = Run({"capture", "--server", "demo", "-o", dir_.File("tools.json"), "--protocol-version",
                                 "2025-11-25", "--diagnostics", "--json"},
                                3);
  EXPECT_TRUE(Contains(diagnosed.err, std::string("diagnostics: server demo: server stderr: ") + kStderrMarker))
      << diagnosed.err;
  EXPECT_TRUE(Contains(diagnosed.err, "diagnostics: server demo: transport: ")) << diagnosed.err;
  EXPECT_FALSE(Contains(diagnosed.out, kStderrMarker)) << diagnosed.out;
  json::Value out = json::Parse(diagnosed.out).value();
  EXPECT_EQ(out["code"], "server.connect_failed");
  EXPECT_EQ(out["details"]["exit"], "exited with status 3");

  UseCommand("/bin/sh", {"-c", "kill -9 $$"});
  ProcessResult killed = Run({"capture", "--server", "demo", "-o", dir_.File("tools.json"), "--protocol-version",
                              "2025-11-25"},
                             3);
  EXPECT_TRUE(Contains(killed.err, "initialize failed")) << killed.err;
  EXPECT_TRUE(Contains(killed.err, "was killed by signal 9 (SIGKILL)")) << killed.err;
}

TEST_F(DiagnosticsTest, TheGatesConnectStepSaysWhyAndShowsTheStderrTail) {
  UseDemo({});
  CaptureAndReviewRender();
  UseCommand("/bin/sh", {"-c", std::string("echo ") + kStderrMarker + " >&2; exit 7"});
  ProcessResult verify = Run(With(Gate("verify"), {"--diagnostics"}), 3);
  EXPECT_TRUE(Contains(verify.err, "initialize failed")) << verify.err;
  EXPECT_TRUE(Contains(verify.err, "the server exited with status 7")) << verify.err;
  EXPECT_TRUE(Contains(verify.err, std::string("diagnostics: server stderr: ") + kStderrMarker)) << verify.err;
}

TEST_F(DiagnosticsTest, RefusalsInTextShowWhatJsonKnows) {
  UseDemo({});
  CaptureAndReviewRender();

  UseDemo({"--fault", "description"});
  ProcessResult drift = Run(Gate("call"), 3);
  EXPECT_TRUE(Contains(drift.err, "[catalog.tool_drift]")) << drift.err;
  EXPECT_TRUE(Contains(drift.err, "  differs at /description (")) << drift.err;

  UseDemo({"--fault", "server-version"});
  ProcessResult info = Run(Gate("call"), 3);
  EXPECT_TRUE(Contains(info.err, "[server.server_info_mismatch]")) << info.err;
  EXPECT_TRUE(Contains(info.err, "  serverInfo/version: reviewed \"")) << info.err;
  EXPECT_TRUE(Contains(info.err, "\", live \"")) << info.err;
  // The values are for people: --json keeps the pointers only.
  ProcessResult info_json = Run(With(Gate("call"), {"--json"}), 3);
  const json::Value details = json::Parse(info_json.out).value()["details"];
  EXPECT_EQ(details["pointers"][0]["pointer"], "/version");
  EXPECT_FALSE(details.contains("serverInfo")) << info_json.out;

  UseDemo({});
  ProcessResult invalid = Run(Gate("call", "render_turntable", R"({"angles":4,"resolution":1024})"), 3);
  EXPECT_TRUE(Contains(invalid.err, "[input.schema_violation]")) << invalid.err;
  EXPECT_TRUE(Contains(invalid.err, "  at (root): keyword required: a required property is missing: \"source\""))
      << invalid.err;
  ProcessResult json_form = Run(With(Gate("call", "render_turntable", R"({"angles":4,"resolution":1024})"), {"--json"}), 3);
  EXPECT_EQ(json::Parse(json_form.out).value()["details"]["errors"][0]["property"], "source");
}

// An HTTP peer that answers every request with 503 until destroyed.
class Always503 {
 public:
  Always503() : fd_(testing::ListenOnLoopback(port_)) {
    thread_ = std::thread([this] {
      while (true) {
        const int client = accept(fd_, nullptr, nullptr);
        if (client < 0) return;
        char buffer[4096];
        (void)!read(client, buffer, sizeof buffer);
        const std::string answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        (void)!write(client, answer.data(), answer.size());
        close(client);
      }
    });
  }
  ~Always503() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  int port() const { return port_; }

 private:
  int port_ = 0;
  int fd_ = -1;
  std::thread thread_;
};

TEST_F(DiagnosticsTest, AnHttpFailureShowsItsStatus) {
  Always503 peer;
  ASSERT_GT(peer.port(), 0);
  json::Value config = {
      {"mcpServers", {{"demo", {{"url", "http://127.0.0.1:" + std::to_string(peer.port()) + "/mcp"}}}}}};
  dir_.Write("mcp.json", config.dump());
  ProcessResult capture = Run({"capture", "--server", "demo", "-o", dir_.File("tools.json"), "--protocol-version",
                               "2025-11-25", "--diagnostics"},
                              3);
  EXPECT_TRUE(Contains(capture.err, "initialize failed")) << capture.err;
  EXPECT_TRUE(Contains(capture.err, "\n  HTTP status 503\n")) << capture.err;
  EXPECT_TRUE(Contains(capture.err, "diagnostics: server demo: transport: mcp.http_status; HTTP status 503"))
      << capture.err;
}

TEST_F(DiagnosticsTest, AnUnreachableHttpServerNamesTheCurlError) {
  const int port = testing::FreeLoopbackPort();
  json::Value config = {{"mcpServers", {{"demo", {{"url", "http://127.0.0.1:" + std::to_string(port) + "/mcp"}}}}}};
  dir_.Write("mcp.json", config.dump());
  ProcessResult capture = Run({"capture", "--server", "demo", "-o", dir_.File("tools.json"), "--protocol-version",
                               "2025-11-25", "--diagnostics"},
                              3);
  EXPECT_TRUE(Contains(capture.err, "curl error 7 (Couldn't connect to server)")) << capture.err;
}

TEST_F(DiagnosticsTest, ContentOfAToolWithoutOutputSchemaIsCountedNotShown) {
  UseDemo({"--fixtures", "conformance"});
  CaptureAndReview("test_simple_text", {});
  const json::Value manifest = json::Parse(dir_.Read("tools.json")).value();
  bool found = false;
  for (const json::Value& page : manifest["servers"]["demo"]["toolPages"]) {
    for (const json::Value& tool : page["tools"]) {
      if (tool["name"] == "test_simple_text") {
        found = true;
        EXPECT_FALSE(tool.contains("outputSchema"));
      }
    }
  }
  ASSERT_TRUE(found);
  ProcessResult call = Run(Gate("call", "test_simple_text", "{}"), 0);
  EXPECT_EQ(call.out, "null\n");
  EXPECT_TRUE(Contains(call.err, "1 content block(s) not shown: the tool declares no outputSchema")) << call.err;
  EXPECT_FALSE(Contains(call.err, "simple text response")) << call.err;
}

TEST_F(DiagnosticsTest, ProgressOnlyOnATerminalAndNeverWithJson) {
  UseDemo({});
  ProcessResult capture =
      RunOnTerminal({"capture", "--server", "demo", "-o", dir_.File("tools.json"), "--protocol-version", "2025-11-25"}, 0);
  EXPECT_TRUE(Contains(capture.out, "udon-mcp: capture: server demo: opening")) << capture.out;
  EXPECT_TRUE(Contains(capture.out, " page(s), ")) << capture.out;
  CaptureAndReviewRender();

  ProcessResult probe = RunOnTerminal(With(Gate("probe"), {"--repeat", "2"}), 0);
  EXPECT_TRUE(Contains(probe.out, "udon-mcp: probe: 1/2 repetition(s) done")) << probe.out;
  EXPECT_TRUE(Contains(probe.out, "udon-mcp: probe: 2/2 repetition(s) done")) << probe.out;
  ProcessResult probe_json = RunOnTerminal(With(Gate("probe"), {"--repeat", "2", "--json"}), 0);
  EXPECT_FALSE(Contains(probe_json.out, "repetition(s) done")) << probe_json.out;
  ProcessResult probe_pipe = Run(With(Gate("probe"), {"--repeat", "2"}), 0);
  EXPECT_FALSE(Contains(probe_pipe.err, "repetition(s) done")) << probe_pipe.err;

  ProcessResult capture_pipe = Run({"capture", "--server", "demo", "-o", dir_.File("other.json")}, 0);
  EXPECT_FALSE(Contains(capture_pipe.err, "udon-mcp: capture:")) << capture_pipe.err;
}

// A slow, paginated catalog shows its listing page by page on a terminal.
TEST_F(DiagnosticsTest, CaptureOfASlowCatalogShowsPagesSoFar) {
  UseDemo({"--synthetic-tools", "40", "--page-size", "5", "--list-delay-ms", "100"});
  ProcessResult capture =
      RunOnTerminal({"capture", "--server", "demo", "-o", dir_.File("tools.json"), "--protocol-version", "2025-11-25"}, 0);
  EXPECT_TRUE(Contains(capture.out, "udon-mcp: capture: server demo: listing, ")) << capture.out;
  EXPECT_TRUE(Contains(capture.out, " tool(s) so far")) << capture.out;
}

TEST_F(DiagnosticsTest, RunShowsItsStepsOnATerminalAndTakesTheFlag) {
  UseDemo({});
  CaptureAndReviewRender();
  dir_.Write("flow.uws.yaml", R"(uws: 1.9.1
info: {title: one render, version: '1.0.0'}
operations:
  - operationId: render
    x-uws-operation-profile: openudon.mcp-tool-call.0.1
    x-openudon-mcp: {manifest: ./tools.json, manifestSha256: )" + Sha() + R"(, server: demo, tool: render_turntable}
    request: {body: {source: 'https://assets.example.test/a.blend', angles: 4, resolution: 1024}}
    outputs: {first: $response.body#/renderedUris/0}
workflows:
  - workflowId: main
    type: sequence
    steps:
      - {stepId: views, operationRef: render}
)");
  ProcessResult shown = RunOnTerminal({"run", dir_.File("flow.uws.yaml")}, 0);
  EXPECT_TRUE(Contains(shown.out, "udon-mcp: run: step 1: main/views")) << shown.out;
  ProcessResult piped = Run({"run", dir_.File("flow.uws.yaml")}, 0);
  EXPECT_FALSE(Contains(piped.err, "udon-mcp: run: step")) << piped.err;

  UseDemo({"--fault", "call-is-error"});
  ProcessResult failed = Run({"run", dir_.File("flow.uws.yaml")}, 4);
  EXPECT_TRUE(Contains(failed.err, "--diagnostics shows")) << failed.err;
  ProcessResult diagnosed = Run({"run", dir_.File("flow.uws.yaml"), "--diagnostics", "--json"}, 4);
  EXPECT_TRUE(Contains(diagnosed.err, "udon-mcp: diagnostics: a call: tool error: injected tool error")) << diagnosed.err;
  EXPECT_FALSE(Contains(diagnosed.out, "injected tool error")) << diagnosed.out;
}

}  // namespace
}  // namespace udon
