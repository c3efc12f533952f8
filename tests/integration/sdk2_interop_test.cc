// Interoperability with the official TypeScript SDK 2.x client (@modelcontextprotocol/client,
// pinned in tests/package.json) against the demo server, in both protocol eras, over stdio
// and Streamable HTTP. The peer script is tests/peers/sdk2_client.mjs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "demo_http.h"
#include "json/json.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

struct Sdk2Run {
  int exit_code = -1;
  Json report;
};

Sdk2Run RunSdk2Client(std::vector<std::string> args) {
  std::vector<std::string> argv = {NodeBinary(), SourceDir() + "/tests/peers/sdk2_client.mjs"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult result = RunProcess(argv);
  auto report = json::Parse(result.out);
  EXPECT_TRUE(report.ok()) << result.out << result.err;
  return {result.exit_code, report.ok() ? *report : Json()};
}

std::vector<std::string> CallConvert(const std::string& era) {
  return {"--era", era, "--call", "convert_units", "--arguments",
          R"({"value":2,"from":"kg","to":"g"})"};
}

// `era` as the client asks for it, and the era a dual-era server then serves.
void ExpectServed(const Sdk2Run& run, const std::string& era) {
  ASSERT_EQ(run.exit_code, 0) << run.report;
  const bool modern = era != "legacy";
  EXPECT_EQ(run.report["era"], modern ? "modern" : "legacy");
  EXPECT_EQ(run.report["protocolVersion"], modern ? "2026-07-28" : "2025-11-25");
  EXPECT_EQ(run.report["serverInfo"]["name"], "udon-mcp-demo-server");
  EXPECT_EQ(run.report["tools"],
            Json({"render_turntable", "analyze_text", "convert_units", "summarize", "slow_count",
                  "async_render", "append_ledger"}));
  // The SDK validates structuredContent against the tool's outputSchema: "ok" is a pass.
  const Json& call = run.report["call"];
  ASSERT_TRUE(call.contains("ok")) << call;
  EXPECT_EQ(call["ok"]["structuredContent"]["value"], 2000.0);
  if (modern) {
    EXPECT_EQ(run.report["supportedVersions"][0], "2026-07-28");
    EXPECT_EQ(call["ok"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "udon-mcp-demo-server");
  }
}

class Sdk2Interop : public ::testing::TestWithParam<std::string> {};

TEST_P(Sdk2Interop, StdioServesTheEraTheClientChooses) {
  UDON_REQUIRE_PEERS();
  std::vector<std::string> args = CallConvert(GetParam());
  args.insert(args.end(), {"--stdio", DemoServerBinary(), "--page-size", "3"});
  ExpectServed(RunSdk2Client(args), GetParam());
}

TEST_P(Sdk2Interop, HttpServesTheEraTheClientChooses) {
  UDON_REQUIRE_PEERS();
  for (const char* mode : {"sse", "json"}) {
    SCOPED_TRACE(mode);
    HttpDemoServer server({"--page-size", "2", "--response-mode", mode});
    ASSERT_GT(server.port(), 0) << server.process().Output();
    std::vector<std::string> args = CallConvert(GetParam());
    args.push_back("--url");
    args.push_back(server.url());
    ExpectServed(RunSdk2Client(args), GetParam());
  }
}

INSTANTIATE_TEST_SUITE_P(Eras, Sdk2Interop, ::testing::Values("modern", "auto", "legacy"),
                         [](const ::testing::TestParamInfo<std::string>& param_info) { return param_info.param; });

TEST(Sdk2InteropEras, APinnedModernClientFailsOnALegacyOnlyServer) {
  UDON_REQUIRE_PEERS();
  Sdk2Run run = RunSdk2Client({"--era", "modern", "--stdio", DemoServerBinary(), "--era", "legacy"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.report["error"]["code"], "ERA_NEGOTIATION_FAILED");
}

TEST(Sdk2InteropEras, AutoFallsBackToInitializeOnALegacyOnlyServer) {
  UDON_REQUIRE_PEERS();
  std::vector<std::string> args = CallConvert("auto");
  args.insert(args.end(), {"--stdio", DemoServerBinary(), "--era", "legacy"});
  Sdk2Run run = RunSdk2Client(args);
  ASSERT_EQ(run.exit_code, 0) << run.report;
  EXPECT_EQ(run.report["era"], "legacy");
}

TEST(Sdk2InteropEras, ALegacyClientSeesTheModernOnlyServersVersions) {
  UDON_REQUIRE_PEERS();
  Sdk2Run run = RunSdk2Client({"--era", "legacy", "--stdio", DemoServerBinary(), "--era", "modern"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.report["error"]["code"], -32022);
  EXPECT_NE(run.report["error"]["message"].get<std::string>().find("2026-07-28"), std::string::npos);
}

}  // namespace
}  // namespace udon::testing
