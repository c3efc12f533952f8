#include "uws/plan.h"

#include <gtest/gtest.h>

#include "uws/internal/fake_leaf.h"

namespace udon::uws {
namespace {

constexpr const char* kHead = R"(uws: 1.9.0
info: {title: t, version: '1'}
operations:
  - operationId: op
    x-uws-operation-profile: openudon.mcp-tool-call.0.1
    x-openudon-mcp: {manifest: m.json, manifestSha256: x, server: s, tool: t}
    request: {body: {a: $inputs.a}}
)";

struct Planned {
  Result<Document> document = MakeError("unset", "");
  Result<Plan> plan = MakeError("unset", "");
};

std::unique_ptr<Planned> PlanOf(const std::string& yaml, std::optional<std::string> workflow = std::nullopt) {
  auto planned = std::make_unique<Planned>();
  planned->document = ParseDocument(yaml, "/tmp");
  EXPECT_TRUE(planned->document.ok()) << planned->document.error().Describe();
  if (!planned->document.ok()) return planned;
  EXPECT_TRUE(Validate(*planned->document).empty()) << ErrorsToJson(Validate(*planned->document)).dump();
  planned->plan = MakePlan(*planned->document, testing::FakeBindings(*planned->document), workflow);
  return planned;
}

std::string Refusal(const std::string& yaml) {
  auto planned = PlanOf(yaml);
  if (planned->plan.ok()) return "planned";
  const Error& error = planned->plan.error();
  return error.code + " " + error.details.value("construct", "") + " " + error.pointer;
}

TEST(UwsPlan, PlainSequencePlans) {
  auto planned = PlanOf(std::string(kHead) + R"(workflows:
  - workflowId: w
    type: sequence
    steps: [{stepId: s, operationRef: op, inputs: {a: 1}}]
)");
  ASSERT_TRUE(planned->plan.ok()) << planned->plan.error().Describe();
  EXPECT_EQ(planned->plan->entry, "w");
}

TEST(UwsPlan, EntrySelection) {
  std::string two = std::string(kHead) + R"(workflows:
  - {workflowId: a, type: sequence}
  - {workflowId: b, type: sequence}
)";
  EXPECT_EQ(PlanOf(two)->plan.error().code, "uws.invalid");
  EXPECT_EQ(PlanOf(two, "b")->plan->entry, "b");
  EXPECT_EQ(PlanOf(two, "zz")->plan.error().code, "usage.invalid");
  std::string with_main = std::string(kHead) + R"(workflows:
  - {workflowId: a, type: sequence}
  - {workflowId: main, type: sequence}
)";
  EXPECT_EQ(PlanOf(with_main)->plan->entry, "main");
  EXPECT_EQ(PlanOf(kHead)->plan.error().code, "uws.invalid");
}

struct RefusalCase {
  const char* name;
  const char* workflows;  // appended after kHead
  const char* expected;
};

