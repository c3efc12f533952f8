// `udon-mcp demo`, the README's main job: it must run the whole lifecycle and exit 0 only
// when every expected outcome happened.
#include <sys/prctl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "json/json.h"
#include "test_support.h"

namespace udon {
namespace {

TEST(DemoCommandTest, RunsTheWholeLifecycle) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  testing::TempDir dir;
  testing::ProcessResult result = testing::RunProcess(
      {testing::UdonMcpBinary(), "demo", "--dir", dir.File("demo"), "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  json::Value out = json::Parse(result.out).value();
  EXPECT_EQ(out["ok"], true);
  EXPECT_EQ(out["outputs"]["images"].size(), 3u);
  EXPECT_EQ(out["outputs"]["words"], 17);
  EXPECT_EQ(out["drift"]["code"], "catalog.tool_drift");
  EXPECT_EQ(out["drift"]["pointers"][0]["pointer"], "/description");
  // The narration went to stderr, the files stay for a person to look at.
  EXPECT_NE(result.err.find("Every expected outcome happened"), std::string::npos);
  for (const char* file : {"demo.tools.json", "turntable-brief.uws.yaml", "evidence.jsonl", "mcp.json"}) {
    EXPECT_EQ(access(dir.File(std::string("demo/") + file).c_str(), F_OK), 0) << file;
  }
  // The run's evidence: three gated calls and the refused verify, all value-free.
  const std::string evidence = dir.Read("demo/evidence.jsonl");
  EXPECT_EQ(evidence.find("walnut"), std::string::npos);
  EXPECT_NE(evidence.find("catalog.tool_drift"), std::string::npos);
  EXPECT_TRUE(testing::Descendants(getpid()).empty());
}

TEST(DemoCommandTest, FailsClearlyWithoutItsServer) {
  testing::TempDir dir;
  testing::ProcessResult result = testing::RunProcess(
      {testing::UdonMcpBinary(), "demo", "--dir", dir.File("demo"), "--server", dir.File("missing")});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_FALSE(result.err.empty());
}

}  // namespace
}  // namespace udon
