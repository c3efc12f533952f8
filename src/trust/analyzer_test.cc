#include "trust/analyzer.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "trust/internal/test_documents.h"
#include "trust/mcp_resolver.h"

namespace udon::trust {
namespace {

using internal::GoldenDocument;
using internal::McpOperation;
using internal::ToDocument;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

Report AnalyzeValue(const json::Value& value, const Options& options = {},
                    std::vector<const Resolver*> resolvers = {}) {
  static const McpResolver mcp;
  if (resolvers.empty()) resolvers.push_back(&mcp);
  auto document = ToDocument(value);
  EXPECT_TRUE(document.ok()) << document.error().Describe();
  auto report = Analyze(*document, resolvers, options);
  EXPECT_TRUE(report.ok()) << report.error().Describe();
  return report.ok() ? *report : Report{};
}

Finding F(const std::string& code, const std::string& path) {
  return {code, code == kUntrustedAuthority || code == kUntrustedInstruction ? "high" : "warning", path,
          FindingMessage(code)};
}

std::vector<std::string> Codes(const Report& report) {
  std::vector<std::string> codes;
  for (const auto& finding : report.findings) codes.push_back(finding.code);
  return codes;
}

bool HasFinding(const Report& report, const std::string& code, const std::string& path) {
  return std::find(report.findings.begin(), report.findings.end(), F(code, path)) != report.findings.end();
}

const Edge* FindEdge(const Report& report, const std::string& from, const std::string& to) {
  for (const auto& edge : report.edges) {
    if (edge.from == from && edge.to == to) return &edge;
  }
  return nullptr;
}

json::Value& Step(json::Value& document, std::size_t index) { return document["workflows"][0]["steps"][index]; }

// A resolver with fixed contracts by operationId, for the analyzer's own rules.
class FixedResolver : public Resolver {
 public:
  std::map<std::string, OperationContract> contracts;
  std::set<std::string> failing;
  Resolution ResolveOperation(const uws::Document&, std::size_t, const json::Value& operation) const override {
    const std::string id = operation.value("operationId", "");
    Resolution resolution;
    if (failing.contains(id)) {
      resolution.owned = true;
      resolution.error = MakeError("test.failed", "fails on purpose");
      return resolution;
    }
    if (auto it = contracts.find(id); it != contracts.end()) {
      resolution.owned = true;
      resolution.contract = it->second;
    }
    return resolution;
  }
};

// ---- the golden vector and its variants -----------------------------------------------

TEST(GoldenVector, OneHighAuthorityFindingAndTwoUntrustedEdges) {
  const Report report = AnalyzeValue(GoldenDocument());
  EXPECT_THAT(report.findings, ElementsAre(F(kUntrustedAuthority, "operations[2].request.body.target")));
  const Edge* first = FindEdge(report, "workflows[0].steps[0].outputs.body", "workflows[0].steps[1].inputs.prompt");
  const Edge* second = FindEdge(report, "workflows[0].steps[1].outputs.summary", "workflows[0].steps[2].inputs.target");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->provenance, "untrusted");
  EXPECT_EQ(first->capability, "free_text");
  EXPECT_EQ(second->provenance, "untrusted");
  EXPECT_EQ(second->capability, "free_text");
  EXPECT_EQ(report.findings.front().message, "untrusted content can reach an authority-bearing channel");
}

TEST(GoldenVector, ChannelEdgesReachTheRequestPaths) {
  const Report report = AnalyzeValue(GoldenDocument());
  // A bound input keeps its producer: the edge into the channel starts at read_step.
  const Edge* prompt = FindEdge(report, "workflows[0].steps[0].outputs.body", "operations[1].request.body.prompt");
  ASSERT_NE(prompt, nullptr);
  EXPECT_EQ(prompt->provenance, "untrusted");
  const Edge* response = FindEdge(report, "operations[0].response", "operations[0].outputs.body");
  ASSERT_NE(response, nullptr);
  EXPECT_EQ(response->provenance, "untrusted");  // MCP defaultTrust
}

TEST(GoldenVector, InstructionChannelGivesUntrustedInstruction) {
  json::Value document = GoldenDocument();
  document["operations"][1]["x-openudon-mcp"]["tool"] = "summarize_instructed";
  const Report report = AnalyzeValue(document);
  EXPECT_TRUE(HasFinding(report, kUntrustedInstruction, "operations[1].request.body.prompt"));
  EXPECT_EQ(report.findings.size(), 2u);
}

TEST(GoldenVector, ConstrainedScalarCannotCarryInstructions) {
  json::Value document = GoldenDocument();
  document["operations"][1]["x-openudon-mcp"]["tool"] = "summarize_instructed";
  document["operations"][0]["outputs"]["body"] = "$response.body#/flag";  // a boolean
  const Report report = AnalyzeValue(document);
  EXPECT_THAT(Codes(report), Not(Contains(kUntrustedInstruction)));
  // Still untrusted: a constrained value keeps its provenance.
  const Edge* edge = FindEdge(report, "workflows[0].steps[0].outputs.body", "workflows[0].steps[1].inputs.prompt");
  ASSERT_NE(edge, nullptr);
  EXPECT_EQ(edge->provenance, "untrusted");
  EXPECT_EQ(edge->capability, "constrained_scalar");
}

TEST(GoldenVector, ParallelWorkflowGivesNonDominatingReferences) {
  json::Value document = GoldenDocument();
  document["workflows"][0]["type"] = "parallel";
  const Report report = AnalyzeValue(document);
  EXPECT_TRUE(HasFinding(report, kNonDominatingReference, "workflows[0].steps[1].inputs.prompt"));
  EXPECT_TRUE(HasFinding(report, kNonDominatingReference, "workflows[0].steps[2].inputs.target"));
}

TEST(GoldenVector, DependsOnRestoresDominanceInParallel) {
  json::Value document = GoldenDocument();
  document["workflows"][0]["type"] = "parallel";
  Step(document, 1)["dependsOn"] = {"read_step"};
  Step(document, 2)["dependsOn"] = {"model_step"};
  const Report report = AnalyzeValue(document);
  EXPECT_THAT(Codes(report), Not(Contains(kNonDominatingReference)));
}

TEST(GoldenVector, TransitiveDependsOnAndGroupsRestoreDominance) {
  json::Value document = GoldenDocument();
  document["workflows"][0]["type"] = "parallel";
  Step(document, 0)["parallelGroup"] = "fetch";
  Step(document, 1)["dependsOn"] = {"fetch"};
  Step(document, 2)["dependsOn"] = {"model_step"};
  // send_step also reads read_step: covered through model_step's dependency on the group.
  Step(document, 2)["when"] = "$steps.read_step.outputs.body != \"\"";
  const Report report = AnalyzeValue(document);
  EXPECT_THAT(Codes(report), Not(Contains(kNonDominatingReference)));
  EXPECT_TRUE(HasFinding(report, kUntrustedControl, "workflows[0].steps[2].when"));
}

TEST(GoldenVector, TrustedChildInputFedByTriggerStaysUntrusted) {
  json::Value document = GoldenDocument();
  document["workflows"] = json::Value::parse(R"([
    {"workflowId": "main", "type": "sequence", "steps": [
      {"stepId": "call_deliver", "workflow": "deliver", "inputs": {"target": "$trigger.body"}}]},
    {"workflowId": "deliver", "type": "sequence",
     "inputs": {"type": "object", "properties": {"target": {"type": "string"}}},
     "steps": [{"stepId": "send_step", "operationRef": "send", "inputs": {"target": "$inputs.target"}}]}])");
  document["contentTrust"] = json::Value::parse(R"({"workflows": {"deliver": {"inputs": {"target": "trusted"}}}})");
  const Report report = AnalyzeValue(document);
  EXPECT_TRUE(HasFinding(report, kUntrustedAuthority, "operations[2].request.body.target"));
  const Edge* edge = FindEdge(report, "workflows[1].inputs.properties.target", "workflows[1].steps[0].inputs.target");
  ASSERT_NE(edge, nullptr);
  EXPECT_EQ(edge->provenance, "untrusted");
  EXPECT_EQ(FindEdge(report, "$trigger", "workflows[0].steps[0].inputs.target")->provenance, "untrusted");
}

