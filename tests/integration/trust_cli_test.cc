// udon-mcp analyze as a real process (issue 9): the golden content-trust vector as text,
// JSON and Graphviz dot, the advisory exit code 0 with findings, and exit 2 for invalid
// documents.
#include <gtest/gtest.h>

#include <string>

#include "base/file.h"
#include "json/json.h"
#include "test_support.h"
#include "trust/internal/test_documents.h"

namespace udon::testing {
namespace {

class AnalyzeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& [name, text] : trust::internal::GoldenFiles()) dir_.Write(name, text);
  }
  ProcessResult Run(std::vector<std::string> args) {
    args.insert(args.begin(), {UdonMcpBinary(), "analyze", dir_.File("triage.uws.json")});
    return RunProcess(args);
  }
  TempDir dir_;
};

TEST_F(AnalyzeCliTest, TextReportExitsZeroWithFindings) {
  ProcessResult result = Run({});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("findings: 1 (1 high, 0 warning)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("content_trust.untrusted_authority  operations[2].request.body.target"), std::string::npos);
}

TEST_F(AnalyzeCliTest, JsonFormatIsTheReport) {
  ProcessResult result = Run({"--format", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto report = json::Parse(result.out);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ((*report)["findings"].size(), 1u);
  EXPECT_EQ((*report)["findings"][0]["severity"], "high");
  EXPECT_EQ((*report)["findings"][0]["path"], "operations[2].request.body.target");
  EXPECT_FALSE(report->contains("ok"));
  // Byte-identical on a second run.
  EXPECT_EQ(Run({"--format", "json"}).out, result.out);
}

TEST_F(AnalyzeCliTest, MachineOutputWrapsTheReport) {
  ProcessResult result = Run({"--json", "--v1.9.2"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto output = json::Parse(result.out);
  ASSERT_TRUE(output.ok());
  EXPECT_EQ((*output)["ok"], true);
  EXPECT_EQ((*output)["findings"][0]["code"], "content_trust.untrusted_authority");
}

TEST_F(AnalyzeCliTest, DotDrawsTheGraph) {
  ProcessResult result = Run({"--format", "dot"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.rfind("digraph content_trust {", 0), 0u);
  EXPECT_NE(result.out.find("color=red"), std::string::npos);
}

TEST_F(AnalyzeCliTest, InvalidDocumentExitsTwo) {
  json::Value document = trust::internal::GoldenDocument();
  document["workflows"][0]["steps"][0]["operationRef"] = "nowhere";
  dir_.Write("triage.uws.json", document.dump());
  ProcessResult result = Run({"--json"});
  EXPECT_EQ(result.exit_code, 2);
  auto output = json::Parse(result.out);
  ASSERT_TRUE(output.ok()) << result.out;
  EXPECT_EQ((*output)["code"], "uws.invalid");
  EXPECT_EQ(Run({"--format", "svg"}).exit_code, 2);
}

}  // namespace
}  // namespace udon::testing

namespace udon::testing {
namespace {

// Policy blockOnFindings makes `run` refuse a workflow with such findings before anything
// executes (no runtime configuration is even needed to get that far).
TEST_F(AnalyzeCliTest, RunBlocksOnFindingsWhenPolicySaysSo) {
  for (const char* level : {"high", "warning"}) {
    SCOPED_TRACE(level);
    dir_.Write("policy.json", std::string(R"({"blockOnFindings":")") + level + "\"}");
    ProcessResult run = RunProcess({UdonMcpBinary(), "run", dir_.File("triage.uws.json"), "--policy",
                                    dir_.File("policy.json"), "--config", dir_.File("absent.json"), "--json"});
    EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
    auto out = json::Parse(run.out);
    ASSERT_TRUE(out.ok()) << run.out;
    EXPECT_EQ((*out)["code"], "content_trust.blocked");
  }
  dir_.Write("policy.json", R"({"blockOnFindings":"none"})");
  ProcessResult advisory = RunProcess({UdonMcpBinary(), "run", dir_.File("triage.uws.json"), "--policy",
                                       dir_.File("policy.json"), "--config", dir_.File("absent.json"), "--json"});
  auto out = json::Parse(advisory.out);
  ASSERT_TRUE(out.ok()) << advisory.out;
  EXPECT_NE((*out)["code"], "content_trust.blocked");
}

}  // namespace
}  // namespace udon::testing
