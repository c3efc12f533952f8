// The official MCP conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12,
// client mode) against udon_conformance_client, one CTest test per scenario.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <ostream>
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

// A scenario and the revision whose wire it runs at.
struct Scenario {
  std::string name;
  std::string spec_version;
};

void PrintTo(const Scenario& scenario, std::ostream* out) { *out << scenario.name << " @ " << scenario.spec_version; }

class ConformanceTest : public ::testing::TestWithParam<Scenario> {};

TEST_P(ConformanceTest, ScenarioPasses) {
  UDON_REQUIRE_PEERS();
  ASSERT_EQ(access(ConformanceCli().c_str(), X_OK), 0) << "conformance CLI not installed";
  TempDir results;
  RunOptions options;
  const std::string node_dir = std::filesystem::path(NodeBinary()).parent_path().string();
  const char* path = std::getenv("PATH");
  options.env["PATH"] = node_dir + ":" + (path == nullptr ? "/usr/bin:/bin" : path);
  options.timeout = std::chrono::seconds(120);
  ProcessResult run = RunProcess({NodeBinary(), ConformanceCli(), "client", "--command", ClientBinary(),
                                  "--scenario", GetParam().name, "--spec-version", GetParam().spec_version,
                                  "-o", results.path()},
                                 options);
  EXPECT_EQ(run.exit_code, 0) << "stderr:\n"
                              << run.err << "\nstdout:\n"
                              << run.out << "\nchecks:\n"
                              << ReadChecks(results.path());
  EXPECT_FALSE(run.timed_out);
  EXPECT_TRUE(Descendants(getpid()).empty());
}

std::string ScenarioName(const ::testing::TestParamInfo<Scenario>& info) {
  return TestIdentifier(info.param.name + "_" + info.param.spec_version);
}

INSTANTIATE_TEST_SUITE_P(Client, ConformanceTest,
                         ::testing::Values(Scenario{"initialize", "2025-11-25"}, Scenario{"tools_call", "2025-11-25"},
                                           Scenario{"sse-retry", "2025-11-25"},
                                           Scenario{"json-schema-2020-12-preservation", "2025-11-25"}),
                         ScenarioName);

// The 2026-07-28 client scenarios that apply to a tools-only, headless client. Not here:
// auth/* (the gate does no OAuth), sep-2322-client-request-state (it needs answers to
// elicitation, which a headless gate refuses by design).
INSTANTIATE_TEST_SUITE_P(Client2026, ConformanceTest,
                         ::testing::Values(Scenario{"tools_call", "2026-07-28"},
                                           Scenario{"request-metadata", "2026-07-28"},
                                           Scenario{"http-standard-headers", "2026-07-28"},
                                           Scenario{"http-custom-headers", "2026-07-28"},
                                           Scenario{"http-invalid-tool-headers", "2026-07-28"},
                                           Scenario{"json-schema-ref-no-deref", "2026-07-28"},
                                           Scenario{"json-schema-2020-12-preservation", "2026-07-28"}),
                         ScenarioName);

}  // namespace
}  // namespace udon::testing
