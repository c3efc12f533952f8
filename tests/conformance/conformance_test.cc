// The official MCP conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12,
// client mode) against udon_conformance_client, one CTest test per scenario.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "test_support.h"

namespace udon::testing {
namespace {

std::string ConformanceCli() { return SourceDir() + "/tests/node_modules/.bin/conformance"; }
std::string ClientBinary() { return BinaryDir() + "/tests/conformance/udon_conformance_client"; }

std::string ReadChecks(const std::string& dir) {
  std::string all;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().filename() == "checks.json") {
      all += entry.path().string() + ":\n";
      FILE* file = std::fopen(entry.path().c_str(), "r");
      if (file == nullptr) continue;
      char buffer[4096];
      std::size_t n;
      while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) all.append(buffer, n);
      std::fclose(file);
    }
  }
  return all;
}

class ConformanceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceTest, ScenarioPasses) {
  UDON_REQUIRE_PEERS();
  ASSERT_EQ(access(ConformanceCli().c_str(), X_OK), 0) << "conformance CLI not installed";
  TempDir results;
  RunOptions options;
  const std::string node_dir = std::filesystem::path(NodeBinary()).parent_path().string();
  const char* path = std::getenv("PATH");
  options.env["PATH"] = node_dir + ":" + (path == nullptr ? "/usr/bin:/bin" : path);
  options.timeout = std::chrono::seconds(120);
  ProcessResult run = RunProcess({NodeBinary(), ConformanceCli(), "client", "--command",
                                  ClientBinary(), "--scenario", GetParam(), "-o", results.path()},
                                 options);
  EXPECT_EQ(run.exit_code, 0) << "stderr:\n"
                              << run.err << "\nstdout:\n"
                              << run.out << "\nchecks:\n"
                              << ReadChecks(results.path());
  EXPECT_FALSE(run.timed_out);
  EXPECT_TRUE(Descendants(getpid()).empty());
}

INSTANTIATE_TEST_SUITE_P(Client, ConformanceTest,
                         ::testing::Values("initialize", "tools_call", "sse-retry",
                                           "json-schema-2020-12-preservation"),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return TestIdentifier(param_info.param);
                         });

}  // namespace
}  // namespace udon::testing