TEST(GoldenVector, TwoOwningResolversConflict) {
  const McpResolver first;
  const McpResolver second;
  const Report report = AnalyzeValue(GoldenDocument(), {}, {&first, &second});
  EXPECT_TRUE(HasFinding(report, kResolverConflict, "operations[0]"));
  EXPECT_TRUE(HasFinding(report, kResolverConflict, "operations[2]"));
  // Unresolved operations are scanned as data, never as sinks.
  EXPECT_THAT(Codes(report), Not(Contains(kUntrustedAuthority)));
  EXPECT_NE(FindEdge(report, "workflows[0].steps[1].outputs.summary", "operations[2].request.body.target"), nullptr);
}

// ---- every finding code ---------------------------------------------------------------

TEST(FindingCodes, ControlFindings) {
  json::Value document = GoldenDocument();
  document["workflows"][0]["inputs"] =
      json::Value::parse(R"({"type": "object", "properties": {"mode": {"type": "string"}}})");
  Step(document, 0)["when"] = "$inputs.mode == \"fast\"";           // undeclared input: unknown
  Step(document, 1)["when"] = "length($inputs.mode) > 1";            // outside the grammar
  Step(document, 2)["when"] = "$steps.read_step.outputs.body == \"go\"";
  Step(document, 2)["forEach"] = "$variables.missing";
  const Report report = AnalyzeValue(document);
  EXPECT_TRUE(HasFinding(report, kUnknownProvenance, "workflows[0].steps[0].when"));
  EXPECT_TRUE(HasFinding(report, kOpaqueExpression, "workflows[0].steps[1].when"));
  EXPECT_TRUE(HasFinding(report, kUnknownProvenance, "workflows[0].steps[1].when"));
  EXPECT_TRUE(HasFinding(report, kUntrustedControl, "workflows[0].steps[2].when"));
  EXPECT_TRUE(HasFinding(report, kUnresolvedReference, "workflows[0].steps[2].forEach"));
  EXPECT_NE(FindEdge(report, "$variables.missing", "workflows[0].steps[2].forEach"), nullptr);
}

