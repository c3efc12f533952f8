#include "schema/schema.h"

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "json/json.h"
#include "schema/internal/test_schemas.h"

namespace udon::schema {
namespace {

using testing::J;
using testing::MustCompile;

std::string CompileErrorCode(std::string_view text, const CompileOptions& options = {}) {
  auto compiled = CompiledSchema::Compile(J(text), options);
  return compiled.ok() ? std::string("ok") : compiled.error().code;
}

TEST(SchemaTest, DefaultDialectIs202012) {
  CompiledSchema schema = MustCompile(R"({"prefixItems": [{"type": "string"}]})");
  EXPECT_FALSE(schema.IsValid(J("[1]")));
  EXPECT_TRUE(schema.IsValid(J(R"(["a", 1])")));
}

TEST(SchemaTest, Draft07ChosenBySchemaKeyword) {
  CompiledSchema schema = MustCompile(
      R"({"$schema": "http://json-schema.org/draft-07/schema#",
          "items": [{"type": "string"}], "additionalItems": false,
          "prefixItems": [{"type": "integer"}]})");
  EXPECT_TRUE(schema.IsValid(J(R"(["a"])")));
  EXPECT_FALSE(schema.IsValid(J(R"(["a", 1])")));
  EXPECT_FALSE(schema.IsValid(J("[1]")));
}

TEST(SchemaTest, UnknownDialectIsRefusedNotDowngraded) {
  EXPECT_EQ(CompileErrorCode(R"({"$schema": "https://json-schema.org/draft/2019-09/schema"})"),
            "input.unsupported_dialect");
  EXPECT_EQ(CompileErrorCode(R"({"$schema": "http://example.com/my-dialect"})"),
            "input.unsupported_dialect");
  CompileOptions options;
  options.default_dialect = "http://json-schema.org/draft-04/schema#";
  EXPECT_EQ(CompileErrorCode("{}", options), "input.unsupported_dialect");
}

TEST(SchemaTest, InvalidKeywordValuesCarryAPointer) {
  auto compiled = CompiledSchema::Compile(J(R"({"properties": {"a": {"minLength": -1}}})"));
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.error().code, "schema.invalid");
  EXPECT_EQ(compiled.error().pointer, "/properties/a/minLength");
  EXPECT_EQ(CompileErrorCode(R"({"type": "strin"})"), "schema.invalid");
  EXPECT_EQ(CompileErrorCode(R"({"pattern": "(?i)x"})"), "schema.invalid");
  EXPECT_EQ(CompileErrorCode(R"({"pattern": "a++"})"), "schema.invalid");
  EXPECT_EQ(CompileErrorCode("5"), "schema.invalid");
}

TEST(SchemaTest, ReferencesNeverLeaveTheRegistry) {
  EXPECT_EQ(CompileErrorCode(R"({"$ref": "https://example.com/remote.json"})"),
            "schema.unresolved_ref");
  EXPECT_EQ(CompileErrorCode(R"({"$ref": "#/$defs/missing"})"), "schema.unresolved_ref");
  Registry registry;
  ASSERT_TRUE(registry.Add("https://example.com/remote.json", J(R"({"type": "integer"})")).ok());
  CompileOptions options;
  options.registry = &registry;
  CompiledSchema schema = MustCompile(R"({"$ref": "https://example.com/remote.json"})", options);
  EXPECT_TRUE(schema.IsValid(J("3")));
  EXPECT_FALSE(schema.IsValid(J("3.5")));
  EXPECT_FALSE(registry.Add("relative.json", J("{}")).ok());
}

TEST(SchemaTest, MetaSchemasAreBundled) {
  CompiledSchema schema = MustCompile(R"({"$ref": "https://json-schema.org/draft/2020-12/schema"})");
  EXPECT_TRUE(schema.IsValid(J(R"({"type": "string"})")));
  EXPECT_FALSE(schema.IsValid(J(R"({"minLength": -1})")));
  auto checked = CheckAgainstMetaSchema(J(R"({"$schema": "http://json-schema.org/draft-07/schema#",
                                              "type": 7})"));
  ASSERT_TRUE(checked.ok());
  EXPECT_FALSE(checked->valid);
  auto good = CheckAgainstMetaSchema(J(R"({"type": "object", "unevaluatedProperties": false})"));
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE(good->valid);
}

TEST(SchemaTest, BasicOutputLocations) {
  CompiledSchema schema = MustCompile(
      R"({"$id": "https://example.com/s.json", "type": "object",
          "properties": {"a/b": {"$ref": "#/$defs/small"}},
          "$defs": {"small": {"maximum": 3}}})");
  ValidationResult result = schema.Validate(J(R"({"a/b": 7})"));
  ASSERT_FALSE(result.valid);
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].keyword_location, "/properties/a~1b/$ref/maximum");
  EXPECT_EQ(result.errors[0].absolute_keyword_location,
            "https://example.com/s.json#/$defs/small/maximum");
  EXPECT_EQ(result.errors[0].instance_location, "/a~1b");
  // Messages are fixed texts: the value 7 never appears.
  EXPECT_EQ(result.ToBasicOutput().dump().find('7'), std::string::npos);
  EXPECT_TRUE(schema.Validate(J(R"({"a/b": 2})")).valid);
}

TEST(SchemaTest, FailedBranchesOfPassingApplicatorsLeaveNoErrors) {
  CompiledSchema schema = MustCompile(R"({"anyOf": [{"type": "string"}, {"minimum": 2}]})");
  ValidationResult result = schema.Validate(J("5"));
  EXPECT_TRUE(result.valid);
  EXPECT_TRUE(result.errors.empty());
  ValidationResult failed = schema.Validate(J("1"));
  EXPECT_FALSE(failed.valid);
  EXPECT_EQ(failed.errors.size(), 3u);  // both branches and anyOf itself
}

TEST(SchemaTest, FormatIsAnAnnotationUnlessAsserted) {
  std::string text = R"({"format": "date-time"})";
  EXPECT_TRUE(MustCompile(text).IsValid(J(R"("yesterday")")));
  CompileOptions options;
  options.format_assertion = true;
  CompiledSchema asserting = MustCompile(text, options);
  EXPECT_FALSE(asserting.IsValid(J(R"("yesterday")")));
  EXPECT_TRUE(asserting.IsValid(J(R"("2025-11-25T10:00:00Z")")));
  EXPECT_TRUE(asserting.IsValid(J("12")));
}

TEST(SchemaTest, LengthCountsCodePoints) {
  CompiledSchema schema = MustCompile(R"({"maxLength": 2, "minLength": 2})");
  EXPECT_TRUE(schema.IsValid(J("\"\xF0\x9F\x92\xA9\xF0\x9F\x92\xA9\"")));
  EXPECT_FALSE(schema.IsValid(J(R"("abc")")));
}

TEST(SchemaTest, DecimalMultipleOf) {
  CompiledSchema schema = MustCompile(R"({"multipleOf": 0.01})");
  EXPECT_TRUE(schema.IsValid(J("19.99")));
  EXPECT_TRUE(schema.IsValid(J("0.07")));
  EXPECT_FALSE(schema.IsValid(J("0.075")));
}

TEST(SchemaTest, RefCycleWithoutProgressIsALimit) {
  CompiledSchema schema = MustCompile(
      R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})");
  ValidationResult result = schema.Validate(J("1"));
  EXPECT_FALSE(result.valid);
  ASSERT_TRUE(result.limit_error.has_value());
  EXPECT_EQ(result.limit_error->code, "schema.limit_exceeded");
  EXPECT_FALSE(schema.IsValid(J("1")));
}

TEST(SchemaTest, RecursionWithProgressIsFine) {
  CompiledSchema schema = MustCompile(
      R"({"type": "object", "properties": {"next": {"$ref": "#"}}, "additionalProperties": false})");
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += R"({"next": )";
  deep += "{}";
  for (int i = 0; i < 100; ++i) deep += "}";
  EXPECT_TRUE(schema.IsValid(J(deep)));
}

TEST(SchemaTest, DeepInstancesHitTheDepthLimitNotTheStack) {
  CompiledSchema schema = MustCompile(R"({"items": {"$ref": "#"}})");
  json::Value deep = json::Value::array();
  json::Value* innermost = &deep;
  for (int i = 0; i < 5000; ++i) {
    innermost->push_back(json::Value::array());
    innermost = &innermost->back();
  }
  ValidationResult result = schema.Validate(deep);
  EXPECT_FALSE(result.valid);
  ASSERT_TRUE(result.limit_error.has_value());
}

TEST(SchemaTest, DeepSchemasHitTheDepthLimit) {
  json::Value deep = json::Value::object();
  json::Value* innermost = &deep;
  for (int i = 0; i < 2000; ++i) {
    (*innermost)["not"] = json::Value::object();
    innermost = &(*innermost)["not"];
  }
  auto compiled = CompiledSchema::Compile(deep);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.error().code, "schema.limit_exceeded");
}

TEST(SchemaTest, CatastrophicBacktrackingIsBounded) {
  CompiledSchema schema = MustCompile(R"({"pattern": "^(a+)+$"})");
  std::string subject(5000, 'a');
  subject += "!";
  ValidationResult result = schema.Validate(json::Value(subject));
  EXPECT_FALSE(result.valid);
  ASSERT_TRUE(result.limit_error.has_value());
  EXPECT_EQ(result.limit_error->code, "schema.limit_exceeded");
}

TEST(SchemaTest, HugePatternsAreRefused) {
  json::Value schema = {{"pattern", std::string(100000, 'a')}};
  auto compiled = CompiledSchema::Compile(schema);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.error().code, "schema.limit_exceeded");
}

TEST(SchemaTest, UniqueItemsOnLargeArrays) {
  CompiledSchema schema = MustCompile(R"({"uniqueItems": true})");
  json::Value items = json::Value::array();
  for (int i = 0; i < 20000; ++i) items.push_back(i);
  EXPECT_TRUE(schema.IsValid(items));
  items.push_back(17.0);
  EXPECT_FALSE(schema.IsValid(items));
}

TEST(SchemaTest, UsableFromManyThreads) {
  CompiledSchema schema = MustCompile(
      R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0},
          "s": {"pattern": "^[a-z]+$"}}, "required": ["n"], "unevaluatedProperties": false})");
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        json::Value good = {{"n", i}, {"s", "abc"}};
        json::Value bad = {{"n", -i - 1}, {"s", "abc"}, {"x", 1}};
        if (!schema.IsValid(good) || schema.IsValid(bad) || schema.Validate(bad).valid) {
          ++failures[t];
        }
        // The text path: one scratch document per thread.
        auto good_text = schema.IsValidText(good.dump());
        auto bad_text = schema.ValidateText(bad.dump());
        if (!good_text.ok() || !*good_text || !bad_text.ok() ||
            bad_text->ToBasicOutput() != schema.Validate(bad).ToBasicOutput()) {
          ++failures[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int count : failures) EXPECT_EQ(count, 0);
}

TEST(KeywordValueTest, TellsTheKeywordsOfBothDialectsFromOtherWords) {
  EXPECT_EQ(KeywordValueOf("properties"), KeywordValue::kSchemaMap);
  EXPECT_EQ(KeywordValueOf("$defs"), KeywordValue::kSchemaMap);
  EXPECT_EQ(KeywordValueOf("definitions"), KeywordValue::kSchemaMap);
  EXPECT_EQ(KeywordValueOf("dependencies"), KeywordValue::kSchemaMap);
  EXPECT_EQ(KeywordValueOf("dependentSchemas"), KeywordValue::kSchemaMap);
  EXPECT_EQ(KeywordValueOf("patternProperties"), KeywordValue::kSchemaMap);
  EXPECT_EQ(KeywordValueOf("dependentRequired"), KeywordValue::kNameMap);
  EXPECT_EQ(KeywordValueOf("allOf"), KeywordValue::kSchemaArray);
  EXPECT_EQ(KeywordValueOf("prefixItems"), KeywordValue::kSchemaArray);
  EXPECT_EQ(KeywordValueOf("items"), KeywordValue::kSchema) << "a schema, or draft-07's array of them";
  EXPECT_EQ(KeywordValueOf("additionalItems"), KeywordValue::kSchema);
  EXPECT_EQ(KeywordValueOf("contentSchema"), KeywordValue::kSchema);
  for (const char* keyword : {"type", "enum", "const", "required", "$ref", "$dynamicAnchor", "$recursiveRef",
                              "$vocabulary", "$comment", "deprecated", "readOnly", "writeOnly", "examples",
                              "contentMediaType", "format", "minContains", "multipleOf"}) {
    EXPECT_EQ(KeywordValueOf(keyword), KeywordValue::kValue) << keyword;
  }
  for (const char* word : {"", "Type", "x-mcp-header", "nullable", "discriminator", "type "}) {
    EXPECT_EQ(KeywordValueOf(word), KeywordValue::kNone) << word;
  }
}

}  // namespace
}  // namespace udon::schema
