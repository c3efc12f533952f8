#include "workflow/workflow.h"

#include <gtest/gtest.h>

#include "test_support.h"
#include "trust/internal/test_documents.h"

namespace udon::workflow {
namespace {

// The content-trust golden vector (one high finding: mail read -> model -> send target),
// bound to its reviewed manifest. No server exists: a test that gets as far as the gate
// makes the gate's environment fail and counts the asking.
class RunWorkflowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& [name, text] : trust::internal::GoldenFiles()) dir_.Write(name, text);
  }

  WorkflowOutcome Go(manifest::FindingsBlock block, const std::string& inputs = {}) {
    WorkflowEnvironment environment;
    environment.policy.block_on_findings = block;
    environment.gate = [this]() -> Result<gate::GateEnvironment> {
      ++gates_asked_;
      return MakeError("config.unreadable", "no configuration in this test");
    };
    return RunWorkflow(dir_.File("triage.uws.json"), inputs, environment);
  }

  testing::TempDir dir_;
  int gates_asked_ = 0;
};

TEST_F(RunWorkflowTest, ABlockingPolicyRefusesOnAFindingBeforeTheGate) {
  for (auto block : {manifest::FindingsBlock::kHigh, manifest::FindingsBlock::kWarning}) {
    WorkflowOutcome outcome = Go(block);
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.stage, Stage::kContentTrust);
    EXPECT_EQ(outcome.error->code, "content_trust.blocked");
    ASSERT_TRUE(outcome.content_trust.has_value());
    EXPECT_EQ(outcome.content_trust->findings.size(), 1u);
  }
  EXPECT_EQ(gates_asked_, 0) << "nothing reaches the gate";
}

// The step `demo` used to skip: the analysis runs under every policy, and findings are
// advisory unless the policy blocks.
TEST_F(RunWorkflowTest, AnAdvisoryPolicyAnalyzesAndGoesOnToTheGate) {
  WorkflowOutcome outcome = Go(manifest::FindingsBlock::kNone);
  ASSERT_TRUE(outcome.content_trust.has_value());
  EXPECT_EQ(outcome.content_trust->findings.size(), 1u);
  EXPECT_EQ(outcome.operations, 3u);
  EXPECT_EQ(outcome.stage, Stage::kGate);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->code, "config.unreadable");
  EXPECT_EQ(gates_asked_, 1);
}

TEST_F(RunWorkflowTest, ADocumentErrorComesFirst) {
  json::Value document = trust::internal::GoldenDocument();
  document["workflows"][0]["steps"][0]["operationRef"] = "nowhere";
  dir_.Write("triage.uws.json", document.dump());
  WorkflowOutcome outcome = Go(manifest::FindingsBlock::kHigh, dir_.File("absent-inputs.json"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.stage, Stage::kCheck);
  EXPECT_EQ(outcome.error->code, "uws.invalid");
  EXPECT_FALSE(outcome.content_trust.has_value());
}

TEST_F(RunWorkflowTest, InputsAreReadAfterTheDocumentAndBeforeTheGate) {
  WorkflowOutcome unreadable = Go(manifest::FindingsBlock::kNone, dir_.File("absent-inputs.json"));
  EXPECT_EQ(unreadable.stage, Stage::kInputs);
  ASSERT_FALSE(unreadable.ok());
  EXPECT_EQ(unreadable.error->code, "io.unreadable");
  dir_.Write("inputs.json", "[1, 2]");
  WorkflowOutcome not_object = Go(manifest::FindingsBlock::kNone, dir_.File("inputs.json"));
  EXPECT_EQ(not_object.stage, Stage::kInputs);
  EXPECT_EQ(gates_asked_, 0);
}

}  // namespace
}  // namespace udon::workflow
