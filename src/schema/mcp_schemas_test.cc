// Real MCP tool schemas: the 2025-11-25 conformance fixture (2020-12) and every schema of
// @modelcontextprotocol/server-everything's catalog (draft-07), as observed on its stdio
// transport (testdata/server-everything-tools-list.json).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "json/json.h"
#include "schema/internal/test_schemas.h"
#include "schema/schema.h"

namespace udon::schema {
namespace {

using testing::J;

namespace fs = std::filesystem;

json::Value ReadTestdata(const std::string& name) {
  std::ifstream stream(fs::path(UDON_SOURCE_DIR) / "src" / "schema" / "testdata" / name,
                       std::ios::binary);
  std::stringstream buffer;
  buffer << stream.rdbuf();
  auto parsed = json::Parse(buffer.str());
  EXPECT_TRUE(parsed.ok()) << name;
  return parsed.ok() ? std::move(parsed).value() : json::Value();
}

TEST(McpSchemasTest, ConformanceFixture202012) {
  json::Value schema = ReadTestdata("mcp-conformance-2020-12-tool-input-schema.json");
  auto compiled = CompiledSchema::Compile(schema);
  ASSERT_TRUE(compiled.ok()) << compiled.error().Describe();
  EXPECT_TRUE(compiled->IsValid(J(R"({"name": "Ada", "contactMethod": "phone", "phone": "1"})")));
  EXPECT_TRUE(compiled->IsValid(J(R"({"email": "a@b", "address": {"city": "Oslo"}})")));
  // if/then: contactMethod phone requires phone.
  EXPECT_FALSE(compiled->IsValid(J(R"({"contactMethod": "phone", "email": "a@b"})")));
  // else: email required when contactMethod is not phone.
  EXPECT_FALSE(compiled->IsValid(J(R"({"phone": "1"})")));
  EXPECT_FALSE(compiled->IsValid(J(R"({"email": "a@b", "extra": 1})")));
  EXPECT_FALSE(compiled->IsValid(J(R"({"email": "a@b", "address": {"city": 5}})")));
  EXPECT_FALSE(compiled->IsValid(J(R"({"email": "a@b", "contactMethod": "fax"})")));
  auto meta = CheckAgainstMetaSchema(schema);
  ASSERT_TRUE(meta.ok());
  EXPECT_TRUE(meta->valid);
}

TEST(McpSchemasTest, EveryServerEverythingSchemaCompiles) {
  json::Value list = ReadTestdata("server-everything-tools-list.json");
  ASSERT_TRUE(list.contains("tools"));
  int schemas = 0;
  for (const auto& tool : list["tools"]) {
    for (const char* key : {"inputSchema", "outputSchema"}) {
      if (!tool.contains(key)) continue;
      ++schemas;
      const json::Value& schema = tool[key];
      EXPECT_EQ(schema.value("$schema", ""), "http://json-schema.org/draft-07/schema#");
      auto compiled = CompiledSchema::Compile(schema);
      ASSERT_TRUE(compiled.ok()) << tool["name"] << " " << key;
      auto meta = CheckAgainstMetaSchema(schema);
      ASSERT_TRUE(meta.ok());
      EXPECT_TRUE(meta->valid) << tool["name"] << " " << key;
      // Every tool schema is an object schema: arrays and scalars never validate.
      EXPECT_FALSE(compiled->IsValid(J("[]")));
      EXPECT_FALSE(compiled->IsValid(J(R"("text")")));
    }
  }
  EXPECT_GE(schemas, 14);
}

const json::Value& Tool(const json::Value& list, std::string_view name, const char* key) {
  for (const auto& tool : list["tools"]) {
    if (tool["name"] == name) return tool[key];
  }
  ADD_FAILURE() << name;
  static const json::Value kNull;
  return kNull;
}

TEST(McpSchemasTest, ServerEverythingInstances) {
  json::Value list = ReadTestdata("server-everything-tools-list.json");
  auto echo = CompiledSchema::Compile(Tool(list, "echo", "inputSchema"));
  ASSERT_TRUE(echo.ok());
  EXPECT_TRUE(echo->IsValid(J(R"({"message": "hi"})")));
  EXPECT_FALSE(echo->IsValid(J("{}")));
  EXPECT_FALSE(echo->IsValid(J(R"({"message": 1})")));

  auto sum = CompiledSchema::Compile(Tool(list, "get-sum", "inputSchema"));
  ASSERT_TRUE(sum.ok());
  EXPECT_TRUE(sum->IsValid(J(R"({"a": 1, "b": 2.5})")));
  EXPECT_FALSE(sum->IsValid(J(R"({"a": 1})")));
  EXPECT_FALSE(sum->IsValid(J(R"({"a": "1", "b": 2})")));

  auto links = CompiledSchema::Compile(Tool(list, "get-resource-links", "inputSchema"));
  ASSERT_TRUE(links.ok());
  EXPECT_TRUE(links->IsValid(J(R"({"count": 10})")));
  EXPECT_FALSE(links->IsValid(J(R"({"count": 11})")));

  auto weather = CompiledSchema::Compile(Tool(list, "get-structured-content", "inputSchema"));
  ASSERT_TRUE(weather.ok());
  EXPECT_TRUE(weather->IsValid(J(R"({"location": "Chicago"})")));
  EXPECT_FALSE(weather->IsValid(J(R"({"location": "Paris"})")));

  auto output = CompiledSchema::Compile(Tool(list, "get-structured-content", "outputSchema"));
  ASSERT_TRUE(output.ok());
  EXPECT_TRUE(output->IsValid(
      J(R"({"temperature": 22.5, "conditions": "Sunny", "humidity": 40})")));
  EXPECT_FALSE(output->IsValid(J(R"({"temperature": "hot", "conditions": "Sunny",
                                     "humidity": 40})")));

  CompileOptions asserting;
  asserting.format_assertion = true;
  auto gzip = CompiledSchema::Compile(Tool(list, "gzip-file-as-resource", "inputSchema"), asserting);
  ASSERT_TRUE(gzip.ok());
  EXPECT_TRUE(gzip->IsValid(J(R"({"data": "https://example.com/README.md"})")));
  EXPECT_FALSE(gzip->IsValid(J(R"({"data": "not a uri"})")));
}

}  // namespace
}  // namespace udon::schema