TEST(FindingCodes, CriteriaAreControls) {
  json::Value document = GoldenDocument();
  document["operations"][0]["successCriteria"] =
      json::Value::parse(R"([{"condition": "$response.statusCode == 200"}])");
  document["operations"][1]["onFailure"] = json::Value::parse(
      R"([{"name": "again", "type": "retry", "retryLimit": 2,
            "criteria": [{"condition": "$outputs.summary == \"x\""}]}])");
  const Report report = AnalyzeValue(document);
  EXPECT_TRUE(HasFinding(report, kUntrustedControl, "operations[0].successCriteria[0].condition"));
  EXPECT_TRUE(HasFinding(report, kUntrustedControl, "operations[1].onFailure[0].criteria[0].condition"));
}

TEST(FindingCodes, ResolverFailureOnDigestMismatch) {
  json::Value document = GoldenDocument();
  document["operations"][2]["x-openudon-mcp"]["manifestSha256"] = std::string(64, '0');
  const Report report = AnalyzeValue(document);
  EXPECT_TRUE(HasFinding(report, kResolverFailure, "operations[2]"));
  EXPECT_THAT(Codes(report), Not(Contains(kUntrustedAuthority)));
}

TEST(FindingCodes, ResolverFailureOnUnclassifiedOrDynamicBody) {
  json::Value unclassified = GoldenDocument();
  unclassified["operations"][2]["request"]["body"]["cc"] = "$inputs.target";
  EXPECT_TRUE(HasFinding(AnalyzeValue(unclassified), kResolverFailure, "operations[2]"));

  json::Value dynamic = GoldenDocument();
  dynamic["operations"][2]["request"]["body"] = "$inputs";
  EXPECT_TRUE(HasFinding(AnalyzeValue(dynamic), kResolverFailure, "operations[2]"));

  json::Value unreviewed = GoldenDocument();
  unreviewed["operations"][2]["x-openudon-mcp"]["tool"] = "unreviewed";
  EXPECT_TRUE(HasFinding(AnalyzeValue(unreviewed), kResolverFailure, "operations[2]"));
}

