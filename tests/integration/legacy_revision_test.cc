// 2024-11-05 over stdio, end to end (issue 30, section 0): a release of server-memory built
// on an SDK that negotiates only 2024-11-05 (pinned in tests/package.json as
// server-memory-2024) is captured, reviewed, called through the gate and served; the demo
// server made to answer 2024-11-05 is spoken to over stdio and refused over HTTP, where that
// revision's HTTP+SSE transport is not spoken.
#include <sys/prctl.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "demo_http.h"
#include "json/json.h"
#include "line_client.h"
#include "serve_fixture.h"
#include "test_support.h"

namespace udon::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kOldMemory = "server-memory-2024";
constexpr const char* kOldRevision = "2024-11-05";

// The demo server, legacy era only, answering every initialize with 2024-11-05.
Json Grams() { return {{"value", 2}, {"from", "kg"}, {"to", "g"}}; }
const std::vector<std::string> kOldDemoArgs = {"--era", "legacy", "--fault", "protocol-version=2024-11-05"};

class LegacyRevisionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }
  void TearDown() override { EXPECT_TRUE(Descendants(getpid()).empty()) << "a child process survived"; }

  ProcessResult Udon(const ReviewedDemo& reviewed, std::vector<std::string> args) {
    args.insert(args.begin(), UdonMcpBinary());
    args.insert(args.end(), {"--config", reviewed.config, "--state-dir", reviewed.state_dir, "--json"});
    return RunProcess(args);
  }

  ProcessResult Call(const ReviewedDemo& reviewed, const std::string& server, const std::string& tool,
                     const Json& arguments, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"call",   "--manifest", reviewed.manifest, "--sha256", reviewed.sha256,
                                     "--server", server,     "--tool",          tool,       "--args",
                                     arguments.dump()};
    args.insert(args.end(), extra.begin(), extra.end());
    return Udon(reviewed, args);
  }

  Json Manifest() const { return Json::parse(dir_.Read("tools.json")); }

  TempDir dir_;
};

TEST_F(LegacyRevisionTest, AnOldServerMemoryIsCapturedReviewedCalledAndServed) {
  UDON_REQUIRE_PEERS();
  if (!fs::exists(PeerModuleDir(kOldMemory) + "/package.json")) {
    if (std::getenv("CI") != nullptr) FAIL() << kOldMemory << " missing: npm ci in tests/";
    GTEST_SKIP() << kOldMemory << " not installed (npm ci in tests/)";
  }
  const Json memory = {{"command", NodeBinary()},
                       {"args", {PeerModuleDir(kOldMemory) + "/dist/index.js"}},
                       {"env", {{"MEMORY_FILE_PATH", dir_.File("memory.json")}}}};
  ReviewedDemo reviewed(dir_, Json{{"memory", memory}});
  ASSERT_TRUE(reviewed.ok()) << reviewed.failure;
  const Json manifest = Manifest();
  EXPECT_EQ(manifest["protocolVersion"], kOldRevision);
  for (const Json& tool : manifest["servers"]["memory"]["toolPages"][0]["tools"]) {
    EXPECT_FALSE(tool.contains("outputSchema") || tool.contains("annotations") || tool.contains("title"))
        << tool.dump();
  }

  ProcessResult call = Call(reviewed, "memory", "read_graph", Json::object());
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  EXPECT_TRUE(Json::parse(call.out)["structuredContent"].is_null()) << call.out;
  // Outputs need an outputSchema, which no 2024-11-05 tool has: refused before dispatch.
  ProcessResult outputs = Call(reviewed, "memory", "read_graph", Json::object(), {"--expect-output"});
  EXPECT_EQ(outputs.exit_code, 3) << outputs.out;
  EXPECT_EQ(Json::parse(outputs.out)["code"], "binding.output_schema_required") << outputs.out;

  // serve: the host speaks 2025-11-25 to the gateway, the gateway 2024-11-05 upstream.
  LineClient host(reviewed.ServeArgv());
  host.Send(InitializeRequest(1));
  auto initialized = host.ReadResponse(1);
  ASSERT_TRUE(initialized) << host.Stderr();
  EXPECT_EQ((*initialized)["result"]["protocolVersion"], "2025-11-25");
  host.Send(Notification("notifications/initialized"));
  host.Send(Request(2, "tools/call", {{"name", "read_graph"}, {"arguments", Json::object()}}));
  auto served = host.ReadResponse(2);
  ASSERT_TRUE(served) << host.Stderr();
  EXPECT_FALSE((*served)["result"].value("isError", false)) << served->dump();
  EXPECT_TRUE((*served)["result"]["content"].is_array()) << served->dump();
  host.CloseInput();
  EXPECT_EQ(host.Wait(), 0) << host.Stderr();
}

TEST_F(LegacyRevisionTest, OverStdioAServerAnswering2024IsSpokenTo) {
  ReviewedDemo reviewed(dir_, kOldDemoArgs);
  ASSERT_TRUE(reviewed.ok()) << reviewed.failure;
  EXPECT_EQ(Manifest()["protocolVersion"], kOldRevision);
  ProcessResult call = Call(reviewed, "demo", "convert_units", Grams());
  EXPECT_EQ(call.exit_code, 0) << call.out << call.err;
}

// Over HTTP 2024-11-05 is neither asked for nor accepted: capture and the gate alike.
TEST_F(LegacyRevisionTest, OverHttpTheRevisionIsRefusedAsAVersionMismatch) {
  ReviewedDemo reviewed(dir_, kOldDemoArgs);
  ASSERT_TRUE(reviewed.ok()) << reviewed.failure;
  HttpDemoServer http(kOldDemoArgs);
  ASSERT_NE(http.port(), 0);
  reviewed.Reconfigure(Json{{"demo", {{"url", http.url()}}}});

  ProcessResult answered = Udon(reviewed, {"capture", "--server", "demo", "-o", dir_.File("http.json")});
  EXPECT_EQ(answered.exit_code, 3) << answered.out << answered.err;
  const Json answer = Json::parse(answered.out);
  EXPECT_EQ(answer["code"], "server.protocol_version_mismatch") << answered.out;
  EXPECT_EQ(answer["details"]["answered"], kOldRevision) << answered.out;
  EXPECT_EQ(answer["details"]["transport"], "http") << answered.out;

  ProcessResult asked = Udon(reviewed, {"capture", "--server", "demo", "-o", dir_.File("http.json"),
                                        "--protocol-version", kOldRevision});
  EXPECT_EQ(Json::parse(asked.out)["details"]["requested"], kOldRevision) << asked.out;
  EXPECT_FALSE(fs::exists(dir_.File("http.json")));

  // The stdio manifest's revision, pointed at the HTTP endpoint: the gate refuses it too.
  ProcessResult gated = Call(reviewed, "demo", "convert_units", Grams());
  EXPECT_EQ(gated.exit_code, 3) << gated.out;
  EXPECT_EQ(Json::parse(gated.out)["code"], "server.protocol_version_mismatch") << gated.out;
}

}  // namespace
}  // namespace udon::testing
