// ValidateText / IsValidText: the same verdicts and errors as json::Parse + Validate.
#include <string>

#include <gtest/gtest.h>

#include "json/json.h"
#include "schema/internal/test_schemas.h"
#include "schema/schema.h"

namespace udon::schema {
namespace {

using testing::MustCompile;

void ExpectSameErrors(const Error& got, const Error& want, std::string_view text) {
  EXPECT_EQ(got.code, want.code) << text;
  EXPECT_EQ(got.message, want.message) << text;
  EXPECT_EQ(got.pointer, want.pointer) << text;
  ASSERT_EQ(got.location.has_value(), want.location.has_value()) << text;
  if (want.location) {
    EXPECT_EQ(got.location->offset, want.location->offset) << text;
    EXPECT_EQ(got.location->line, want.location->line) << text;
    EXPECT_EQ(got.location->column, want.location->column) << text;
  }
}

// Both text entry points against Parse + Validate / IsValid: verdict, every error unit in
// order, the limit error; or the parse error itself.
void ExpectSameAsDom(const CompiledSchema& schema, std::string_view text,
                     const json::ParseOptions& options = {}) {
  auto parsed = json::Parse(text, options);
  auto by_text = schema.ValidateText(text, options);
  auto quick = schema.IsValidText(text, options);
  ASSERT_EQ(by_text.ok(), parsed.ok()) << text;
  ASSERT_EQ(quick.ok(), parsed.ok()) << text;
  if (!parsed.ok()) {
    ExpectSameErrors(by_text.error(), parsed.error(), text);
    ExpectSameErrors(quick.error(), parsed.error(), text);
    return;
  }
  const ValidationResult want = schema.Validate(*parsed);
  EXPECT_EQ(*quick, schema.IsValid(*parsed)) << text;
  EXPECT_EQ(by_text->valid, want.valid) << text;
  EXPECT_EQ(by_text->ToBasicOutput(), want.ToBasicOutput()) << text;
  EXPECT_EQ(by_text->limit_error.has_value(), want.limit_error.has_value()) << text;
}

TEST(ValidateTextTest, SameVerdictsAndErrorsAsParseThenValidate) {
  CompiledSchema schema = MustCompile(R"({
    "$id": "https://example.com/t.json",
    "type": "object",
    "properties": {
      "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]"},
      "a/b": {"$ref": "#/$defs/small"},
      "n": {"type": "integer", "minimum": -3, "exclusiveMaximum": 100, "multipleOf": 3},
      "tags": {"type": "array", "items": {"enum": ["x", "y", {"k": [1, 2.0]}]},
               "uniqueItems": true, "minItems": 1, "contains": {"const": "x"}},
      "obj": {"propertyNames": {"maxLength": 3}, "minProperties": 1, "maxProperties": 3,
              "dependentRequired": {"a": ["b"]},
              "dependentSchemas": {"c": {"required": ["d"]}}},
      "any": {"oneOf": [{"type": "null"}, {"type": "boolean"}, {"const": {"z": [null]}}]}
    },
    "patternProperties": {"^x-": {"type": "number"}},
    "required": ["name"],
    "unevaluatedProperties": false,
    "$defs": {"small": {"maximum": 3}}
  })");
  for (const char* text : {
           R"({"name": "abc"})",
           R"({"name": "a"})",
           R"({"name": "Abcdefg", "a/b": 7, "n": 4.5})",
           R"({"n": 99, "name": "ab", "a/b": 3.0})",
           R"({"name": "ab", "n": 102})",
           R"({"name": "ab", "n": 18446744073709551615})",
           R"({"name": "ab", "n": -9223372036854775808})",
           R"({"name": "ab", "n": 6.0})",
           R"({"name": "ab", "tags": ["x", "y", {"k": [1, 2]}]})",
           R"({"name": "ab", "tags": ["x", {"k": [1, 2]}, {"k": [1.0, 2]}]})",
           R"({"name": "ab", "tags": ["y"]})",
           R"({"name": "ab", "tags": []})",
           R"({"name": "ab", "obj": {"a": 1, "long": 2}})",
           R"({"name": "ab", "obj": {"c": 1, "b": 2, "a": 3, "e": 4}})",
           R"({"name": "ab", "obj": {}})",
           R"({"name": "ab", "any": {"z": [null]}})",
           R"({"name": "ab", "any": true, "x-1": 2, "x-2": "no", "other": 1})",
           R"({"name": "ab", "any": "s"})",
           R"({"name": "\u00e9\u00e9", "x-\u0041": 1, "\u0000": 2})",
           "[1, 2]", "\"string\"", "null", "12.5",
       }) {
    ExpectSameAsDom(schema, text);
  }
}