TEST(FindingCodes, ReviewedButUnboundChannelsAreNotEmitted) {
  // send_mail reviews /text too; the document does not bind it, so no failure.
  const Report report = AnalyzeValue(GoldenDocument());
  EXPECT_THAT(Codes(report), Not(Contains(kResolverFailure)));
}

TEST(FindingCodes, UnresolvedReferences) {
  json::Value document = GoldenDocument();
  Step(document, 2)["inputs"]["target"] = "$steps.model_step.outputs.nothing";
  document["workflows"][0]["outputs"] = {{"gone", "$response.body"}};
  const Report report = AnalyzeValue(document);
  EXPECT_TRUE(HasFinding(report, kUnresolvedReference, "workflows[0].steps[2].inputs.target"));
  EXPECT_TRUE(HasFinding(report, kUnresolvedReference, "workflows[0].outputs.gone"));
  // The unresolved reference flows on as unknown into the authority channel.
  EXPECT_TRUE(HasFinding(report, kUnknownProvenance, "operations[2].request.body.target"));
}

TEST(FindingCodes, ItemIsBoundByForEachOnly) {
  json::Value document = GoldenDocument();
  Step(document, 2)["inputs"]["target"] = "$item";
  const Report unbound = AnalyzeValue(document);
  EXPECT_TRUE(HasFinding(unbound, kUnresolvedReference, "workflows[0].steps[2].inputs.target"));
  Step(document, 2)["forEach"] = "$steps.read_step.outputs.body";
  const Report bound = AnalyzeValue(document);
  EXPECT_TRUE(HasFinding(bound, kUntrustedControl, "workflows[0].steps[2].forEach"));
  EXPECT_TRUE(HasFinding(bound, kUntrustedAuthority, "operations[2].request.body.target"));
}

TEST(FindingCodes, OneDocumentProvokesEveryCode) {
  // All nine, between this document alone and the same with two resolvers.
  json::Value document = GoldenDocument();
  document["operations"][1]["x-openudon-mcp"]["tool"] = "summarize_instructed";
  document["operations"].push_back(McpOperation("broken", "send_mail", {{"target", "fixed"}}));
  document["operations"][3]["x-openudon-mcp"]["manifestSha256"] = std::string(64, 'a');
  document["workflows"][0]["type"] = "parallel";
  Step(document, 0)["when"] = "length($inputs) > 0";
  Step(document, 1)["when"] = "$variables.none == 1";
  Step(document, 2)["when"] = "$trigger.body.ok == true";
  document["workflows"][0]["inputs"] =
      json::Value::parse(R"({"type": "object", "properties": {"m": {"type": "string"}}})");
  document["workflows"][0]["wait"] = "$inputs.m";
  const McpResolver first;
  const Report once = AnalyzeValue(document);
  const std::vector<std::string> found = Codes(once);
  std::set<std::string> codes(found.begin(), found.end());
  const McpResolver second;
  const Report twice = AnalyzeValue(document, {}, {&first, &second});
  for (const std::string& code : Codes(twice)) codes.insert(code);
  EXPECT_THAT(codes, ElementsAre(kNonDominatingReference, kOpaqueExpression, kResolverConflict, kResolverFailure,
                                 kUnknownProvenance, kUnresolvedReference, kUntrustedAuthority,
                                 kUntrustedControl, kUntrustedInstruction));
}

// ---- report shape, sorting and determinism --------------------------------------------

