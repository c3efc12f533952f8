#include "json/yaml.h"

#include <gtest/gtest.h>

#include <string>

namespace udon::json {
namespace {

Value Yaml(const std::string& text) {
  Result<Value> result = ParseYaml(text);
  EXPECT_TRUE(result.ok()) << result.error().Describe();
  return result.ok() ? *result : Value();
}

void ExpectYamlError(const std::string& text, const std::string& code, std::size_t line,
                     std::size_t column) {
  Result<Value> result = ParseYaml(text);
  ASSERT_FALSE(result.ok()) << text;
  EXPECT_EQ(result.error().code, code) << text;
  ASSERT_TRUE(result.error().location.has_value()) << text;
  EXPECT_EQ(result.error().location->line, line) << text;
  EXPECT_EQ(result.error().location->column, column) << text;
}

TEST(Yaml, CoreSchemaNulls) {
  const Value v = Yaml("a: null\nb: ~\nc:\nd: Null\ne: NULL\nf: 'null'\n");
  EXPECT_EQ(v, Parse(R"({"a":null,"b":null,"c":null,"d":null,"e":null,"f":"null"})").value());
}

TEST(Yaml, CoreSchemaBooleansOnlyTrueAndFalse) {
  const Value v = Yaml("- true\n- True\n- TRUE\n- false\n- False\n- FALSE\n- yes\n- on\n- 'true'\n");
  EXPECT_EQ(v, Parse(R"([true,true,true,false,false,false,"yes","on","true"])").value());
}

TEST(Yaml, CoreSchemaIntegers) {
  const Value v = Yaml("- 42\n- -7\n- +3\n- 0o17\n- 0x1F\n- 0x1f\n- 18446744073709551615\n"
                       "- 012\n- \"42\"\n- 0o9\n");
  EXPECT_EQ(v, Parse(R"([42,-7,3,15,31,31,18446744073709551615,12,"42","0o9"])").value());
  EXPECT_TRUE(v[0].is_number_integer());
  EXPECT_TRUE(v[6].is_number_unsigned());
}

TEST(Yaml, CoreSchemaFloats) {
  const Value v = Yaml("- 1.5\n- -.5\n- 2e3\n- 1.\n- +6.25E-1\n- 1e-400\n- '1.5'\n- 1.2.3\n");
  EXPECT_EQ(v, Parse(R"([1.5,-0.5,2000.0,1.0,0.625,0.0,"1.5","1.2.3"])").value());
  EXPECT_TRUE(v[0].is_number_float());
}

TEST(Yaml, InfinityAndNanAreRefused) {
  ExpectYamlError("a: .inf\n", "yaml.unsupported", 1, 4);
  ExpectYamlError("a:\n  - -.Inf\n", "yaml.unsupported", 2, 5);
  ExpectYamlError("x: .NaN\n", "yaml.unsupported", 1, 4);
  ExpectYamlError("x: 1e999\n", "yaml.unsupported", 1, 4);
  ExpectYamlError("x: 1234567890.0e300\n", "yaml.unsupported", 1, 4);
  EXPECT_EQ(Yaml("x: 0.000123e-400\n")["x"], 0.0);
  EXPECT_EQ(Yaml("x: '.inf'\n")["x"], ".inf");
}

TEST(Yaml, QuotedScalarsAreStrings) {
  const Value v = Yaml("a: \"1\"\nb: 'true'\nc: \"~\"\nd: !!str 12\ne: plain text\n");
  EXPECT_EQ(v, Parse(R"({"a":"1","b":"true","c":"~","d":"12","e":"plain text"})").value());
}

TEST(Yaml, DuplicateKeysAreRefusedAtTheSecondKey) {
  ExpectYamlError("a: 1\nb: 2\na: 3\n", "yaml.duplicate_key", 3, 1);
  ExpectYamlError("outer:\n  x: 1\n  y: 2\n  x: 3\n", "yaml.duplicate_key", 4, 3);
  ExpectYamlError("{a: 1, a: 2}\n", "yaml.duplicate_key", 1, 8);
  Result<Value> result = ParseYaml("outer:\n  x: 1\n  x: 3\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().pointer, "/outer/x");
}

TEST(Yaml, NonScalarKeysAreRefused) {
  ExpectYamlError("? [a, b]\n: 1\n", "yaml.unsupported", 1, 3);
  ExpectYamlError("{[1]: 2}\n", "yaml.unsupported", 1, 2);
}

TEST(Yaml, ExplicitTagsOtherThanStrAreRefused) {
  ExpectYamlError("a: !!binary aGVsbG8=\n", "yaml.unsupported", 1, 4);
}

TEST(Yaml, AnchorsAndAliases) {
  const Value v = Yaml("base: &b {x: 1, y: [1, 2]}\ncopy: *b\n");
  EXPECT_EQ(v["copy"], v["base"]);
}

TEST(Yaml, BillionLaughsIsRefused) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) text += (j ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  Result<Value> result = ParseYaml(text);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, "yaml.unsupported");
}

TEST(Yaml, RecursiveAliasIsRefused) {
  Result<Value> result = ParseYaml("a: &x [1, *x]\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, "yaml.unsupported");
}

TEST(Yaml, MultiDocumentStreamsAreRefused) {
  Result<Value> result = ParseYaml("a: 1\n---\nb: 2\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, "yaml.unsupported");
  EXPECT_EQ(Yaml("---\na: 1\n...\n"), Parse(R"({"a":1})").value());
}

// Found by fuzzing (fuzz/regressions/json_yaml/): yaml-cpp 0.7's LoadAll never returned
// on these, collecting empty documents until memory ran out.
TEST(Yaml, AStalledParserIsMalformedInputNotAHang) {
  ExpectYamlError("\"\",", "yaml.invalid", 1, 3);
  ExpectYamlError("{\"a\": 1},", "yaml.invalid", 1, 9);
  ExpectYamlError(",", "yaml.invalid", 1, 1);
  ExpectYamlError("[a],\n", "yaml.invalid", 1, 4);
}

// Found by fuzzing (fuzz/regressions/json_yaml/): yaml-cpp kept a lone CR as content.
TEST(Yaml, ALoneCarriageReturnIsALineBreak) {
  EXPECT_EQ(Yaml("\r1"), Value(1));
  EXPECT_EQ(Yaml("a: 1\rb: [x,\ry]\r"), Parse(R"({"a":1,"b":["x","y"]})").value());
  EXPECT_EQ(Yaml("a: 1\r\nb: 2\r\n"), Parse(R"({"a":1,"b":2})").value());
  ExpectYamlError("a: 1\r b: 2\r", "yaml.invalid", 2, 3);
}

TEST(Yaml, DepthIsBounded) {
  std::string deep;
  for (std::size_t i = 0; i < kDefaultMaxDepth; ++i) deep += "[";
  for (std::size_t i = 0; i < kDefaultMaxDepth; ++i) deep += "]";
  EXPECT_TRUE(ParseYaml(deep).ok());
  Result<Value> too_deep = ParseYaml("[" + deep + "]");
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.error().code, "yaml.unsupported");
  // Far beyond: yaml-cpp's own recursion guard answers, still as an error.
  Result<Value> hostile = ParseYaml(std::string(100000, '['));
  ASSERT_FALSE(hostile.ok());
}

TEST(Yaml, SyntaxErrorsCarryLineAndColumn) {
  ExpectYamlError("a: [1, 2\nb: 3\n", "yaml.invalid", 2, 2);
  ExpectYamlError("a: b: c\n", "yaml.invalid", 1, 5);
  ExpectYamlError("a: 1\n b: 2\n  - c\n", "yaml.invalid", 2, 3);
}

TEST(Yaml, StringsMustBeUtf8) {
  ExpectYamlError("a: \"\\uD800\"\n", "yaml.invalid", 1, 11);
  ExpectYamlError("a: x\xff\n", "yaml.invalid", 1, 4);
  ExpectYamlError("k\xc3: 1\n", "yaml.invalid", 1, 1);
  EXPECT_EQ(Yaml("a: \"\\u00e9\\U0001F600\"\n")["a"], "\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(Yaml, EmptyDocumentIsNull) { EXPECT_TRUE(Yaml("").is_null()); }

TEST(ParseJsonOrYaml, ChoosesByFirstByte) {
  Result<Value> json = ParseJsonOrYaml("  {\"a\": 1}");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ((*json)["a"], 1);
  // JSON's strict rules apply to JSON documents (duplicates are json.duplicate_key).
  Result<Value> duplicate = ParseJsonOrYaml(R"({"a":1,"a":2})");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.error().code, "json.duplicate_key");
  Result<Value> yaml = ParseJsonOrYaml("a: [1]\n");
  ASSERT_TRUE(yaml.ok());
  EXPECT_EQ((*yaml)["a"][0], 1);
}

}  // namespace
}  // namespace udon::json