TEST(ValidateTextTest, UniqueItemsOnLargeArraysOfObjects) {
  CompiledSchema schema = MustCompile(R"({"uniqueItems": true})");
  std::string text = "[";
  for (int i = 0; i < 40; ++i) text += "{\"i\":" + std::to_string(i) + ",\"s\":\"v\"},";
  ExpectSameAsDom(schema, text + "{\"s\":\"v\",\"i\":7.0}]");  // a duplicate of item 7
  ExpectSameAsDom(schema, text + "{\"s\":\"v\",\"i\":7.5}]");
}

// nlohmann's operator== compares an int64 with a uint64 after a cast (-1 equals 2^64-1);
// JSON equality does not. Both paths share one comparison.
TEST(ValidateTextTest, SignedAndUnsignedIntegersAreEqualOnlyAsTheSameNumber) {
  CompiledSchema schema = MustCompile(R"({"enum": [-1, 5]})");
  EXPECT_FALSE(schema.IsValid(*json::Parse("18446744073709551615")));
  ExpectSameAsDom(schema, "18446744073709551615");
  CompiledSchema large = MustCompile(R"({"const": 18446744073709551615})");
  EXPECT_FALSE(large.IsValid(*json::Parse("-1")));
  ExpectSameAsDom(large, "-1");
  ExpectSameAsDom(large, "18446744073709551615");
  CompiledSchema five = MustCompile(R"({"const": 5})");
  EXPECT_TRUE(five.IsValid(*json::Parse("5.0")));
  ExpectSameAsDom(five, "5.0");
}

TEST(ValidateTextTest, UnparsableTextReturnsTheParseError) {
  CompiledSchema schema = MustCompile(R"({"type": "object"})");
  for (const char* text : {R"({"a": 1, "a": 2})", "{\"a\": \"\xC0\xAF\"}", R"(["\ud800"])",
                           "{\"n\": 1e400}", "{} x", "{\"a\":\n  [1,]}", ""}) {
    ExpectSameAsDom(schema, text);
    auto result = schema.ValidateText(text);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code.rfind("json.", 0), 0u) << text;
  }
  json::ParseOptions options;
  options.max_depth = 2;
  ExpectSameAsDom(schema, "[[[]]]", options);
  options = {};
  options.max_bytes = 3;
  ExpectSameAsDom(schema, "{ }  ", options);
}

TEST(ValidateTextTest, LimitsHoldOnTheTextPath) {
  CompiledSchema cycle = MustCompile(
      R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})");
  ExpectSameAsDom(cycle, "1");
  EXPECT_FALSE(*cycle.IsValidText("1"));
  // Nesting the parser allows but the evaluator does not.
  CompiledSchema deep = MustCompile(R"({"items": {"$ref": "#"}})");
  json::ParseOptions options;
  options.max_depth = 3000;
  const std::string text = std::string(2000, '[') + std::string(2000, ']');
  ExpectSameAsDom(deep, text, options);
  auto result = deep.ValidateText(text, options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->limit_error.has_value());
  CompiledSchema backtracking = MustCompile(R"({"pattern": "^(a+)+$"})");
  ExpectSameAsDom(backtracking, "\"" + std::string(5000, 'a') + "!\"");
}

TEST(ValidateTextTest, ALargeTextThenSmallOnesOnTheSameThread) {
  // The per-thread document lets go of its memory after a large text and starts afresh.
  CompiledSchema schema = MustCompile(R"({"items": {"type": "string", "maxLength": 3}})");
  std::string large = "[";
  for (int i = 0; i < 200000; ++i) large += "\"abc\",";
  large += "\"abcd\"]";
  ExpectSameAsDom(schema, large);
  ExpectSameAsDom(schema, R"(["ab", "\n"])");
  ExpectSameAsDom(schema, R"(["abcd"])");
}

}  // namespace
}  // namespace udon::schema