TEST(Report, ShapesAndOmitsEmptyArrays) {
  EXPECT_EQ(Report{}.ToJson().dump(), "{}");
  const json::Value value = AnalyzeValue(GoldenDocument()).ToJson();
  ASSERT_TRUE(value.contains("edges"));
  ASSERT_EQ(value["findings"].size(), 1u);
  EXPECT_EQ(value["findings"][0].dump(),
            R"({"code":"content_trust.untrusted_authority",)"
            R"("message":"untrusted content can reach an authority-bearing channel",)"
            R"("path":"operations[2].request.body.target","severity":"high"})");
  for (const auto& edge : value["edges"]) {
    EXPECT_EQ(edge.size(), 4u);
    for (const char* member : {"from", "to", "provenance", "capability"}) EXPECT_TRUE(edge.contains(member));
  }
}

TEST(Report, SortedAndDeduplicated) {
  json::Value document = GoldenDocument();
  document["workflows"][0]["type"] = "parallel";
  Step(document, 2)["when"] = "$steps.read_step.outputs.body == $steps.read_step.outputs.body";
  const Report report = AnalyzeValue(document);
  for (std::size_t i = 1; i < report.edges.size(); ++i) {
    const Edge& a = report.edges[i - 1];
    const Edge& b = report.edges[i];
    EXPECT_LT(std::tie(a.to, a.from, a.provenance, a.capability), std::tie(b.to, b.from, b.provenance, b.capability));
  }
  for (std::size_t i = 1; i < report.findings.size(); ++i) {
    const Finding& a = report.findings[i - 1];
    const Finding& b = report.findings[i];
    EXPECT_LT(std::tie(a.path, a.code), std::tie(b.path, b.code));
  }
}

// The same JSON with every object's members written in reverse order.
std::string ReversedText(const json::Value& value) {
  if (value.is_object()) {
    std::vector<std::string> members;
    for (const auto& [key, member] : value.items()) {
      members.push_back(json::Value(key).dump() + ":" + ReversedText(member));
    }
    std::reverse(members.begin(), members.end());
    std::string out = "{";
    for (std::size_t i = 0; i < members.size(); ++i) out += (i ? "," : "") + members[i];
    return out + "}";
  }
  if (value.is_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < value.size(); ++i) out += (i ? "," : "") + ReversedText(value[i]);
    return out + "]";
  }
  return value.dump();
}

TEST(Determinism, ByteIdenticalAcrossRunsAndMemberOrders) {
  json::Value document = GoldenDocument();
  document["variables"] = {{"zeta", "z"}, {"alpha", 1}};
  Step(document, 2)["when"] = "$variables.alpha == 1";
  const McpResolver resolver;
  for (const Options options : {Options{false}, Options{true}}) {
    auto forward = uws::ParseDocument(document.dump(), internal::TestdataDir());
    auto reversed = uws::ParseDocument(ReversedText(document), internal::TestdataDir());
    ASSERT_TRUE(forward.ok() && reversed.ok());
    const std::string first = Analyze(*forward, {&resolver}, options)->ToJson().dump();
    EXPECT_EQ(first, Analyze(*forward, {&resolver}, options)->ToJson().dump());
    EXPECT_EQ(first, Analyze(*reversed, {&resolver}, options)->ToJson().dump());
  }
}

TEST(Analyze, InvalidDocumentIsAnError) {
  json::Value document = GoldenDocument();
  Step(document, 2)["operationRef"] = "nowhere";
  auto parsed = ToDocument(document);
  ASSERT_TRUE(parsed.ok());
  auto report = Analyze(*parsed, {});
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, "uws.invalid");
}

TEST(Analyze, FindingsNeverCarryValues) {
  json::Value document = GoldenDocument();
  document["operations"][2]["request"]["body"]["text"] = "secret-literal-value";
  Step(document, 0)["when"] = "$inputs.token == \"hunter2\"";
  const std::string text = AnalyzeValue(document).ToJson().dump();
  EXPECT_EQ(text.find("secret-literal-value"), std::string::npos);
  EXPECT_EQ(text.find("hunter2"), std::string::npos);
}

