// Hosts we did not write, talking to `udon-mcp serve` in front of the demo server: the
// official TypeScript SDK clients 1.x (tests/peers/sdk_client.mjs) and 2.x
// (tests/peers/sdk2_client.mjs, every era) and the MCP Inspector CLI
// (@modelcontextprotocol/inspector-cli), each pinned in tests/package.json, over stdio and
// Streamable HTTP. They list exactly the reviewed tools and call them through the gate; the
// SDKs validate each structuredContent against the reviewed outputSchema.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "conformance_runner.h"
#include "json/json.h"
#include "serve_fixture.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

constexpr const char* kInspectorCli = "@modelcontextprotocol/inspector-cli";

// What serve must offer: the tools of the captured manifest that carry a review, in page
// order (the fixture leaves a tool that requires task support unreviewed).
std::vector<std::string> ReviewedNames(const ReviewedDemo& demo, const TempDir& dir) {
  std::vector<std::string> names;
  auto document = json::Parse(dir.Read("tools.json"));
  EXPECT_TRUE(document.ok()) << demo.manifest;
  if (!document.ok()) return names;
  const Json& server = (*document)["servers"]["demo"];
  for (const Json& page : server["toolPages"]) {
    for (const Json& tool : page["tools"]) {
      if (server["reviews"].contains(tool["name"].get<std::string>())) names.push_back(tool["name"]);
    }
  }
  return names;
}

struct PeerRun {
  int exit_code = -1;
  Json report;
  std::string err;
};

// Runs a peer script of tests/peers with `args`; its stdout is one JSON document.
PeerRun RunPeer(const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {NodeBinary(), SourceDir() + "/tests/peers/" + script};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult result = RunProcess(argv, PinnedNodeOptions());
  auto report = json::Parse(result.out);
  EXPECT_TRUE(report.ok()) << result.out << result.err;
  return {result.exit_code, report.ok() ? *report : Json(), result.err};
}

// A captured, reviewed and pinned demo server per test, and what serve must offer for it;
// StartHttp adds `udon-mcp serve --transport http` in front of it.
class ServeInterop : public ::testing::Test {
 protected:
  void SetUp() override {
    UDON_REQUIRE_PEERS();
    ASSERT_TRUE(demo_.ok()) << demo_.failure;
    reviewed_ = ReviewedNames(demo_, dir_);
  }
  void StartHttp() {
    gateway_ = std::make_unique<HttpGateway>(demo_);
    ASSERT_GT(gateway_->port(), 0) << gateway_->process().Output();
  }
  // serve over stdio as a peer starts it: the command line after `prefix`.
  std::vector<std::string> StdioArgs(std::vector<std::string> prefix) const {
    for (const std::string& arg : demo_.ServeArgv()) prefix.push_back(arg);
    return prefix;
  }

  TempDir dir_;
  ReviewedDemo demo_{dir_};
  std::vector<std::string> reviewed_;
  std::unique_ptr<HttpGateway> gateway_;
};

// The SDK 1.x peer's report: the gateway's serverInfo, every reviewed tool on one page, the
// four calls it makes validated by the SDK, progress relayed from upstream, ping answered.
void ExpectSdk1Served(const PeerRun& run, const std::vector<std::string>& reviewed) {
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json& report = run.report;
  EXPECT_EQ(report["serverVersion"]["name"], "udon-mcp-serve");
  ASSERT_EQ(report["pages"].size(), 1u) << report["pages"];
  EXPECT_EQ(report["pages"][0], Json(reviewed));
  // The SDK validates structuredContent against each reviewed outputSchema: "ok" is a pass.
  for (const char* tool : {"render_turntable", "analyze_text", "convert_units", "slow_count"}) {
    ASSERT_TRUE(report["calls"][tool].contains("ok")) << tool << report["calls"][tool];
    EXPECT_FALSE(report["calls"][tool]["ok"].value("isError", false)) << tool << report["calls"][tool];
  }
  EXPECT_EQ(report["calls"]["render_turntable"]["ok"]["structuredContent"]["renderedUris"].size(), 3u);
  EXPECT_EQ(report["calls"]["convert_units"]["ok"]["structuredContent"]["value"], 2000.0);
  EXPECT_FALSE(report["progress"].empty()) << "the upstream's progress reaches the host";
  EXPECT_TRUE(report["ping"].get<bool>());
}

