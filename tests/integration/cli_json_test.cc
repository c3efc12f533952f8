// The first udon-mcp commands, run as a real process: canonicalize, digest, --version,
// and the --json / exit-code contract for bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "external_testdata.h"
#include "json/json.h"
#include "test_support.h"

namespace udon::testing {
namespace {

// A file of the external RFC 8785 vectors (the tests that read them require the fixture).
std::string Jcs(const std::string& relative) { return ExternalSuiteDir("jcs") + "/" + relative; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(CliCanonicalize, PrintsExactCanonicalBytes) {
  ASSERT_TRUE(HaveExternalSuite("jcs"));
  for (const char* name : {"arrays", "french", "structures", "unicode", "values", "weird"}) {
    SCOPED_TRACE(name);
    ProcessResult result =
        RunProcess({UdonMcpBinary(), "canonicalize", Jcs(std::string("input/") + name + ".json")});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, ReadAll(Jcs(std::string("output/") + name + ".json")));
    EXPECT_EQ(result.err, "");
  }
}

TEST(CliCanonicalize, ReadsStdinAndWrapsWithJson) {
  RunOptions options;
  options.stdin_data = R"({"b": 1e2, "a": [1.0, "\u00e9"]})";
  ProcessResult plain = RunProcess({UdonMcpBinary(), "canonicalize", "-"}, options);
  EXPECT_EQ(plain.exit_code, 0);
  EXPECT_EQ(plain.out, "{\"a\":[1,\"\xc3\xa9\"],\"b\":100}");
  ProcessResult wrapped = RunProcess({UdonMcpBinary(), "canonicalize", "--json", "-"}, options);
  EXPECT_EQ(wrapped.exit_code, 0);
  Result<json::Value> output = json::Parse(wrapped.out);
  ASSERT_TRUE(output.ok()) << wrapped.out;
  EXPECT_EQ((*output)["ok"], true);
  EXPECT_EQ((*output)["canonical"], plain.out);
}

TEST(CliDigest, PrintsLowercaseHexAndNewline) {
  ASSERT_TRUE(HaveExternalSuite("jcs"));
  ProcessResult result = RunProcess({UdonMcpBinary(), "digest", Jcs("input/weird.json")});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "6af595a9aa80110b964b4de3f82a05fa6ae7423005019bacfa2620dddc4e94d1\n");
  ProcessResult json_result =
      RunProcess({UdonMcpBinary(), "digest", "--json", Jcs("input/values.json")});
  EXPECT_EQ(json_result.exit_code, 0);
  EXPECT_EQ(json_result.out,
            "{\"ok\":true,\"sha256\":"
            "\"2d5e01a318d0f0879ab568c4be289c8b1f64ef8921a53c6277d5e069978baacb\"}\n");
}

TEST(CliDigest, BundledExampleManifest) {
  ProcessResult result =
      RunProcess({UdonMcpBinary(), "digest", SourceDir() + "/examples/blender-farm.tools.json"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.size(), 65u);
  // The pretty-printed example and its canonical form have the same digest.
  ProcessResult canonical = RunProcess(
      {UdonMcpBinary(), "canonicalize", SourceDir() + "/examples/blender-farm.tools.json"});
  RunOptions options;
  options.stdin_data = canonical.out;
  ProcessResult again = RunProcess({UdonMcpBinary(), "digest", "-"}, options);
  EXPECT_EQ(again.out, result.out);
}

TEST(CliErrors, InvalidInputExitsTwoWithTheJsonErrorShape) {
  RunOptions options;
  options.stdin_data = "{\"a\": 1,\n \"a\": 2}";
  for (const char* command : {"canonicalize", "digest"}) {
    SCOPED_TRACE(command);
    ProcessResult result = RunProcess({UdonMcpBinary(), command, "--json", "-"}, options);
    EXPECT_EQ(result.exit_code, 2);
    Result<json::Value> output = json::Parse(result.out);
    ASSERT_TRUE(output.ok()) << result.out;
    EXPECT_EQ((*output)["ok"], false);
    EXPECT_EQ((*output)["code"], "json.duplicate_key");
    EXPECT_EQ((*output)["message"], "duplicate member name");
    EXPECT_EQ((*output)["details"]["pointer"], "/a");
    EXPECT_EQ((*output)["details"]["line"], 2);
    EXPECT_NE(result.err.find("json.duplicate_key"), std::string::npos);
    // The document's values never reach the diagnostics.
    EXPECT_EQ(result.err.find("\"a\": 2"), std::string::npos);
  }
  ProcessResult human = RunProcess({UdonMcpBinary(), "digest", "-"}, options);
  EXPECT_EQ(human.exit_code, 2);
  EXPECT_EQ(human.out, "");
  EXPECT_NE(human.err.find("line 2"), std::string::npos);
}

TEST(CliErrors, UnreadableFileExitsTwo) {
  TempDir dir;
  ProcessResult result =
      RunProcess({UdonMcpBinary(), "digest", "--json", dir.File("missing.json")});
  EXPECT_EQ(result.exit_code, 2);
  Result<json::Value> output = json::Parse(result.out);
  ASSERT_TRUE(output.ok()) << result.out;
  EXPECT_EQ((*output)["code"], "io.unreadable");
}

TEST(CliErrors, NoncanonicalizableInputExitsTwo) {
  RunOptions options;
  options.stdin_data = R"({"k": "\ufdd0"})";
  ProcessResult result = RunProcess({UdonMcpBinary(), "canonicalize", "--json", "-"}, options);
  EXPECT_EQ(result.exit_code, 2);
  Result<json::Value> output = json::Parse(result.out);
  ASSERT_TRUE(output.ok()) << result.out;
  EXPECT_EQ((*output)["code"], "json.not_canonicalizable");
  EXPECT_EQ((*output)["details"]["pointer"], "/k");
}

TEST(CliUsage, UsageErrorsExitTwoAndVersionExitsZero) {
  EXPECT_EQ(RunProcess({UdonMcpBinary()}).exit_code, 2);
  EXPECT_EQ(RunProcess({UdonMcpBinary(), "digest"}).exit_code, 2);
  EXPECT_EQ(RunProcess({UdonMcpBinary(), "digest", "a", "b"}).exit_code, 2);
  ProcessResult version = RunProcess({UdonMcpBinary(), "--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("udon-mcp ", 0), 0u);
  ProcessResult help = RunProcess({UdonMcpBinary(), "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("canonicalize"), std::string::npos);
  EXPECT_NE(help.out.find("digest"), std::string::npos);
}

}  // namespace
}  // namespace udon::testing