TEST(Analyze, UnreferencedOperationsAreAnalyzedWithEmptyInputs) {
  json::Value document = GoldenDocument();
  document["operations"].push_back(McpOperation("lonely", "send_mail", {{"target", "$inputs.target"}}));
  const Report report = AnalyzeValue(document);
  EXPECT_TRUE(HasFinding(report, kUnresolvedReference, "operations[3].request.body.target"));
  EXPECT_TRUE(HasFinding(report, kUnknownProvenance, "operations[3].request.body.target"));
}

TEST(Analyze, VariablesAreTrustedLiterals) {
  json::Value document = GoldenDocument();
  document["variables"] = {{"to", "ops@example.test"}};
  Step(document, 2)["inputs"]["target"] = "$variables.to";
  const Report report = AnalyzeValue(document);
  EXPECT_THAT(Codes(report), IsEmpty());
  const Edge* edge = FindEdge(report, "variables.to", "workflows[0].steps[2].inputs.target");
  ASSERT_NE(edge, nullptr);
  EXPECT_EQ(edge->provenance, "trusted");
  EXPECT_EQ(edge->capability, "free_text");
}

TEST(Analyze, DeclarationPrecedence) {
  // Operation default beats the resolver's defaultTrust; a per-output level beats both.
  json::Value document = GoldenDocument();
  document["operations"][1]["request"]["body"]["prompt"] = "fixed text";
  Step(document, 1).erase("inputs");
  document["contentTrust"]["operations"]["model"] = {{"default", "trusted"}};
  const Report trusted = AnalyzeValue(document);
  EXPECT_THAT(Codes(trusted), IsEmpty());
  document["contentTrust"]["operations"]["model"]["outputs"] = {{"summary", "unknown"}};
  EXPECT_TRUE(HasFinding(AnalyzeValue(document), kUnknownProvenance, "operations[2].request.body.target"));
}

// ---- resolver contracts and the 1.9.2 option ------------------------------------------

json::Value RelayDocument() {
  // read (MCP, untrusted) -> relay (no resolver, declared trusted) -> send (authority).
  json::Value document = GoldenDocument();
  document["operations"][1] = json::Value::parse(R"({"operationId": "relay",
      "x-uws-operation-profile": "example.relay.0.1", "outputs": {"text": "$inputs.text"}})");
  Step(document, 1) = json::Value::parse(R"({"stepId": "relay_step", "operationRef": "relay",
      "inputs": {"text": "$steps.read_step.outputs.body"}, "outputs": {"text": "$outputs.text"}})");
  Step(document, 2)["inputs"]["target"] = "$steps.relay_step.outputs.text";
  document["contentTrust"]["operations"]["relay"] = {{"default", "trusted"}};
  return document;
}

TEST(V192, DeclarationsJoinInsteadOfReplacing) {
  EXPECT_THAT(Codes(AnalyzeValue(RelayDocument())), Not(Contains(kUntrustedAuthority)));
  EXPECT_TRUE(
      HasFinding(AnalyzeValue(RelayDocument(), {true}), kUntrustedAuthority, "operations[2].request.body.target"));
}

TEST(V192, StrictClaimsAreDiscarded) {
  json::Value document = GoldenDocument();
  FixedResolver resolver;
  OperationContract bad;
  bad.inputs.push_back({"/request/body/target", "command", {}});  // not a kind
  bad.default_trust = "untrusted";
  resolver.contracts["send"] = bad;
  // 1.9.1 reads the bad kind as data; 1.9.2 discards the claim.
  const Report lenient = AnalyzeValue(document, {}, {&resolver});
  EXPECT_THAT(Codes(lenient), Not(Contains(kResolverFailure)));
  const Report strict = AnalyzeValue(document, {true}, {&resolver});
  EXPECT_TRUE(HasFinding(strict, kResolverFailure, "operations[2]"));

  OperationContract undeclared;
  undeclared.outputs["nothing"].capability = "free_text";
  resolver.contracts["send"] = undeclared;
  EXPECT_THAT(Codes(AnalyzeValue(document, {}, {&resolver})), Not(Contains(kResolverFailure)));
  EXPECT_TRUE(HasFinding(AnalyzeValue(document, {true}, {&resolver}), kResolverFailure, "operations[2]"));

  OperationContract dangling;
  dangling.inputs.push_back({"/body/absent", "data", {}});
  resolver.contracts["send"] = dangling;
  // 1.9.1: the channel does not resolve, so resolver_failure and an unknown channel.
  const Report missing = AnalyzeValue(document, {}, {&resolver});
  EXPECT_TRUE(HasFinding(missing, kResolverFailure, "operations[2]"));
  EXPECT_TRUE(HasFinding(missing, kUnknownProvenance, "operations[2].request.body.absent"));
  const Report discarded = AnalyzeValue(document, {true}, {&resolver});
  EXPECT_TRUE(HasFinding(discarded, kResolverFailure, "operations[2]"));
  EXPECT_FALSE(HasFinding(discarded, kUnknownProvenance, "operations[2].request.body.absent"));
}