class UwsPlanRefusal : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(UwsPlanRefusal, RefusedBeforeAnythingRuns) {
  EXPECT_EQ(Refusal(std::string(kHead) + GetParam().workflows), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Constructs, UwsPlanRefusal,
    ::testing::Values(
        RefusalCase{"merge", R"(workflows: [{workflowId: w, type: merge, dependsOn: [op]}])",
                    "uws.unsupported merge /workflows/0/type"},
        RefusalCase{"await", R"(workflows: [{workflowId: w, type: await, wait: $inputs.a}])",
                    "uws.unsupported await /workflows/0/type"},
        RefusalCase{"forEach", R"(workflows: [{workflowId: w, type: sequence, steps: [{stepId: s, operationRef: op, forEach: $inputs.a}]}])",
                    "uws.unsupported forEach /workflows/0/steps/0/forEach"},
        RefusalCase{"idempotency", R"(workflows: [{workflowId: w, type: sequence, idempotency: {key: $inputs.a}}])",
                    "uws.unsupported idempotency /workflows/0/idempotency"},
        RefusalCase{"triggers", R"(workflows: [{workflowId: w, type: sequence}]
triggers: [{triggerId: t}])", "uws.unsupported triggers /triggers"},
        RefusalCase{"expression", R"(workflows: [{workflowId: w, type: sequence, when: length($inputs.a)}])",
                    "uws.unsupported expression outside the UWS 1.9 core grammar /workflows/0/when"},
        RefusalCase{"statusCode", R"(workflows: [{workflowId: w, type: sequence, steps: [{stepId: s, operationRef: op, outputs: {c: $response.statusCode}}]}])",
                    "uws.unsupported $response.statusCode /workflows/0/steps/0/outputs/c"},
        RefusalCase{"trigger", R"(workflows: [{workflowId: w, type: sequence, steps: [{stepId: s, operationRef: op, inputs: {a: $trigger.body}}]}])",
                    "uws.unsupported $trigger /workflows/0/steps/0/inputs/a"},
        RefusalCase{"stepBody", R"(workflows: [{workflowId: w, type: sequence, steps: [{stepId: s, operationRef: op, body: {}}]}])",
                    "uws.unsupported body /workflows/0/steps/0/body"}));

TEST(UwsPlan, OperationLevelRefusals) {
  auto with_op = [](const char* extra) {
    return std::string(kHead) + extra + R"(
workflows: [{workflowId: w, type: sequence, steps: [{stepId: s, operationRef: op}]}]
)";
  };
  EXPECT_EQ(Refusal(with_op("    successCriteria: [{condition: $outputs.x == 1}]")),
            "uws.unsupported $outputs in criteria /operations/0/successCriteria/0/condition");
  EXPECT_EQ(Refusal(with_op("    successCriteria: [{condition: '^ok', type: regex, context: $response.body}]")),
            "uws.unsupported regex criterion /operations/0/successCriteria/0");
  EXPECT_EQ(Refusal(with_op("    onFailure: [{name: g, type: goto, stepId: s}]")),
            "uws.unsupported goto /operations/0/onFailure/0/type");
  EXPECT_EQ(Refusal(with_op("    onSuccess: [{name: e, type: end}]")), "uws.unsupported onSuccess /operations/0/onSuccess");
  EXPECT_EQ(Refusal(with_op("    outputs: {h: $response.headers.etag}")),
            "uws.unsupported $response.headers /operations/0/outputs/h");
  EXPECT_EQ(Refusal(with_op("    onFailure: [{name: r, type: retry, retryLimit: 2}, {name: e, type: end}]")), "planned");
}

TEST(UwsPlan, NonMcpOperationsAreRefusedOnlyWhenReachable) {
  std::string doc = std::string(kHead) + R"(  - operationId: other
    x-uws-operation-profile: uws.runtime.1.0
workflows:
  - {workflowId: w, type: sequence, steps: [{stepId: s, operationRef: op}]}
  - {workflowId: v, type: sequence, steps: [{stepId: t, operationRef: other}]}
)";
  EXPECT_TRUE(PlanOf(doc, "w")->plan.ok());
  auto refused = PlanOf(doc, "v");
  ASSERT_FALSE(refused->plan.ok());
  EXPECT_EQ(refused->plan.error().details.value("construct", ""), "operation profile other than openudon.mcp-tool-call.0.1");
  EXPECT_EQ(refused->plan.error().pointer, "/operations/1");
}

TEST(UwsPlan, SampleIsRefused) {
  auto document = LoadDocument(std::string(UDON_SOURCE_DIR) + "/tests/data/uws/sample.uws.json");
  ASSERT_TRUE(document.ok());
  auto plan = MakePlan(*document, testing::FakeBindings(*document), std::nullopt);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code, "uws.unsupported");
}

TEST(UwsPlan, EntryInputs) {
  auto planned = PlanOf(std::string(kHead) + R"(workflows:
  - workflowId: w
    type: sequence
    inputs: {type: object, required: [n], properties: {n: {type: integer}, s: {type: string}}}
)");
  ASSERT_TRUE(planned->plan.ok());
  EXPECT_TRUE(CheckEntryInputs(*planned->plan, *json::Parse(R"({"n": 3})")).ok());
  EXPECT_TRUE(CheckEntryInputs(*planned->plan, *json::Parse(R"({"n": 3.0, "s": "x"})")).ok());
  EXPECT_EQ(CheckEntryInputs(*planned->plan, *json::Parse(R"({})")).error().pointer, "/n");
  EXPECT_EQ(CheckEntryInputs(*planned->plan, *json::Parse(R"({"n": "3"})")).error().code, "usage.invalid");
  EXPECT_EQ(CheckEntryInputs(*planned->plan, *json::Parse(R"({"n": 3, "s": 1})")).error().pointer, "/s");
  EXPECT_FALSE(CheckEntryInputs(*planned->plan, *json::Parse("[]")).ok());
}

}  // namespace
}  // namespace udon::uws
