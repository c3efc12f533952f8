#include "uws/document.h"

#include <string>

#include <gtest/gtest.h>

#include "json/json.h"

namespace udon::uws {
namespace {

// The project's own UWS fixtures (tests/data/uws/README.md).
const std::string kFixtures = std::string(UDON_SOURCE_DIR) + "/tests/data/uws/";

bool HasRule(const std::vector<Error>& errors, const std::string& rule) {
  for (const auto& error : errors) {
    if (error.details.value("rule", "") == rule) return true;
  }
  return false;
}

std::vector<Error> ValidateText(const std::string& text) {
  auto document = ParseDocument(text, "/tmp");
  if (!document.ok()) return {document.error()};
  return Validate(*document);
}

TEST(UwsDocument, FixturesValidate) {
  for (const char* name : {"sample.uws.json", "big/big.json"}) {
    auto document = LoadDocument(kFixtures + name);
    ASSERT_TRUE(document.ok()) << name << ": " << document.error().Describe();
    auto errors = Validate(*document);
    EXPECT_TRUE(errors.empty()) << name << ": " << ErrorsToJson(errors).dump();
  }
}

TEST(UwsDocument, BigKeepsExtensionMembers) {
  auto document = LoadDocument(kFixtures + "big/big.json");
  ASSERT_TRUE(document.ok());
  bool found = false;
  for (const auto& [key, value] : document->root.items()) found = found || IsExtensionKey(key);
  EXPECT_TRUE(found);
}

struct InvalidCase {
  const char* file;
  const char* rule;
};

class UwsInvalidFixture : public testing::TestWithParam<InvalidCase> {};

TEST_P(UwsInvalidFixture, FailsWithItsNamedError) {
  const InvalidCase& c = GetParam();
  auto document = LoadDocument(kFixtures + "invalid/" + c.file);
  std::vector<Error> errors;
  if (!document.ok()) {
    errors.push_back(document.error());
  } else {
    errors = Validate(*document);
  }
  ASSERT_FALSE(errors.empty()) << c.file;
  for (const auto& error : errors) EXPECT_EQ(error.code, "uws.invalid");
  EXPECT_TRUE(HasRule(errors, c.rule)) << c.file << ": " << ErrorsToJson(errors).dump();
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, UwsInvalidFixture,
    ::testing::Values(InvalidCase{"bad_uws_version.json", "bad_uws_version"},
                    InvalidCase{"dependency_cycle.json", "dependency_cycle"},
                    InvalidCase{"duplicate_operation_id.json", "duplicate_operation"},
                    InvalidCase{"merge_without_dependson.json", "merge_without_dependson"},
                    InvalidCase{"missing_openapi_binding.json", "missing_operation_binding"},
                    InvalidCase{"regex_criterion_no_context.json", "criterion_without_context"},
                    InvalidCase{"retry_without_limit.json", "retry_without_limit"},
                    InvalidCase{"unknown_source_description.json", "unknown_source_description"}));

constexpr const char* kMinimal = R"({"uws": "1.9.0", "info": {"title": "t", "version": "1"},
  "operations": [{"operationId": "op", "x-uws-operation-profile": "p"}]})";

TEST(UwsDocument, MinimalDocumentIsValid) { EXPECT_TRUE(ValidateText(kMinimal).empty()); }

TEST(UwsDocument, YamlLoads) {
  auto errors = ValidateText(
      "uws: 1.9.0\ninfo: {title: t, version: '1'}\noperations:\n  - operationId: op\n"
      "    x-uws-operation-profile: p\n    x-note: kept\n");
  EXPECT_TRUE(errors.empty()) << ErrorsToJson(errors).dump();
}

TEST(UwsDocument, VersionGate) {
  for (const char* version : {"1.10.0", "2.0.0", "1.9", "01.9.0", "1.09.0", "v1.9.0"}) {
    std::string text = std::string(R"({"uws": ")") + version + R"(", "info": {"title": "t", "version": "1"},
      "operations": [{"operationId": "op", "x-uws-operation-profile": "p"}]})";
    auto document = ParseDocument(text, "/tmp");
    ASSERT_FALSE(document.ok()) << version;
    EXPECT_EQ(document.error().details.value("rule", ""), "bad_uws_version") << version;
    EXPECT_EQ(document.error().pointer, "/uws");
  }
  for (const char* version : {"1.0.0", "1.9.1", "1.9.2", "1.9.0-rc.1"}) {
    std::string text = std::string(R"({"uws": ")") + version + R"(", "info": {"title": "t", "version": "1"},
      "operations": [{"operationId": "op", "x-uws-operation-profile": "p"}]})";
    EXPECT_TRUE(ParseDocument(text, "/tmp").ok()) << version;
  }
}

