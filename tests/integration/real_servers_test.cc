// udon-mcp as a new user meets it: popular MCP servers from npm (server-filesystem,
// server-memory, pinned in tests/package.json and started with node from tests/node_modules,
// never npx: no network at run time) behind the real binary, configured the way desktop
// clients write their files (issue 17, items 1, 5 and 11).
#include <sys/prctl.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "json/json.h"
#include "test_support.h"

namespace udon {
namespace {

namespace fs = std::filesystem;
using testing::ProcessResult;
using testing::RunOptions;
using testing::TempDir;

constexpr const char* kFilesystem = "@modelcontextprotocol/server-filesystem";
constexpr const char* kMemory = "@modelcontextprotocol/server-memory";

std::string Entry(const char* package) { return testing::PeerModuleDir(package) + "/dist/index.js"; }

// The two servers of this file arrived after the first peers: an older install lacks them.
#define REQUIRE_PEER(package)                                                              \
  do {                                                                                     \
    UDON_REQUIRE_PEERS();                                                                  \
    if (!fs::exists(testing::PeerModuleDir(package) + "/package.json")) {                  \
      if (std::getenv("CI") != nullptr) FAIL() << package << " missing: npm ci in tests/"; \
      GTEST_SKIP() << package << " not installed (npm ci in tests/)";                      \
    }                                                                                      \
  } while (false)

class RealServersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

  void SetUp() override {
    REQUIRE_PEER(kFilesystem);
    REQUIRE_PEER(kMemory);
    fs::create_directories(dir_.File("data"));
    dir_.Write("data/notes.txt", "hello from a real server\n");
  }

  void TearDown() override {
    EXPECT_TRUE(testing::Descendants(getpid()).empty()) << "a child process survived";
  }

  // A server that leaves a marker when started: whatever refuses before spawning must
  // never create it.
  json::Value Marker() const {
    return {{"command", "/bin/sh"}, {"args", {"-c", "touch " + dir_.File("started") + "; exec sleep 30"}}};
  }
  bool MarkerStarted() const { return fs::exists(dir_.File("started")); }

  // A Claude Desktop file: the filesystem server next to entries this shell cannot use.
  void WriteDesktopConfig(json::Value filesystem_extra = json::Value::object()) {
    json::Value filesystem = {{"command", testing::NodeBinary()},
                              {"args", {Entry(kFilesystem), "${FS_ROOT:-" + dir_.File("data") + "}"}}};
    for (const auto& [name, value] : filesystem_extra.items()) filesystem[name] = value;
    json::Value github = Marker();
    github["env"] = {{"GITHUB_PERSONAL_ACCESS_TOKEN", "${env:UDON_TEST_UNSET_TOKEN}"}};
    json::Value notion = {{"url", "https://mcp.notion.example/mcp"},
                          {"headers", {{"Authorization", "Bearer ${UDON_TEST_UNSET_NOTION}"}}}};
    dir_.Write("mcp.json", json::Value({{"mcpServers", {{"filesystem", filesystem},
                                                         {"github", github},
                                                         {"notion", notion}}},
                                        {"globalShortcut", "Ctrl+Space"}})
                               .dump(2));
  }

  ProcessResult Udon(std::vector<std::string> args, const std::string& config = "mcp.json") {
    args.insert(args.begin(), testing::UdonMcpBinary());
    args.insert(args.end(), {"--config", dir_.File(config)});
    RunOptions options;
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    options.unset_env = {"UDON_TEST_UNSET_TOKEN", "UDON_TEST_UNSET_NOTION", "FS_ROOT", "MEMORY_DIR"};
    options.cwd = dir_.path();
    return testing::RunProcess(args, options);
  }

  std::string Digest(const std::string& file) {
    ProcessResult result = testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File(file)});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out.substr(0, 64);
  }

  ProcessResult Review(const std::string& file, const std::string& server, const std::string& tool,
                       const std::vector<std::string>& channels) {
    std::vector<std::string> args = {"review", dir_.File(file), "--server", server, "--tool", tool,
                                     "--reviewer", "tester@example.test", "--headless", "--independent-calls",
                                     "--model-backed", "false", "--no-side-effects", "--concurrency", "safe",
                                     "--reference-based-io"};
    for (const std::string& channel : channels) args.insert(args.end(), {"--channel", channel});
    return Udon(args);
  }

  ProcessResult Call(const std::string& file, const std::string& sha, const std::string& server,
                     const std::string& tool, const std::string& arguments, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"call", "--manifest", dir_.File(file), "--sha256", sha, "--server", server,
                                     "--tool", tool, "--args", arguments, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Udon(args);
  }

  // Capture, review read_text_file and pin: the reviewed state of the happy path.
  std::string CaptureReviewPin() {
    ProcessResult capture = Udon({"capture", "--server", "filesystem", "-o", dir_.File("fs.json")});
    EXPECT_EQ(capture.exit_code, 0) << capture.err;
    ProcessResult review = Review("fs.json", "filesystem", "read_text_file", {"/path=data", "/head=data", "/tail=data"});
    EXPECT_EQ(review.exit_code, 0) << review.err;
    return Digest("fs.json");
  }

  std::string ReadArgs() const { return json::Value({{"path", dir_.File("data/notes.txt")}}).dump(); }

  TempDir dir_;
};

