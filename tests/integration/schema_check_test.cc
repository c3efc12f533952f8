// udon-mcp schema-check as a real process: JSON and YAML inputs, stdin, --json basic
// output, --format-assert, and the exit codes 0 (all valid), 1 (any invalid), 2 (bad input
// or schema).
#include <gtest/gtest.h>

#include <string>

#include "json/json.h"
#include "test_support.h"

namespace udon::testing {
namespace {

constexpr const char* kSchema = R"({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {"name": {"type": "string", "minLength": 1},
                 "when": {"type": "string", "format": "date"}},
  "required": ["name"],
  "additionalProperties": false
})";

class SchemaCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("schema.json", kSchema);
    dir_.Write("good.json", R"({"name": "render", "when": "2025-11-25"})");
    dir_.Write("good.yaml", "name: render\nwhen: not-a-date\n");
    dir_.Write("bad.json", R"({"name": "", "secret": "hunter2"})");
  }
  ProcessResult Run(std::vector<std::string> args, const RunOptions& options = {}) {
    args.insert(args.begin(), {UdonMcpBinary(), "schema-check"});
    return RunProcess(args, options);
  }
  TempDir dir_;
};

TEST_F(SchemaCheckTest, AllValidExitsZero) {
  ProcessResult result = Run({"--schema", dir_.File("schema.json"), dir_.File("good.json"),
                              dir_.File("good.yaml")});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("good.yaml: valid"), std::string::npos) << result.out;
}

TEST_F(SchemaCheckTest, FormatAssertionIsOptIn) {
  ProcessResult result = Run({"--format-assert", "--schema", dir_.File("schema.json"),
                              dir_.File("good.json"), dir_.File("good.yaml")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.out.find("good.yaml: invalid"), std::string::npos) << result.out;
}

TEST_F(SchemaCheckTest, InvalidInstanceJsonOutputIsValueFree) {
  ProcessResult result = Run({"--json", "--schema", dir_.File("schema.json"),
                              dir_.File("good.json"), dir_.File("bad.json")});
  EXPECT_EQ(result.exit_code, 1);
  auto output = json::Parse(result.out);
  ASSERT_TRUE(output.ok()) << result.out;
  EXPECT_EQ((*output)["ok"], true);
  EXPECT_EQ((*output)["valid"], false);
  ASSERT_EQ((*output)["results"].size(), 2u);
  EXPECT_EQ((*output)["results"][0]["valid"], true);
  const json::Value& bad = (*output)["results"][1];
  EXPECT_EQ(bad["valid"], false);
  bool saw_additional = false;
  for (const auto& unit : bad["errors"]) {
    EXPECT_TRUE(unit.contains("keywordLocation"));
    EXPECT_TRUE(unit.contains("absoluteKeywordLocation"));
    saw_additional = saw_additional || unit["keywordLocation"] == "/additionalProperties";
  }
  EXPECT_TRUE(saw_additional) << result.out;
  // The instance's values never reach the output.
  EXPECT_EQ(result.out.find("hunter2"), std::string::npos);
  EXPECT_EQ(result.err.find("hunter2"), std::string::npos);
}

TEST_F(SchemaCheckTest, ReadsAnInstanceFromStdin) {
  RunOptions options;
  options.stdin_data = R"({"name": "x"})";
  ProcessResult result = Run({"--schema", dir_.File("schema.json"), "-"}, options);
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

TEST_F(SchemaCheckTest, UnreadableInputExitsTwo) {
  ProcessResult missing =
      Run({"--json", "--schema", dir_.File("schema.json"), dir_.File("missing.json")});
  EXPECT_EQ(missing.exit_code, 2);
  auto output = json::Parse(missing.out);
  ASSERT_TRUE(output.ok()) << missing.out;
  EXPECT_EQ((*output)["ok"], false);
  dir_.Write("broken.json", R"({"name": )");
  EXPECT_EQ(Run({"--schema", dir_.File("schema.json"), dir_.File("broken.json")}).exit_code, 2);
}

// Issue 31: JSON instances are read by the text path; text that does not parse still fails
// the whole run with json.*'s code, before any verdict is printed, and a duplicate member
// (which the text path spots when its object closes) is refused as json::Parse refuses it.
TEST_F(SchemaCheckTest, MalformedJsonAfterValidInstancesFailsTheRunBeforeAnyVerdict) {
  dir_.Write("broken.json", R"({"name": "render",)");
  ProcessResult broken = Run({"--schema", dir_.File("schema.json"), dir_.File("good.json"), dir_.File("bad.json"),
                              dir_.File("broken.json")});
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_EQ(broken.out.find("good.json"), std::string::npos) << broken.out;
  dir_.Write("twice.json", R"({"name": "a", "name": "b"})");
  ProcessResult twice = Run({"--json", "--schema", dir_.File("schema.json"), dir_.File("good.json"),
                             dir_.File("twice.json")});
  EXPECT_EQ(twice.exit_code, 2);
  auto output = json::Parse(twice.out);
  ASSERT_TRUE(output.ok()) << twice.out;
  EXPECT_EQ((*output)["code"], "json.duplicate_key");
}

TEST_F(SchemaCheckTest, InvalidOrUnsupportedSchemaExitsTwo) {
  dir_.Write("old.json", R"({"$schema": "http://json-schema.org/draft-04/schema#"})");
  ProcessResult old = Run({"--json", "--schema", dir_.File("old.json"), dir_.File("good.json")});
  EXPECT_EQ(old.exit_code, 2);
  auto output = json::Parse(old.out);
  ASSERT_TRUE(output.ok()) << old.out;
  EXPECT_EQ((*output)["code"], "input.unsupported_dialect");
  dir_.Write("broken-schema.json", R"({"minLength": "three"})");
  ProcessResult broken =
      Run({"--json", "--schema", dir_.File("broken-schema.json"), dir_.File("good.json")});
  EXPECT_EQ(broken.exit_code, 2);
  auto broken_output = json::Parse(broken.out);
  ASSERT_TRUE(broken_output.ok()) << broken.out;
  EXPECT_EQ((*broken_output)["code"], "schema.invalid");
  EXPECT_EQ((*broken_output)["details"]["pointer"], "/minLength");
}

TEST_F(SchemaCheckTest, ServerEverythingDraft07Schema) {
  dir_.Write("echo.json", R"({"$schema": "http://json-schema.org/draft-07/schema#",
      "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})");
  dir_.Write("call.json", R"({"message": "hi"})");
  dir_.Write("empty.json", "{}");
  EXPECT_EQ(Run({"--schema", dir_.File("echo.json"), dir_.File("call.json")}).exit_code, 0);
  EXPECT_EQ(Run({"--schema", dir_.File("echo.json"), dir_.File("empty.json")}).exit_code, 1);
}

}  // namespace
}  // namespace udon::testing
