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
  EXPECT_EQ(ClaudeApprovals(files).For(project_, "evil"), HostApproval::kRejected);
  EXPECT_EQ(*ProjectEntrySkipped(ClaudeApprovals(files), files[1], EntryNamed(files, "evil"), true),
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
  EXPECT_EQ(ClaudeApprovals(files).For(project_, "approved"), HostApproval::kApproved);
  EXPECT_EQ(ClaudeApprovals(files).For(project_, "unasked"), HostApproval::kNotAsked);
  EXPECT_FALSE(ProjectEntrySkipped(ClaudeApprovals(files), files[1], EntryNamed(files, "approved"), false));
  ASSERT_TRUE(ProjectEntrySkipped(ClaudeApprovals(files), files[1], EntryNamed(files, "unasked"), false));
  EXPECT_FALSE(ProjectEntrySkipped(ClaudeApprovals(files), files[1], EntryNamed(files, "unasked"), true));
  // Not named: only the approved one is started (it is no MCP server: the capture fails).
  EXPECT_FALSE(Capture({}).ok());
  EXPECT_FALSE(fs::exists(Marker("unasked")));
}

TEST_F(ProjectTrustTest, AnUntrustedFolderApprovesNothingAndNoRecordIsNoApproval) {
  ClaudeSays({{"hasTrustDialogAccepted", false}, {"enableAllProjectMcpServers", true}});
  CloneHas({"any"});
  EXPECT_EQ(ClaudeApprovals(Files()).For(project_, "any"), HostApproval::kNotAsked);
  ClaudeSays({{"enableAllProjectMcpServers", "yes"}});  // not a boolean: says nothing
  EXPECT_EQ(ClaudeApprovals(Files()).For(project_, "any"), HostApproval::kNotAsked);
  fs::remove(temp_.File(".claude.json"));
  EXPECT_EQ(ClaudeApprovals(Files()).For(project_, "any"), HostApproval::kNotAsked);
  EXPECT_EQ(Capture({}).error().code, "adopt.nothing_selected");
  EXPECT_FALSE(fs::exists(Marker("any")));
}

// A project file of a few hundred servers against a ~/.claude.json holding many other
// projects' history (read once for all of them): each entry gets its own verdict.
TEST_F(ProjectTrustTest, EveryEntryOfALargeProjectGetsItsOwnVerdict) {
  json::Value projects = json::Value::object();
  for (int p = 0; p < 40; ++p) {
    json::Value history = json::Value::array();
    for (int h = 0; h < 40; ++h) history.push_back({{"display", std::string(160, 'a' + h % 26)}});
    projects["/home/user/src/project-" + std::to_string(p)] = {
        {"history", history}, {"hasTrustDialogAccepted", true}, {"enabledMcpjsonServers", {"s2", "s4"}}};
  }
  projects[project_] = {{"hasTrustDialogAccepted", true},
                        {"enabledMcpjsonServers", {"s1", "s7", "s3"}},
                        {"disabledMcpjsonServers", {"s3", "s9"}}};
  temp_.Write(".claude.json", json::Value{{"numStartups", 412}, {"projects", projects}}.dump(2));
  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) keys.push_back("s" + std::to_string(i));
  CloneHas(keys);
  const auto files = Files();
  ASSERT_EQ(files[1].entries.size(), keys.size());
  const ClaudeApprovals approvals(files);
  for (const Entry& entry : files[1].entries) {
    const auto why = ProjectEntrySkipped(approvals, files[1], entry, false);
    if (entry.key == "s1" || entry.key == "s7") {
      EXPECT_FALSE(why) << entry.key;
    } else if (entry.key == "s3" || entry.key == "s9") {
      EXPECT_EQ(why, "rejected in Claude Code for this project") << entry.key;
    } else {
      ASSERT_TRUE(why) << entry.key;
      EXPECT_EQ(why->rfind("not approved in Claude Code", 0), 0U) << entry.key;
    }
  }
}

}  // namespace
}  // namespace udon::adopt