TEST_F(RealServersTest, FilesystemServerCaptureShowCheckPinCall) {
  WriteDesktopConfig();
  ProcessResult capture = Udon({"capture", "--server", "filesystem", "-o", dir_.File("fs.json")});
  ASSERT_EQ(capture.exit_code, 0) << capture.err;
  const json::Value manifest = json::Parse(dir_.Read("fs.json")).value();
  EXPECT_EQ(manifest["servers"]["filesystem"]["serverInfo"]["name"], "secure-filesystem-server");

  // --show prints the tool for reading before anything is asserted about it.
  ProcessResult show = Udon({"review", dir_.File("fs.json"), "--server", "filesystem", "--tool", "read_text_file",
                             "--show"});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("name: read_text_file"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("inputSchema:"), std::string::npos) << show.out;

  ProcessResult unreviewed = Udon({"check", dir_.File("fs.json"), "--server", "filesystem", "--tool",
                                   "read_text_file", "--json"});
  EXPECT_NE(unreviewed.exit_code, 0) << unreviewed.out;
  ASSERT_EQ(Review("fs.json", "filesystem", "read_text_file", {"/path=data", "/head=data", "/tail=data"}).exit_code, 0);
  ProcessResult check = Udon({"check", dir_.File("fs.json"), "--server", "filesystem", "--tool", "read_text_file"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;

  // The pin is the digest people hand to call; the default of ${FS_ROOT:-...} is the root.
  const std::string sha = Digest("fs.json");
  ProcessResult call = Call("fs.json", sha, "filesystem", "read_text_file", ReadArgs());
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  EXPECT_EQ(json::Parse(call.out).value()["structuredContent"]["content"], "hello from a real server\n");
}

TEST_F(RealServersTest, FilesystemServerRefusals) {
  WriteDesktopConfig();
  const std::string sha = CaptureReviewPin();

  // Invalid arguments: refused by the reviewed inputSchema, no value echoed.
  ProcessResult invalid = Call("fs.json", sha, "filesystem", "read_text_file", R"({"file":"secret-name.txt"})");
  EXPECT_EQ(invalid.exit_code, 3) << invalid.out;
  EXPECT_EQ(json::Parse(invalid.out).value()["code"], "input.schema_violation");
  EXPECT_EQ(invalid.out.find("secret-name"), std::string::npos);

  // An unreviewed tool of the same server.
  ProcessResult unreviewed = Call("fs.json", sha, "filesystem", "write_file",
                                  json::Value({{"path", dir_.File("data/x")}, {"content", "x"}}).dump());
  EXPECT_EQ(unreviewed.exit_code, 3);
  EXPECT_EQ(json::Parse(unreviewed.out).value()["code"], "review.missing");
  EXPECT_FALSE(fs::exists(dir_.File("data/x")));

  // A reviewed wording the live server no longer says: drift, by pointer.
  std::string text = dir_.Read("fs.json");
  const std::string needle = "Read the complete contents of a file from the file system as text.";
  ASSERT_NE(text.find(needle), std::string::npos);
  text.replace(text.find(needle), needle.size(), "Reads a file (reviewed wording).");
  dir_.Write("drifted.json", text);
  ProcessResult drift = Call("drifted.json", Digest("drifted.json"), "filesystem", "read_text_file", ReadArgs());
  EXPECT_EQ(drift.exit_code, 3) << drift.out;
  const json::Value out = json::Parse(drift.out).value();
  EXPECT_EQ(out["code"], "catalog.tool_drift");
  EXPECT_EQ(out["details"]["pointers"][0]["pointer"], "/description");

  // A wrong pin: refused before anything starts.
  std::string wrong = sha;
  wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
  EXPECT_EQ(Call("fs.json", wrong, "filesystem", "read_text_file", ReadArgs()).exit_code, 3);
}

// Item 1: the unset tokens of other servers never matter; the server whose token is unset
// is config.invalid naming it and the pointer, and is not started.
TEST_F(RealServersTest, AnUnsetVariableFailsOnlyItsOwnServer) {
  WriteDesktopConfig();
  const std::string sha = CaptureReviewPin();
  EXPECT_EQ(Call("fs.json", sha, "filesystem", "read_text_file", ReadArgs()).exit_code, 0);

  ProcessResult github = Udon({"capture", "--server", "github", "-o", dir_.File("gh.json"), "--json"});
  EXPECT_EQ(github.exit_code, 2) << github.out << github.err;
  json::Value out = json::Parse(github.out).value();
  EXPECT_EQ(out["code"], "config.invalid");
  EXPECT_EQ(out["details"]["server"], "github");
  EXPECT_EQ(out["details"]["variable"], "UDON_TEST_UNSET_TOKEN");
  EXPECT_EQ(out["details"]["pointer"], "/mcpServers/github/env/GITHUB_PERSONAL_ACCESS_TOKEN");
  EXPECT_FALSE(MarkerStarted());

  ProcessResult text = Udon({"capture", "--server", "notion", "-o", dir_.File("n.json")});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.err.find("server 'notion'"), std::string::npos) << text.err;
  EXPECT_NE(text.err.find("/mcpServers/notion/headers/Authorization"), std::string::npos) << text.err;

  // udon-mcp's own variables stay refused whichever server is used.
  json::Value config = json::Parse(dir_.Read("mcp.json")).value();
  config["mcpServers"]["github"]["env"]["STATE"] = "${env:UDON_MCP_STATE}";
  dir_.Write("reserved.json", config.dump());
  ProcessResult reserved = Udon({"capture", "--server", "filesystem", "-o", dir_.File("r.json"), "--json"},
                                "reserved.json");
  EXPECT_EQ(reserved.exit_code, 2);
  EXPECT_EQ(json::Parse(reserved.out).value()["details"]["variable"], "UDON_MCP_STATE");
}

// Item 5: a version udon-mcp does not speak is a usage error before any server starts.
TEST_F(RealServersTest, AnUnspokenProtocolVersionStartsNothing) {
  dir_.Write("mcp.json", json::Value({{"mcpServers", {{"marker", Marker()}}}}).dump());
  for (const std::string version : {"2024-10-07", "latest", ""}) {
    SCOPED_TRACE(version);
    ProcessResult capture =
        Udon({"capture", "--server", "marker", "-o", dir_.File("m.json"), "--protocol-version", version, "--json"});
    EXPECT_EQ(capture.exit_code, 2) << capture.out << capture.err;
    const json::Value out = json::Parse(capture.out).value();
    EXPECT_EQ(out["code"], "usage.invalid");
    EXPECT_NE(out["message"].get<std::string>().find("2025-11-25"), std::string::npos) << capture.out;
    EXPECT_EQ(out["details"]["supported"][0], "2026-07-28");
    EXPECT_FALSE(MarkerStarted());
    EXPECT_FALSE(fs::exists(dir_.File("m.json")));
  }
  // A spoken one passes the check (the marker then fails to answer: not a usage error).
  ProcessResult spoken = Udon({"capture", "--server", "marker", "-o", dir_.File("m.json"), "--protocol-version",
                               "2025-06-18", "--json", "--timeout", "1"});
  EXPECT_NE(json::Parse(spoken.out).value()["code"], "usage.invalid") << spoken.out;
  EXPECT_TRUE(MarkerStarted());
}

// Item 11: VS Code's file (servers, inputs, typed entries) and client-only members.
TEST_F(RealServersTest, VsCodeShapeWithClientOnlyMembers) {
  json::Value memory = {{"type", "stdio"},
                        {"command", testing::NodeBinary()},
                        {"args", {Entry(kMemory)}},
                        {"env", {{"MEMORY_FILE_PATH", "${MEMORY_DIR:-" + dir_.path() + "}/memory.jsonl"}}},
                        {"autoApprove", {"read_graph"}},
                        {"alwaysAllow", {"read_graph"}}};
  json::Value off = Marker();
  off["type"] = "stdio";
  off["disabled"] = true;
  json::Value vscode = {
      {"inputs", {{{"type", "promptString"}, {"id", "api-key"}, {"description", "API key"}, {"password", true}}}},
      {"servers",
       {{"memory", memory},
        {"off", off},
        {"prompted", {{"type", "http"}, {"url", "https://api.example/mcp"},
                      {"headers", {{"Authorization", "Bearer ${input:api-key}"}}}}},
        {"legacy", {{"type", "sse"}, {"url", "https://api.example/sse"}}}}}};
  dir_.Write("mcp.json", vscode.dump(2));

  ASSERT_EQ(Udon({"capture", "--server", "memory", "-o", dir_.File("mem.json")}).exit_code, 0);
  ASSERT_EQ(Review("mem.json", "memory", "read_graph", {}).exit_code, 0);
  ProcessResult call = Call("mem.json", Digest("mem.json"), "memory", "read_graph", "{}");
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  EXPECT_TRUE(json::Parse(call.out).value()["structuredContent"]["entities"].is_array()) << call.out;

  ProcessResult disabled = Udon({"capture", "--server", "off", "-o", dir_.File("off.json"), "--json"});
  EXPECT_EQ(disabled.exit_code, 2);
  EXPECT_EQ(json::Parse(disabled.out).value()["code"], "config.server_unknown");
  EXPECT_FALSE(MarkerStarted());

  ProcessResult prompted = Udon({"capture", "--server", "prompted", "-o", dir_.File("p.json")});
  EXPECT_EQ(prompted.exit_code, 2);
  EXPECT_NE(prompted.err.find("never prompts"), std::string::npos) << prompted.err;
  EXPECT_NE(prompted.err.find("[config.invalid]"), std::string::npos) << prompted.err;

  ProcessResult legacy = Udon({"capture", "--server", "legacy", "-o", dir_.File("l.json")});
  EXPECT_EQ(legacy.exit_code, 2);
  EXPECT_NE(legacy.err.find("HTTP+SSE"), std::string::npos) << legacy.err;
  EXPECT_NE(legacy.err.find("[config.invalid]"), std::string::npos) << legacy.err;
}

// Item 11: a server's "timeout" (milliseconds) is its call timeout unless --timeout is given.
TEST_F(RealServersTest, TimeoutMemberIsTheCallTimeoutUnlessTheFlagIsGiven) {
  WriteDesktopConfig();
  const std::string sha = CaptureReviewPin();
  WriteDesktopConfig({{"timeout", 1}});  // no node server answers initialize within 1 ms
  ProcessResult short_timeout = Call("fs.json", sha, "filesystem", "read_text_file", ReadArgs());
  EXPECT_EQ(short_timeout.exit_code, 3) << short_timeout.out;
  EXPECT_EQ(json::Parse(short_timeout.out).value()["details"]["cause"], "mcp.timeout") << short_timeout.out;
  ProcessResult flag = Call("fs.json", sha, "filesystem", "read_text_file", ReadArgs(), {"--timeout", "60"});
  EXPECT_EQ(flag.exit_code, 0) << flag.out << flag.err;
  // probe (and run) go through the same gate: the member bounds their calls too.
  ProcessResult probe = Udon({"probe", "--manifest", dir_.File("fs.json"), "--sha256", sha, "--server", "filesystem",
                              "--tool", "read_text_file", "--args", ReadArgs(), "--repeat", "1", "--json"});
  EXPECT_EQ(probe.exit_code, 3) << probe.out << probe.err;
  EXPECT_NE(probe.out.find("server.connect_failed"), std::string::npos) << probe.out;
}

// Item 11: Windsurf's serverUrl and "type": "streamable-http" reach a Streamable HTTP server.
TEST_F(RealServersTest, WindsurfServerUrlAndStreamableHttpType) {
  const int port = testing::FreeLoopbackPort();
  RunOptions server_options;
  server_options.env["PORT"] = std::to_string(port);
  testing::BackgroundProcess server(
      {testing::NodeBinary(), "-r", testing::SourceDir() + "/tests/peers/bind-loopback.cjs",
       Entry("@modelcontextprotocol/server-everything"), "streamableHttp"},
      server_options);
  ASSERT_TRUE(testing::WaitForPort(port)) << server.Output();
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/mcp";
  dir_.Write("mcp.json", json::Value({{"mcpServers", {{"windsurf", {{"serverUrl", url}}},
                                                      {"cursor", {{"type", "streamable-http"}, {"url", url}}}}}})
                             .dump());
  for (const std::string key : {"windsurf", "cursor"}) {
    ProcessResult capture = Udon({"capture", "--server", key, "-o", dir_.File(key + ".json")});
    EXPECT_EQ(capture.exit_code, 0) << key << capture.err;
  }
  server.Stop();
}

}  // namespace
}  // namespace udon