TEST(V192, ResolverErrorsAreFindings) {
  FixedResolver resolver;
  resolver.failing.insert("model");
  const Report report = AnalyzeValue(GoldenDocument(), {}, {&resolver});
  EXPECT_TRUE(HasFinding(report, kResolverFailure, "operations[1]"));
}

TEST(V192, ChannelReferencesAreEvaluatedAtTheirPaths) {
  json::Value document = GoldenDocument();
  document["operations"][2]["request"]["body"]["target"] = "{{ mail.to }}";
  FixedResolver resolver;
  OperationContract contract;
  contract.inputs.push_back({"/body/target", "authority",
                             {{"$inputs.target", "/to"}, {"not an expression $", ""}}});
  resolver.contracts["send"] = contract;
  const Report report = AnalyzeValue(document, {}, {&resolver});
  EXPECT_NE(FindEdge(report, "workflows[0].steps[1].outputs.summary", "operations[2].request.body.target.to"), nullptr);
  EXPECT_TRUE(HasFinding(report, kOpaqueExpression, "operations[2].request.body.target"));
  // model is unresolved here, so its summary (and the channel) has unknown provenance.
  EXPECT_TRUE(HasFinding(report, kUnknownProvenance, "operations[2].request.body.target"));
}

TEST(V192, ContractWithoutChannelsStillScansTheRequest) {
  json::Value document = GoldenDocument();
  FixedResolver resolver;
  resolver.contracts["send"] = OperationContract{};
  const std::string to = "operations[2].request.body.target";
  const std::string from = "workflows[0].steps[1].outputs.summary";
  EXPECT_EQ(FindEdge(AnalyzeValue(document, {}, {&resolver}), from, to), nullptr);
  EXPECT_NE(FindEdge(AnalyzeValue(document, {true}, {&resolver}), from, to), nullptr);
}

TEST(V192, OutputsAreProgressive) {
  json::Value document = GoldenDocument();
  document["operations"][0]["outputs"]["zcopy"] = "$outputs.body";
  Step(document, 0)["outputs"]["copy"] = "$outputs.zcopy";
  Step(document, 0)["outputs"]["second"] = "$outputs.body";
  const Report old = AnalyzeValue(document);
  EXPECT_TRUE(HasFinding(old, kUnresolvedReference, "operations[0].outputs.zcopy"));
  const Report refined = AnalyzeValue(document, {true});
  EXPECT_FALSE(HasFinding(refined, kUnresolvedReference, "operations[0].outputs.zcopy"));
  EXPECT_NE(FindEdge(refined, "operations[0].outputs.zcopy", "workflows[0].steps[0].outputs.copy"), nullptr);
}

TEST(V192, WorkflowConditionsAddNoContext) {
  json::Value document = GoldenDocument();
  document["workflows"][0]["when"] = "$variables.on == true";
  document["variables"] = {{"on", true}};
  document["workflows"][0]["outputs"] = {{"sent", "$steps.model_step.outputs.summary"}};
  EXPECT_TRUE(HasFinding(AnalyzeValue(document), kNonDominatingReference, "workflows[0].outputs.sent"));
  EXPECT_FALSE(HasFinding(AnalyzeValue(document, {true}), kNonDominatingReference, "workflows[0].outputs.sent"));
}

