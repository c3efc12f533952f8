// Issue 38 item 1, from the attacker's side: a repository's .mcp.json names a command; the
// user rejected it in Claude Code, or was never asked. adopt must not run it.
#include "adopt/project_trust.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "adopt/adoption.h"
#include "test_support.h"

namespace udon::adopt {
namespace {

namespace fs = std::filesystem;

class ProjectTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(temp_.File("clone"));
    project_ = temp_.File("clone");
  }

  // ~/.claude.json with what the user answered for the clone's servers.
  void ClaudeSays(const json::Value& settings) {
    temp_.Write(".claude.json", json::Value{{"projects", {{project_, settings}}}}.dump());
  }

  // The clone's .mcp.json: each entry runs `sh -c 'touch <marker>'`.
  void CloneHas(const std::vector<std::string>& keys) {
    json::Value servers = json::Value::object();
    for (const std::string& key : keys) {
      servers[key] = {{"command", "/bin/sh"}, {"args", {"-c", "touch " + Marker(key)}}};
    }
    temp_.Write("clone/.mcp.json", json::Value{{"mcpServers", servers}}.dump());
  }
  std::string Marker(const std::string& key) const { return temp_.File("ran-" + key); }

  std::vector<DiscoveredFile> Files() const {
    return Discover({{"claude-code", "user", temp_.File(".claude.json"), FileShape::kClaudeJson, ""},
                     {"claude-code", "project", project_ + "/.mcp.json", FileShape::kMcpServers, project_}});
  }
  const Entry& EntryNamed(const std::vector<DiscoveredFile>& files, const std::string& key) const {
    for (const Entry& entry : files[1].entries) {
      if (entry.key == key) return entry;
    }
    throw std::runtime_error("no entry " + key);
  }

  Result<CaptureReport> Capture(std::vector<std::string> servers) const {
    CaptureRequest request{temp_.File("d"), {}, std::move(servers), false, 7, manifest::Policy{}, "", {}, false, {}, {}, {}};
    return CaptureEntries(Files(), request);
  }

  udon::testing::TempDir temp_;
  std::string project_;
};

TEST_F(ProjectTrustTest, AServerRejectedInClaudeCodeIsNeverStartedEvenWhenNamed) {
  ClaudeSays({{"hasTrustDialogAccepted", true}, {"disabledMcpjsonServers", {"evil"}}});
  CloneHas({"evil"});
  auto files = Files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(ClaudeProjectApproval(files, project_, "evil"), HostApproval::kRejected);
  EXPECT_EQ(*ProjectEntrySkipped(files, files[1], EntryNamed(files, "evil"), true),
            "rejected in Claude Code for this project");
  for (const auto& servers : {std::vector<std::string>{}, std::vector<std::string>{"evil"}}) {
    auto report = Capture(servers);
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.error().code, "adopt.nothing_selected");
  }
  EXPECT_FALSE(fs::exists(Marker("evil")));
}

TEST_F(ProjectTrustTest, AServerNoOneApprovedIsStartedOnlyWhenNamed) {
  ClaudeSays({{"hasTrustDialogAccepted", true}, {"enabledMcpjsonServers", {"approved"}}});
  CloneHas({"approved", "unasked"});
  auto files = Files();
  EXPECT_EQ(ClaudeProjectApproval(files, project_, "approved"), HostApproval::kApproved);
  EXPECT_EQ(ClaudeProjectApproval(files, project_, "unasked"), HostApproval::kNotAsked);
  EXPECT_FALSE(ProjectEntrySkipped(files, files[1], EntryNamed(files, "approved"), false));
  ASSERT_TRUE(ProjectEntrySkipped(files, files[1], EntryNamed(files, "unasked"), false));
  EXPECT_FALSE(ProjectEntrySkipped(files, files[1], EntryNamed(files, "unasked"), true));
  // Not named: only the approved one is started (it is no MCP server: the capture fails).
  EXPECT_FALSE(Capture({}).ok());
  EXPECT_FALSE(fs::exists(Marker("unasked")));
}

TEST_F(ProjectTrustTest, AnUntrustedFolderApprovesNothingAndNoRecordIsNoApproval) {
  ClaudeSays({{"hasTrustDialogAccepted", false}, {"enableAllProjectMcpServers", true}});
  CloneHas({"any"});
  EXPECT_EQ(ClaudeProjectApproval(Files(), project_, "any"), HostApproval::kNotAsked);
  ClaudeSays({{"enableAllProjectMcpServers", "yes"}});  // not a boolean: says nothing
  EXPECT_EQ(ClaudeProjectApproval(Files(), project_, "any"), HostApproval::kNotAsked);
  fs::remove(temp_.File(".claude.json"));
  EXPECT_EQ(ClaudeProjectApproval(Files(), project_, "any"), HostApproval::kNotAsked);
  EXPECT_EQ(Capture({}).error().code, "adopt.nothing_selected");
  EXPECT_FALSE(fs::exists(Marker("any")));
}

}  // namespace
}  // namespace udon::adopt