TEST(UwsDocument, MalformedTextIsInvalid) {
  auto document = ParseDocument(R"({"uws": "1.9.0", "uws": "1.9.0"})", "/tmp");
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.error().code, "uws.invalid");
}

TEST(UwsDocument, ContentTrustNeeds191) {
  const char* trust = R"(, "contentTrust": {"operations": {"op": {"default": "untrusted"}}}})";
  std::string base = R"({"info": {"title": "t", "version": "1"},
    "operations": [{"operationId": "op", "x-uws-operation-profile": "p"}])";
  auto old_errors = ValidateText(R"({"uws": "1.9.0", )" + base.substr(1) + trust);
  EXPECT_TRUE(HasRule(old_errors, "version_gate")) << ErrorsToJson(old_errors).dump();
  auto new_errors = ValidateText(R"({"uws": "1.9.1", )" + base.substr(1) + trust);
  EXPECT_TRUE(new_errors.empty()) << ErrorsToJson(new_errors).dump();
  auto bad = ValidateText(R"({"uws": "1.9.1", )" + base.substr(1) +
                          R"(, "contentTrust": {"operations": {"nope": {"default": "maybe"}}}})");
  EXPECT_EQ(bad.size(), 2u) << ErrorsToJson(bad).dump();
}

TEST(UwsDocument, AllErrorsAtOnceWithPointers) {
  auto errors = ValidateText(R"({"uws": "1.9.0", "info": {"title": "t", "version": "1"},
    "operations": [
      {"operationId": "a", "x-uws-operation-profile": "p", "request": {"body": {}, "form": {}}},
      {"operationId": "a", "x-uws-operation-profile": "p", "dependsOn": ["ghost"]},
      {"operationId": "b"}],
    "workflows": [{"workflowId": "w", "type": "sequence", "steps": [
      {"stepId": "s1", "operationRef": "missing"},
      {"stepId": "s1", "workflow": "nowhere"},
      {"stepId": "w", "type": "loop"}]}]})");
  for (const char* rule : {"schema", "duplicate_operation", "unknown_dependency", "missing_operation_binding",
                           "unknown_operation_ref", "duplicate_step", "unknown_workflow_ref", "ambiguous_name",
                           "loop_without_items"}) {
    EXPECT_TRUE(HasRule(errors, rule)) << rule << ": " << ErrorsToJson(errors).dump();
  }
  for (const auto& error : errors) {
    if (error.details.value("rule", "") == "unknown_dependency") {
      EXPECT_EQ(error.pointer, "/operations/1/dependsOn/0");
    }
  }
}

TEST(UwsDocument, WorkflowCallCycle) {
  auto errors = ValidateText(R"({"uws": "1.9.0", "info": {"title": "t", "version": "1"},
    "operations": [{"operationId": "op", "x-uws-operation-profile": "p"}],
    "workflows": [
      {"workflowId": "a", "type": "sequence", "steps": [{"stepId": "s1", "workflow": "b"}]},
      {"workflowId": "b", "type": "sequence", "steps": [{"stepId": "s2", "workflow": "a"}]}]})");
  EXPECT_TRUE(HasRule(errors, "workflow_call_cycle")) << ErrorsToJson(errors).dump();
}

TEST(UwsDocument, StepNamedAfterItsOperationIsNotAmbiguous) {
  auto errors = ValidateText(R"({"uws": "1.9.0", "info": {"title": "t", "version": "1"},
    "operations": [{"operationId": "op", "x-uws-operation-profile": "p"}],
    "workflows": [{"workflowId": "w", "type": "sequence", "steps": [{"stepId": "op", "operationRef": "op"}]}]})");
  EXPECT_TRUE(errors.empty()) << ErrorsToJson(errors).dump();
}

TEST(UwsDocument, TimeoutNeeds11) {
  auto errors = ValidateText(R"({"uws": "1.0.0", "info": {"title": "t", "version": "1"},
    "operations": [{"operationId": "op", "x-uws-operation-profile": "p", "timeout": 5}]})");
  EXPECT_TRUE(HasRule(errors, "version_gate")) << ErrorsToJson(errors).dump();
}

TEST(UwsDocument, HostileInputGetsAnError) {
  std::string deep(100000, '[');
  EXPECT_FALSE(ParseDocument(deep, "/tmp").ok());
  EXPECT_FALSE(ParseDocument("", "/tmp").ok());
  EXPECT_FALSE(ParseDocument("[]", "/tmp").ok());
}

}  // namespace
}  // namespace udon::uws