TEST_F(ServeInterop, Sdk1ClientOverStdio) {
  ExpectSdk1Served(RunPeer("sdk_client.mjs", StdioArgs({"stdio"})), reviewed_);
}

TEST_F(ServeInterop, Sdk1ClientOverHttp) {
  ASSERT_NO_FATAL_FAILURE(StartHttp());
  PeerRun run = RunPeer("sdk_client.mjs", {"http", gateway_->url()});
  ExpectSdk1Served(run, reviewed_);
  EXPECT_EQ(run.report["protocolVersion"], "2025-11-25");
  EXPECT_FALSE(run.report["sessionId"].is_null());
}

// Issue #31: at 64 SDK sessions serve stopped answering new ones (each session's GET stream
// held one of its 64 connection threads). 96 sessions hold their GET streams open; a
// newcomer lists and calls, and so does each of them.
TEST_F(ServeInterop, ManySdkSessionsWithGetStreamsLeaveEveryoneServed) {
  ASSERT_NO_FATAL_FAILURE(StartHttp());
  constexpr int kSessions = 96;
  PeerRun run = RunPeer("sdk_sessions.mjs", {gateway_->url(), std::to_string(kSessions)});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.report["sessions"], kSessions) << run.report;
  EXPECT_EQ(run.report["streams"], kSessions);
  ASSERT_TRUE(run.report["newcomer"].contains("ok")) << run.report;
  EXPECT_EQ(run.report["newcomer"]["ok"]["tools"], Json(reviewed_));
  EXPECT_EQ(run.report["newcomer"]["ok"]["value"], 2000.0);
  EXPECT_EQ(run.report["callsOk"], kSessions);
}

std::vector<std::string> Sdk2CallConvert(const std::string& era) {
  return {"--era", era, "--call", "convert_units", "--arguments", R"({"value":2,"from":"kg","to":"g"})"};
}

