#include "mcp/protocol/param_headers.h"

#include <gtest/gtest.h>

#include <map>

namespace udon::mcp {
namespace {

json::Value ToolWith(json::Value properties) {
  return {{"name", "t"}, {"inputSchema", {{"type", "object"}, {"properties", std::move(properties)}}}};
}

std::map<std::string, std::string> AsMap(const RequestHeaders& headers) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : headers) out[name] = value;
  return out;
}

TEST(ParamHeadersTest, FindsAnnotationsThroughNestedProperties) {
  json::Value tool = ToolWith({{"region", {{"type", "string"}, {"x-mcp-header", "Region"}}},
                               {"opts", {{"type", "object"},
                                         {"properties", {{"debug", {{"type", "boolean"}, {"x-mcp-header", "Debug"}}}}}}},
                               {"query", {{"type", "string"}}}});
  auto params = ParamHeadersOf(tool);
  ASSERT_TRUE(params.ok()) << params.error().Describe();
  ASSERT_EQ(params->size(), 2u);
  EXPECT_EQ((*params)[0].path, (std::vector<std::string>{"opts", "debug"}));
  EXPECT_EQ((*params)[1].name, "Region");
}

TEST(ParamHeadersTest, RefusesEveryInvalidShape) {
  const std::vector<std::pair<const char*, json::Value>> cases = {
      {"empty", ToolWith({{"v", {{"type", "string"}, {"x-mcp-header", ""}}}})},
      {"object", ToolWith({{"v", {{"type", "object"}, {"x-mcp-header", "Data"}}}})},
      {"array", ToolWith({{"v", {{"type", "array"}, {"x-mcp-header", "Items"}}}})},
      {"null", ToolWith({{"v", {{"type", "null"}, {"x-mcp-header", "Nil"}}}})},
      {"number", ToolWith({{"v", {{"type", "number"}, {"x-mcp-header", "Score"}}}})},
      {"untyped", ToolWith({{"v", {{"x-mcp-header", "V"}}}})},
      {"duplicate", ToolWith({{"a", {{"type", "string"}, {"x-mcp-header", "MyField"}}},
                              {"b", {{"type", "string"}, {"x-mcp-header", "myfield"}}}})},
      {"space", ToolWith({{"v", {{"type", "string"}, {"x-mcp-header", "My Region"}}}})},
      {"colon", ToolWith({{"v", {{"type", "string"}, {"x-mcp-header", "Region:Primary"}}}})},
      {"non-ascii", ToolWith({{"v", {{"type", "string"}, {"x-mcp-header", "R\xc3\xa9gion"}}}})},
      {"tab", ToolWith({{"v", {{"type", "string"}, {"x-mcp-header", "Region\t1"}}}})},
      {"items", ToolWith({{"v", {{"type", "array"}, {"items", {{"type", "string"}, {"x-mcp-header", "I"}}}}}})},
      {"anyOf", ToolWith({{"v", {{"anyOf", {{{"type", "string"}, {"x-mcp-header", "A"}}}}}}})},
      {"root", json::Value{{"name", "t"}, {"inputSchema", {{"type", "string"}, {"x-mcp-header", "R"}}}}},
  };
  for (const auto& [label, tool] : cases) {
    auto params = ParamHeadersOf(tool);
    ASSERT_FALSE(params.ok()) << label;
    EXPECT_EQ(params.error().code, "mcp.invalid_param_header") << label;
    EXPECT_EQ(params.error().pointer.rfind("/inputSchema", 0), 0u) << label;
  }
}

TEST(ParamHeadersTest, AnnotationLikeDataInDefaultsIsNotAnAnnotation) {
  json::Value tool = ToolWith({{"v", {{"type", "object"}, {"default", {{"x-mcp-header", "not one"}}}}}});
  auto params = ParamHeadersOf(tool);
  ASSERT_TRUE(params.ok());
  EXPECT_TRUE(params->empty());
}

TEST(ParamHeadersTest, MirrorsValuesWithTheRevisionsEncoding) {
  json::Value tool = ToolWith({{"region", {{"type", "string"}, {"x-mcp-header", "Region"}}},
                               {"priority", {{"type", "integer"}, {"x-mcp-header", "Priority"}}},
                               {"verbose", {{"type", "boolean"}, {"x-mcp-header", "Verbose"}}},
                               {"debug", {{"type", "boolean"}, {"x-mcp-header", "Debug"}}},
                               {"greeting", {{"type", "string"}, {"x-mcp-header", "Greeting"}}},
                               {"padded", {{"type", "string"}, {"x-mcp-header", "Padded"}}},
                               {"lines", {{"type", "string"}, {"x-mcp-header", "Lines"}}},
                               {"sentinel", {{"type", "string"}, {"x-mcp-header", "Sentinel"}}},
                               {"missing", {{"type", "string"}, {"x-mcp-header", "Missing"}}}});
  auto params = ParamHeadersOf(tool);
  ASSERT_TRUE(params.ok());
  json::Value arguments = {{"region", "us-west1"},   {"priority", 42},
                           {"verbose", nullptr},     {"debug", true},
                           {"greeting", "Hello, \xe4\xb8\x96\xe7\x95\x8c"},
                           {"padded", " padded "},   {"lines", "line1\nline2"},
                           {"sentinel", "=?base64?literal?="}};
  auto headers = AsMap(MirrorArguments(*params, arguments));
  EXPECT_EQ(headers.size(), 7u);  // null and absent values are omitted
  EXPECT_EQ(headers["Mcp-Param-Region"], "us-west1");
  EXPECT_EQ(headers["Mcp-Param-Priority"], "42");
  EXPECT_EQ(headers["Mcp-Param-Debug"], "true");
  EXPECT_EQ(headers["Mcp-Param-Greeting"], "=?base64?SGVsbG8sIOS4lueVjA==?=");
  EXPECT_EQ(headers["Mcp-Param-Padded"], "=?base64?IHBhZGRlZCA=?=");
  EXPECT_EQ(headers["Mcp-Param-Lines"], "=?base64?bGluZTEKbGluZTI=?=");
  EXPECT_EQ(headers["Mcp-Param-Sentinel"], "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
  EXPECT_EQ(headers.count("Mcp-Param-Verbose"), 0u);
}

}  // namespace
}  // namespace udon::mcp