TEST(V192, StructuralAncestorsDominateTheirChildren) {
  json::Value document = GoldenDocument();
  json::Value steps = document["workflows"][0]["steps"];
  document["workflows"][0]["steps"] = json::Value::array();
  json::Value group = {
      {"stepId", "group"}, {"type", "sequence"}, {"outputs", {{"done", "$steps.read_step.outputs.body"}}}};
  steps[2]["inputs"]["target"] = "$steps.group.outputs.done";
  group["steps"] = steps;
  document["workflows"][0]["steps"].push_back(group);
  EXPECT_TRUE(
      HasFinding(AnalyzeValue(document), kNonDominatingReference, "workflows[0].steps[0].steps[2].inputs.target"));
  EXPECT_FALSE(HasFinding(AnalyzeValue(document, {true}), kNonDominatingReference,
                          "workflows[0].steps[0].steps[2].inputs.target"));
}

TEST(V192, TriggersAreScopedByRoutes) {
  json::Value document = GoldenDocument();
  Step(document, 2)["inputs"]["target"] = "$trigger.body.to";
  json::Value other = {{"workflowId", "other"}, {"type", "sequence"},
                       {"steps", {{{"stepId", "noop"}, {"operationRef", "read"}}}}};
  document["workflows"].push_back(other);
  document["triggers"] = json::Value::parse(R"([
    {"triggerId": "internal", "outputs": ["out"], "routes": [{"output": "out", "to": ["main"]}]},
    {"triggerId": "public", "outputs": ["out"], "routes": [{"output": "out", "to": ["other"]}]}])");
  document["contentTrust"]["triggers"] = {{"internal", "trusted"}};
  EXPECT_TRUE(HasFinding(AnalyzeValue(document), kUntrustedAuthority, "operations[2].request.body.target"));
  EXPECT_FALSE(HasFinding(AnalyzeValue(document, {true}), kUntrustedAuthority, "operations[2].request.body.target"));
}

TEST(V192, OddKeysAreBracketed) {
  json::Value document = GoldenDocument();
  document["operations"][0]["request"]["body"]["x.y"] = "$inputs.folder";
  FixedResolver resolver;  // unresolved operations scan the whole request
  EXPECT_TRUE(HasFinding(AnalyzeValue(document, {}, {&resolver}), kUnresolvedReference,
                         "operations[0].request.body.x.y"));
  EXPECT_TRUE(HasFinding(AnalyzeValue(document, {true}, {&resolver}), kUnresolvedReference,
                         "operations[0].request.body[\"x.y\"]"));
}

// ---- policy ---------------------------------------------------------------------------

TEST(FindingsPolicy, BlocksByLevel) {
  Report report;
  report.findings.push_back(F(kUnknownProvenance, "workflows[0].when"));
  EXPECT_TRUE(CheckFindingsPolicy(report, manifest::FindingsBlock::kNone).ok());
  EXPECT_TRUE(CheckFindingsPolicy(report, manifest::FindingsBlock::kHigh).ok());
  Status warning = CheckFindingsPolicy(report, manifest::FindingsBlock::kWarning);
  ASSERT_FALSE(warning.ok());
  EXPECT_EQ(warning.error().code, "content_trust.blocked");
  EXPECT_EQ(warning.error().details["findings"][0]["path"], "workflows[0].when");

  report.findings.push_back(F(kUntrustedAuthority, "operations[2].request.body.target"));
  Status high = CheckFindingsPolicy(report, manifest::FindingsBlock::kHigh);
  ASSERT_FALSE(high.ok());
  EXPECT_EQ(high.error().details["findings"].size(), 1u);
  EXPECT_EQ(high.error().details["findings"][0]["code"], kUntrustedAuthority);
  EXPECT_TRUE(CheckFindingsPolicy(Report{}, manifest::FindingsBlock::kWarning).ok());
}

}  // namespace
}  // namespace udon::trust