// `era` as the SDK 2.x client asks for it; the gateway serves both eras, so anything but
// legacy is modern. In the modern era the result's _meta carries the gateway's own
// serverInfo, never the upstream's.
void ExpectSdk2Served(const PeerRun& run, const std::string& era, const std::vector<std::string>& reviewed) {
  ASSERT_EQ(run.exit_code, 0) << run.report << run.err;
  const bool modern = era != "legacy";
  EXPECT_EQ(run.report["era"], modern ? "modern" : "legacy");
  EXPECT_EQ(run.report["protocolVersion"], modern ? "2026-07-28" : "2025-11-25");
  EXPECT_EQ(run.report["serverInfo"]["name"], "udon-mcp-serve");
  EXPECT_EQ(run.report["tools"], Json(reviewed));
  // The SDK validates structuredContent against the reviewed outputSchema: "ok" is a pass.
  const Json& call = run.report["call"];
  ASSERT_TRUE(call.contains("ok")) << call;
  EXPECT_FALSE(call["ok"].value("isError", false)) << call;
  EXPECT_EQ(call["ok"]["structuredContent"]["value"], 2000.0);
  if (modern) {
    EXPECT_EQ(run.report["supportedVersions"][0], "2026-07-28");
    EXPECT_EQ(call["ok"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "udon-mcp-serve") << call;
  } else {
    EXPECT_FALSE(call["ok"].contains("_meta") && call["ok"]["_meta"].contains("io.modelcontextprotocol/serverInfo"))
        << "a legacy host sees no era members: " << call;
  }
}

TEST_F(ServeInterop, Sdk2ClientOverStdioInEveryEra) {
  for (const char* era : {"modern", "auto", "legacy"}) {
    SCOPED_TRACE(era);
    std::vector<std::string> args = Sdk2CallConvert(era);
    args.push_back("--stdio");
    ExpectSdk2Served(RunPeer("sdk2_client.mjs", StdioArgs(args)), era, reviewed_);
  }
}

TEST_F(ServeInterop, Sdk2ClientOverHttpInEveryEra) {
  ASSERT_NO_FATAL_FAILURE(StartHttp());
  for (const char* era : {"modern", "auto", "legacy"}) {
    SCOPED_TRACE(era);
    std::vector<std::string> args = Sdk2CallConvert(era);
    args.push_back("--url");
    args.push_back(gateway_->url());
    ExpectSdk2Served(RunPeer("sdk2_client.mjs", args), era, reviewed_);
  }
}

// The Inspector CLI as its users start it: the package's bin, a host config file whose one
// entry runs `udon-mcp serve` (or names its URL), one method per run; it prints the method's
// result as JSON. It reads its own identity from ../package.json of its working directory,
// so it runs in tests/peers.
PeerRun RunInspector(const std::string& host_config, const std::vector<std::string>& method_args) {
  std::vector<std::string> argv = {NodeBinary(), PeerModuleDir(kInspectorCli) + "/build/cli.js", "--cli",
                                   "--config", host_config, "--server", "udon"};
  argv.insert(argv.end(), method_args.begin(), method_args.end());
  RunOptions options = PinnedNodeOptions();
  options.cwd = SourceDir() + "/tests/peers";
  ProcessResult result = RunProcess(argv, options);
  auto report = json::Parse(result.out);
  EXPECT_TRUE(report.ok()) << result.out << result.err;
  return {result.exit_code, report.ok() ? *report : Json(), result.err};
}

// UDON_REQUIRE_INSTALLED: conformance_runner.h.
#define UDON_REQUIRE_INSPECTOR() \
  UDON_REQUIRE_INSTALLED(PeerModuleDir(kInspectorCli) + "/build/cli.js", "the Inspector CLI peer")

// Lists, then calls convert_units (the CLI converts "2" to a number from the listed
// inputSchema, as it does for its users); the CLI's SDK validates the structuredContent.
void ExpectInspectorServed(const TempDir& dir, const Json& entry, const std::vector<std::string>& reviewed) {
  dir.Write("host.json", Json{{"mcpServers", {{"udon", entry}}}}.dump(2));
  const std::string host_config = dir.File("host.json");
  PeerRun listed = RunInspector(host_config, {"--method", "tools/list"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  std::vector<std::string> names;
  for (const Json& tool : listed.report["tools"]) names.push_back(tool["name"]);
  EXPECT_EQ(names, reviewed);
  PeerRun called = RunInspector(host_config, {"--method", "tools/call", "--tool-name", "convert_units", "--tool-arg",
                                              "value=2", "--tool-arg", "from=kg", "--tool-arg", "to=g"});
  ASSERT_EQ(called.exit_code, 0) << called.err;
  EXPECT_FALSE(called.report.value("isError", false)) << called.report;
  EXPECT_EQ(called.report["structuredContent"]["value"], 2000.0) << called.report;
}

TEST_F(ServeInterop, InspectorCliOverStdio) {
  UDON_REQUIRE_INSPECTOR();
  std::vector<std::string> argv = StdioArgs({});
  const std::string command = argv.front();
  argv.erase(argv.begin());
  ExpectInspectorServed(dir_, {{"command", command}, {"args", argv}}, reviewed_);
}

TEST_F(ServeInterop, InspectorCliOverHttp) {
  UDON_REQUIRE_INSPECTOR();
  ASSERT_NO_FATAL_FAILURE(StartHttp());
  ExpectInspectorServed(dir_, {{"type", "streamable-http"}, {"url", gateway_->url()}}, reviewed_);
}

// Real hosts (Claude Code and Gemini CLI, pinned in tests/package.json) with a gateway that
// refuses to start (a wrong pin). Each host's `mcp list` starts every configured stdio server
// and initializes it, offline, in a throwaway HOME with updates and telemetry off. Before
// issue 29 item 9 the hosts showed only "Connection closed" / "Disconnected".
class RealHostRefusal : public ServeInterop {
 protected:
  // serve's argv with a pin that does not match.
  std::vector<std::string> WrongPinArgv() const {
    std::vector<std::string> argv = demo_.ServeArgv();
    *(std::find(argv.begin(), argv.end(), "--sha256") + 1) = std::string(64, 'a');
    return argv;
  }
  // What the gateway answered, kept by a tee between it and the host.
  Json ViaTee(const std::vector<std::string>& argv) const {
    Json args = {"-c", "\"$0\" \"$@\" | tee " + dir_.File("answers.jsonl")};
    for (const std::string& arg : argv) args.push_back(arg);
    return {{"command", "/bin/sh"}, {"args", args}};
  }
  std::vector<Json> Answers() const {
    std::vector<Json> answers;
    const std::string text = dir_.Read("answers.jsonl");
    for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1) {
      auto parsed = json::Parse(text.substr(at, end - at));
      if (parsed.ok()) answers.push_back(*parsed);
    }
    return answers;
  }
  RunOptions HostOptions(const std::string& home) const {
    RunOptions options = PinnedNodeOptions();
    options.env["HOME"] = home;
    options.env["XDG_CONFIG_HOME"] = home + "/.config";
    options.env["DISABLE_AUTOUPDATER"] = "1";
    options.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1";
    options.env["DISABLE_TELEMETRY"] = "1";
    options.env["DISABLE_ERROR_REPORTING"] = "1";
    options.unset_env = {"CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"};
    options.cwd = home + "/project";
    options.timeout = std::chrono::seconds(90);
    return options;
  }
  std::string Home() const {
    std::filesystem::create_directories(dir_.File("home/project"));
    std::filesystem::create_directories(dir_.File("home/.gemini"));
    return dir_.File("home");
  }
};

constexpr const char* kFixedMessage = "manifest.digest_mismatch: ";

TEST_F(RealHostRefusal, ClaudeCodeShowsTheCodeAndTheFixedMessage) {
  const std::string claude = PeerModuleDir("@anthropic-ai/claude-code") + "/bin/claude.exe";
  UDON_REQUIRE_INSTALLED(claude, "Claude Code (@anthropic-ai/claude-code)");
  const std::string home = Home();
  std::vector<std::string> add = {claude, "mcp", "add", "--scope", "user", "udon", "--"};
  for (const std::string& arg : WrongPinArgv()) add.push_back(arg);
  ProcessResult added = RunProcess(add, HostOptions(home));
  ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
  ProcessResult listed = RunProcess({claude, "mcp", "list"}, HostOptions(home));
  ASSERT_FALSE(listed.timed_out) << listed.out << listed.err;
  std::printf("claude mcp list:\n%s", listed.out.c_str());  // what a user sees, in the test log
  // "udon: ... - ✘ Failed to connect — -32603: manifest.digest_mismatch: the manifest's canonical ..."
  EXPECT_NE(listed.out.find(kFixedMessage), std::string::npos) << listed.out << listed.err;
  EXPECT_EQ(listed.out.find("Connection closed"), std::string::npos) << listed.out;
}

// Gemini CLI's `mcp list` prints a status word only and drops the error it received, so the
// test checks what the gateway answered the requests Gemini sent.
TEST_F(RealHostRefusal, GeminiCliGetsTheCodeAndTheFixedMessageButShowsOnlyDisconnected) {
  const std::string gemini = PeerModuleDir("@google/gemini-cli") + "/bundle/gemini.js";
  UDON_REQUIRE_INSTALLED(gemini, "Gemini CLI (@google/gemini-cli)");
  const std::string home = Home();
  dir_.Write("home/.gemini/settings.json",
             Json{{"mcpServers", {{"udon", ViaTee(WrongPinArgv())}}},
                  {"general", {{"enableAutoUpdate", false}, {"enableAutoUpdateNotification", false}}},
                  {"privacy", {{"usageStatisticsEnabled", false}}},
                  {"telemetry", {{"enabled", false}}}}
                 .dump(2));
  dir_.Write("home/.gemini/trustedFolders.json", Json{{home + "/project", "TRUST_FOLDER"}}.dump());
  ProcessResult listed = RunProcess({NodeBinary(), gemini, "mcp", "list"}, HostOptions(home));
  ASSERT_FALSE(listed.timed_out) << listed.out << listed.err;
  std::printf("gemini mcp list:\n%s%s", listed.out.c_str(), listed.err.c_str());  // what a user sees
  EXPECT_NE((listed.out + listed.err).find("udon"), std::string::npos) << listed.out << listed.err;
  EXPECT_NE((listed.out + listed.err).find("Disconnected"), std::string::npos) << listed.out << listed.err;
  const std::vector<Json> answers = Answers();
  ASSERT_FALSE(answers.empty()) << "the gateway answered nothing: " << listed.out << listed.err;
  for (const Json& answer : answers) {
    EXPECT_EQ(answer["error"]["message"].get<std::string>().rfind(kFixedMessage, 0), 0u) << answer;
  }
}

}  // namespace
}  // namespace udon::testing
