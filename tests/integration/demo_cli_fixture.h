// For tests that drive the udon-mcp binary against the demo server from a scratch folder:
// the configuration naming the demo server, its state directory, and the check that no
// started process outlives a test.
#pragma once

#include <sys/prctl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "json/json.h"
#include "test_support.h"

namespace udon::testing {

class DemoCliTest : public ::testing::Test {
 protected:
  // Orphans of the processes a test starts are reparented here, so TearDown sees them.
  static void SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }
  void TearDown() override { EXPECT_TRUE(Descendants(getpid()).empty()) << "a child process survived"; }

  // dir_/mcp.json: the demo server as "demo", started with `args`.
  void UseServer(const std::vector<std::string>& args) {
    dir_.Write("mcp.json",
               json::Value({{"mcpServers", {{"demo", {{"command", DemoServerBinary()}, {"args", args}}}}}}).dump());
  }

  // udon-mcp with `args` (then `extra`), its state directory in dir_.
  ProcessResult Udon(std::vector<std::string> args, const std::vector<std::string>& extra = {}) {
    args.insert(args.begin(), UdonMcpBinary());
    args.insert(args.end(), extra.begin(), extra.end());
    RunOptions options;
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    return RunProcess(args, options);
  }

  TempDir dir_;
};

}  // namespace udon::testing
