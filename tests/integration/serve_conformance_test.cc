// @modelcontextprotocol/conformance (pinned in tests/package.json) in server mode against
// `udon-mcp serve --transport http` fronting the demo server with its conformance fixture
// tools (`--fixtures conformance`, over stdio): the scenarios that apply to a gateway that
// advertises the tools capability and nothing else, at 2025-11-25 and at 2026-07-28. One
// reviewed manifest and one gateway serve every scenario of a revision.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "conformance_runner.h"
#include "json/json.h"
#include "serve_fixture.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

// Every check of one run (its checks.json), as the harness wrote them.
std::vector<Json> Checks(const std::string& dir) {
  std::vector<Json> checks;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().filename() != "checks.json") continue;
    std::ifstream in(entry.path());
    std::stringstream buffer;
    buffer << in.rdbuf();
    auto parsed = json::Parse(buffer.str());
    EXPECT_TRUE(parsed.ok() && parsed->is_array()) << entry.path();
    if (parsed.ok() && parsed->is_array()) checks.insert(checks.end(), parsed->begin(), parsed->end());
  }
  return checks;
}

// A check that cannot pass against a gateway by design, with the status it must then have
// (so a change that makes it pass, or fail differently, is noticed).
struct NotApplicable {
  std::string scenario;
  std::string check;
  std::string status;  // FAILURE or WARNING
};

// Runs each scenario against one gateway, in order; `spec_version` empty means the harness
// default (2025-11-25). Every check must pass (or be skipped or informational), but those
// of `not_applicable`, which must have exactly their listed status.
void ExpectScenariosPass(const std::vector<std::string>& scenarios, const std::string& spec_version,
                         const std::vector<NotApplicable>& not_applicable = {}) {
  TempDir dir;
  ReviewedDemo demo(dir, std::vector<std::string>{"--fixtures", "conformance"});
  ASSERT_TRUE(demo.ok()) << demo.failure;
  HttpGateway gateway(demo);
  ASSERT_GT(gateway.port(), 0) << gateway.process().Output();
  for (const std::string& scenario : scenarios) {
    SCOPED_TRACE(scenario);
    TempDir results;
    ProcessResult run = RunConformanceScenario(gateway.url(), scenario, spec_version, results.path());
    const std::string output = run.out + run.err;
    const std::vector<Json> checks = Checks(results.path());
    EXPECT_FALSE(checks.empty()) << output;
    bool excused = false;
    for (const Json& check : checks) {
      const std::string id = check.value("id", "");
      const std::string status = check.value("status", "");
      std::string expected;
      for (const NotApplicable& entry : not_applicable) {
        if (entry.scenario == scenario && entry.check == id) expected = entry.status;
      }
      if (expected.empty()) {
        EXPECT_TRUE(status == "SUCCESS" || status == "SKIPPED" || status == "INFO") << id << ": " << check.dump(1);
      } else {
        excused = true;
        EXPECT_EQ(status, expected) << id << " is listed as not applicable: " << check.dump(1);
      }
    }
    if (!excused) {
      EXPECT_EQ(run.exit_code, 0) << output;
      EXPECT_NE(output.find(", 0 failed, 0 warnings"), std::string::npos) << output;
    }
  }
  EXPECT_TRUE(gateway.process().running()) << gateway.process().Output();
}

// The 2025-11-25 scenarios of conformance_server_test but tools-call-with-logging: the
// gateway advertises no logging capability (it relays no upstream log messages).
TEST(ServeConformance, Scenarios20251125) {
  UDON_REQUIRE_PEERS();
  ExpectScenariosPass({"server-initialize", "server-session-lifecycle", "ping", "tools-list",
                       "tools-call-simple-text", "tools-call-image", "tools-call-audio",
                       "tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-error",
                       "tools-call-with-progress", "server-sse-multiple-streams", "dns-rebinding-protection",
                       "json-schema-2020-12"},
                      {});
}

// The 2026-07-28 scenarios of conformance_server_test that apply to a tools-only gateway,
// with the pending header scenarios. Left out:
// - resources-list, prompts-list, sep-2164-resource-not-found: no resources or prompts are
//   offered (the tools capability and nothing else).
// - input-required-result-* but unsupported-methods and ignore-extra-params: the upstream
//   asks for elicitation, sampling or roots in an input_required result, which the gate
//   refuses; the host gets an isError result, never the request.
// server-stateless runs last: its test_trigger_tool_change makes the upstream announce
// list_changed, and the gateway then withdraws every tool of that server for good.
TEST(ServeConformance, Scenarios20260728) {
  UDON_REQUIRE_PEERS();
  ExpectScenariosPass(
      {"tools-list", "tools-call-simple-text", "tools-call-image", "tools-call-audio",
       "tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-error", "tools-call-with-progress",
       "server-sse-multiple-streams", "dns-rebinding-protection", "caching", "http-header-validation",
       "http-custom-header-server-validation", "json-schema-2020-12", "input-required-result-unsupported-methods",
       "input-required-result-ignore-extra-params", "server-stateless"},
      "2026-07-28",
      {// prompts/list and resources/{,templates/}list are not offered: -32601 by design.
       {"caching", "sep-2549-prompts-list-caching-hints", "FAILURE"},
       {"caching", "sep-2549-resources-list-caching-hints", "FAILURE"},
       {"caching", "sep-2549-resources-templates-list-caching-hints", "FAILURE"},
       // test_missing_capability needs sampling, which the gate never declares upstream: the
       // upstream's -32021 is a failed call (isError, call.protocol_error), not a -32021 that
       // would tell the host to declare sampling (the gateway would refuse it anyway).
       {"server-stateless", "sep-2575-server-rejects-undeclared-capability", "FAILURE"},
       {"server-stateless", "sep-2575-missing-capability-http-400", "FAILURE"},
       // The scenario's first test_trigger_tool_change withdrew every tool (its listen stream
       // got the gateway's list_changed); the later trigger call changes nothing more.
       {"server-stateless", "sep-2575-server-sends-tools-list-changed-on-subscription", "WARNING"}});
}

}  // namespace
}  // namespace udon::testing
