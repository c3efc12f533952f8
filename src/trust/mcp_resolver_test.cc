#include "trust/mcp_resolver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/file.h"
#include "trust/analyzer.h"
#include "trust/internal/test_documents.h"
#include "uws/check.h"

namespace udon::trust {
namespace {

using internal::GoldenDocument;
using internal::ToDocument;

Resolution ResolveIn(const json::Value& value, std::size_t index) {
  auto document = ToDocument(value);
  EXPECT_TRUE(document.ok());
  return McpResolver().ResolveOperation(*document, index, document->root["operations"][index]);
}

TEST(McpResolver, ContractOfTheGoldenOperations) {
  const json::Value document = GoldenDocument();
  const Resolution model = ResolveIn(document, 1);
  ASSERT_TRUE(model.owned);
  ASSERT_FALSE(model.error.has_value()) << model.error->Describe();
  EXPECT_EQ(model.contract.default_trust, "untrusted");
  EXPECT_TRUE(model.contract.inherits_input_provenance);
  // /style is reviewed but not bound: not emitted.
  ASSERT_EQ(model.contract.inputs.size(), 1u);
  EXPECT_EQ(model.contract.inputs[0].path, "/request/body/prompt");
  EXPECT_EQ(model.contract.inputs[0].kind, "data");
  EXPECT_EQ(model.contract.outputs.at("summary").capability, "free_text");

  const Resolution send = ResolveIn(document, 2);
  ASSERT_EQ(send.contract.inputs.size(), 1u);
  EXPECT_EQ(send.contract.inputs[0].kind, "authority");
}

TEST(McpResolver, IgnoresOtherProfiles) {
  json::Value document = GoldenDocument();
  document["operations"][0] = {{"operationId", "read"}, {"x-uws-operation-profile", "example.other.0.1"}};
  const Resolution resolution = ResolveIn(document, 0);
  EXPECT_FALSE(resolution.owned);
  EXPECT_FALSE(resolution.error.has_value());
}

TEST(McpResolver, FailsClosed) {
  auto fails = [](json::Value document, std::size_t index) {
    const Resolution resolution = ResolveIn(document, index);
    return resolution.owned && resolution.error.has_value();
  };
  json::Value digest = GoldenDocument();
  digest["operations"][0]["x-openudon-mcp"]["manifestSha256"] = std::string(64, 'f');
  EXPECT_TRUE(fails(digest, 0));
  json::Value missing = GoldenDocument();
  missing["operations"][0]["x-openudon-mcp"]["manifest"] = "./absent.tools.json";
  EXPECT_TRUE(fails(missing, 0));
  json::Value server = GoldenDocument();
  server["operations"][0]["x-openudon-mcp"]["server"] = "elsewhere";
  EXPECT_TRUE(fails(server, 0));
  json::Value tool = GoldenDocument();
  tool["operations"][0]["x-openudon-mcp"]["tool"] = "no_such_tool";
  EXPECT_TRUE(fails(tool, 0));
  json::Value incomplete = GoldenDocument();
  incomplete["operations"][0]["x-openudon-mcp"].erase("server");
  EXPECT_TRUE(fails(incomplete, 0));
  json::Value dynamic = GoldenDocument();
  dynamic["operations"][1]["request"]["body"] = "$inputs.args";
  EXPECT_TRUE(fails(dynamic, 1));
  json::Value unclassified = GoldenDocument();
  unclassified["operations"][1]["request"]["body"]["extra"] = {{"nested", "$inputs.prompt"}};
  EXPECT_TRUE(fails(unclassified, 1));
  // A literal under an unclassified key is not bound: no failure.
  json::Value literal = GoldenDocument();
  literal["operations"][1]["request"]["body"]["extra"] = "plain";
  EXPECT_FALSE(fails(literal, 1));
}

// Each stage of manifest::ResolveBinding keeps the code this resolver has always given it.
TEST(McpResolver, EachBindingProblemKeepsItsCode) {
  auto code = [](json::Value document) {
    const Resolution resolution = ResolveIn(document, 0);
    return resolution.error ? resolution.error->code : std::string("none");
  };
  auto with = [](const char* member, json::Value value) {
    json::Value document = GoldenDocument();
    document["operations"][0]["x-openudon-mcp"][member] = std::move(value);
    return document;
  };
  EXPECT_EQ(code(with("manifestSha256", std::string(64, 'f'))), "manifest.digest_mismatch");
  EXPECT_EQ(code(with("manifest", "./absent.tools.json")), "manifest.invalid");
  EXPECT_EQ(code(with("manifest", "https://example.test/mail.tools.json")), "manifest.unreadable");
  EXPECT_EQ(code(with("server", "elsewhere")), "catalog.tool_missing");
  EXPECT_EQ(code(with("tool", "no_such_tool")), "catalog.tool_missing");
  EXPECT_EQ(code(with("server", "")), "uws.invalid");
}

// Issue 21: with the run's manifest cache, content trust reads no manifest the static
// checks already read.
TEST(McpResolver, SharesTheRunsReadOfTheManifest) {
  int reads = 0;
  auto manifests = std::make_shared<manifest::ManifestCache>([&reads](const std::string& path) {
    ++reads;
    return base::ReadFile(path);
  });
  auto document = ToDocument(GoldenDocument());
  ASSERT_TRUE(document.ok());
  uws::CheckedDocument checked = uws::CheckParsedDocument(*document, manifest::Policy{}, *manifests);
  ASSERT_TRUE(checked.ok()) << checked.error->Describe();
  EXPECT_EQ(reads, 1) << "three bindings of one manifest";
  const McpResolver resolver(manifest::Policy{}, manifests);
  auto report = Analyze(*document, {&resolver});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(reads, 1);
}

TEST(McpResolver, OutputCapabilitiesFollowTheOutputSchema) {
  json::Value document = GoldenDocument();
  document["operations"][0]["outputs"] = {
      {"whole", "$response.body"},       {"body", "$response.body#/body"},   {"flag", "$response.body#/flag"},
      {"kind", "$response.body#/kind"},  {"parts", "$response.body#/parts"}, {"part", "$response.body#/parts/0"},
      {"size", "$response.body#/meta/size"}, {"either", "$response.body#/either"},
      {"absent", "$response.body#/absent"}, {"status", "$response.statusCode"}};
  const Resolution resolution = ResolveIn(document, 0);
  ASSERT_FALSE(resolution.error.has_value());
  const auto& outputs = resolution.contract.outputs;
  EXPECT_EQ(outputs.at("whole").capability, "composite");
  EXPECT_EQ(outputs.at("body").capability, "free_text");
  EXPECT_EQ(outputs.at("flag").capability, "constrained_scalar");
  EXPECT_EQ(outputs.at("kind").capability, "constrained_scalar");
  EXPECT_EQ(outputs.at("parts").capability, "composite");
  EXPECT_EQ(outputs.at("part").capability, "free_text");
  EXPECT_EQ(outputs.at("size").capability, "constrained_scalar");
  EXPECT_EQ(outputs.at("either").capability, "unknown");
  EXPECT_EQ(outputs.at("absent").capability, "unknown");
  EXPECT_FALSE(outputs.contains("status"));  // not read from the body: the expression decides
}

TEST(CapabilityOfSchema, Cases) {
  const json::Value root = json::Value::parse(R"({"$defs": {"s": {"type": "string"}}})");
  auto of = [&](const char* text) {
    const json::Value schema = json::Value::parse(text);
    return CapabilityOfSchema(&schema, root);
  };
  EXPECT_EQ(of(R"({"type": "string"})"), "free_text");
  EXPECT_EQ(of(R"({"type": "string", "enum": ["a", "b"]})"), "constrained_scalar");
  EXPECT_EQ(of(R"({"const": 3})"), "constrained_scalar");
  EXPECT_EQ(of(R"({"type": "null"})"), "constrained_scalar");
  EXPECT_EQ(of(R"({"type": "object"})"), "composite");
  EXPECT_EQ(of(R"({"type": ["string", "null"]})"), "unknown");
  EXPECT_EQ(of(R"({})"), "unknown");
  EXPECT_EQ(of(R"({"oneOf": [{"type": "string"}]})"), "unknown");
  EXPECT_EQ(of(R"({"$ref": "#/$defs/s"})"), "free_text");
  EXPECT_EQ(of(R"({"$ref": "#/$defs/none"})"), "unknown");
  EXPECT_EQ(CapabilityOfSchema(nullptr, root), "unknown");
}

}  // namespace
}  // namespace udon::trust
