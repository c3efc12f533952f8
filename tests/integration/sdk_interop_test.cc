// Interoperability with a peer we did not write: the official TypeScript SDK client
// (@modelcontextprotocol/sdk, pinned in tests/package.json) against the demo server, over
// stdio and Streamable HTTP. The peer script is tests/peers/sdk_client.mjs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "demo_http.h"
#include "json/json.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

Json RunSdkClient(std::vector<std::string> args) {
  std::vector<std::string> argv = {NodeBinary(), SourceDir() + "/tests/peers/sdk_client.mjs"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult result = RunProcess(argv);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  auto report = json::Parse(result.out);
  EXPECT_TRUE(report.ok()) << result.out << result.err;
  return report.ok() ? *report : Json();
}

void ExpectWellBehaved(const Json& report, std::size_t expected_pages) {
  EXPECT_EQ(report["serverVersion"]["name"], "udon-mcp-demo-server");
  ASSERT_EQ(report["pages"].size(), expected_pages);
  std::vector<std::string> names;
  for (const Json& page : report["pages"]) {
    for (const Json& name : page) names.push_back(name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"render_turntable", "analyze_text", "convert_units",
                                             "summarize", "slow_count", "async_render",
                                             "append_ledger"}));
  // The SDK validates structuredContent against each outputSchema: an "ok" is a pass.
  for (const char* tool : {"render_turntable", "analyze_text", "convert_units", "slow_count"}) {
    EXPECT_TRUE(report["calls"][tool].contains("ok")) << tool << report["calls"][tool];
  }
  EXPECT_EQ(report["calls"]["render_turntable"]["ok"]["structuredContent"]["renderedUris"].size(), 3u);
  EXPECT_EQ(report["calls"]["convert_units"]["ok"]["structuredContent"]["value"], 2000.0);
  EXPECT_FALSE(report["progress"].empty());
  EXPECT_TRUE(report["ping"].get<bool>());
}

TEST(SdkInterop, StdioListsAllPagesAndCallsTools) {
  UDON_REQUIRE_PEERS();
  Json report = RunSdkClient({"stdio", DemoServerBinary(), "--page-size", "3"});
  ExpectWellBehaved(report, 3);
}

TEST(SdkInterop, HttpListsAllPagesAndCallsTools) {
  UDON_REQUIRE_PEERS();
  HttpDemoServer server({"--page-size", "2"});
  ASSERT_GT(server.port(), 0);
  Json report = RunSdkClient({"http", server.url()});
  ExpectWellBehaved(report, 4);
  EXPECT_EQ(report["protocolVersion"], "2025-11-25");
  EXPECT_FALSE(report["sessionId"].is_null());
}

TEST(SdkInterop, HttpJsonResponseMode) {
  UDON_REQUIRE_PEERS();
  HttpDemoServer server({"--response-mode", "json"});
  ASSERT_GT(server.port(), 0);
  ExpectWellBehaved(RunSdkClient({"http", server.url()}), 1);
}

TEST(SdkInterop, SdkRejectsNonConformingStructuredContent) {
  UDON_REQUIRE_PEERS();
  Json report = RunSdkClient({"stdio", DemoServerBinary(), "--fault",
                              "call-bad-structured-content=analyze_text"});
  EXPECT_TRUE(report["calls"]["analyze_text"].contains("error"));
  EXPECT_TRUE(report["calls"]["render_turntable"].contains("ok"));
}

}  // namespace
}  // namespace udon::testing
