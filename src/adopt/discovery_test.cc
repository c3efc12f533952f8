#include "adopt/discovery.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "adopt/internal/test_fixtures.h"
#include "base/file.h"
#include "test_support.h"

namespace udon::adopt {
namespace {

using testing::Fixture;

namespace fs = std::filesystem;

// A throwaway home and project holding every fixture where its host looks for it.
class DiscoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = temp_.path();
    where_.home = (root_ / "home").string();
    where_.projects = {(root_ / "project").string()};
    Place("claude_desktop_config.json", "home/.config/Claude/claude_desktop_config.json");
    Place("claude.json", "home/.claude.json");
    Place("cursor_mcp.json", "home/.cursor/mcp.json");
    Place("vscode_mcp.json", "home/.config/Code/User/mcp.json");
    Place("vscode_settings.json", "home/.config/Code/User/settings.json");
    Place("windsurf_mcp_config.json", "home/.codeium/windsurf/mcp_config.json");
    Place("gemini_settings.json", "home/.gemini/settings.json");
    Place("dot_mcp.json", "project/.mcp.json");
    Place("vscode_mcp.json", "project/.vscode/mcp.json");
  }

  void Place(const std::string& fixture, const std::string& where) {
    fs::create_directories((root_ / where).parent_path());
    std::ofstream(root_ / where, std::ios::binary) << Fixture(fixture);
  }

  // host/scope -> "key:transport[:gated][:disabled]" for every entry found.
  std::map<std::string, std::vector<std::string>> Found() {
    std::map<std::string, std::vector<std::string>> found;
    for (const DiscoveredFile& file : Discover(CandidateFiles(where_))) {
      EXPECT_FALSE(file.error.has_value()) << file.file.path << ": " << file.error->Describe();
      EXPECT_EQ(file.sha256.size(), 64u);
      for (const Entry& entry : file.entries) {
        std::string line = entry.key + ":" + entry.transport + (entry.gated ? ":gated" : "") +
                           (entry.disabled ? ":disabled" : "");
        found[file.file.host + "/" + file.file.scope].push_back(line);
      }
    }
    return found;
  }

  udon::testing::TempDir temp_;
  fs::path root_;
  Locations where_;
};

TEST_F(DiscoveryTest, FindsEveryHostsEntriesWithCommentsAndUnknownMembers) {
  auto found = Found();
  using V = std::vector<std::string>;
  EXPECT_EQ(found["claude-desktop/user"], (V{"filesystem:stdio", "github:stdio"}));
  EXPECT_EQ(found["claude-code/user"], (V{"memory:stdio", "demo:stdio", "gated:stdio:gated"}));
  EXPECT_EQ(found["claude-code/project"], (V{"notion:http"}));
  EXPECT_EQ(found["cursor/user"], (V{"memory:stdio", "remote:http"}));
  EXPECT_EQ(found["vscode/user"], (V{"memory:stdio", "remote:http", "time:stdio"}));
  EXPECT_EQ(found["vscode/project"], (V{"memory:stdio", "remote:http"}));
  EXPECT_EQ(found["windsurf/user"], (V{"old:stdio:disabled", "remote:http"}));
  EXPECT_EQ(found["gemini/user"], (V{"demo:stdio", "remote:http"}));
}

TEST_F(DiscoveryTest, ClaudeCodeProjectEntriesKeepTheirPath) {
  for (const DiscoveredFile& file : Discover(CandidateFiles(where_))) {
    if (file.file.host != "claude-code" || file.file.scope != "user") continue;
    ASSERT_EQ(file.entries.size(), 3u);
    EXPECT_EQ(file.entries[1].pointer, "/projects/~1home~1me~1work/mcpServers/demo");
    EXPECT_EQ(file.entries[1].path, (std::vector<std::string>{"projects", "/home/me/work", "mcpServers", "demo"}));
  }
}

TEST_F(DiscoveryTest, AFileThatIsNotJsonIsReportedNotFatal) {
  Place("claude.json", "home/.cursor/mcp.json");
  std::ofstream(root_ / "home/.cursor/mcp.json") << "{ \"mcpServers\": ";
  int invalid = 0;
  for (const DiscoveredFile& file : Discover(CandidateFiles(where_))) {
    if (file.error) {
      ++invalid;
      EXPECT_EQ(file.error->code, "adopt.file_invalid");
      EXPECT_EQ(file.file.host, "cursor");
    }
  }
  EXPECT_EQ(invalid, 1);
}

TEST(Discovery, PathsPerOperatingSystem) {
  Locations mac{Os::kMacos, "/Users/me", std::nullopt, std::nullopt, std::nullopt, {}};
  Locations win{Os::kWindows, "C:/Users/me", "C:/Users/me/AppData/Roaming", std::nullopt, "C:/cc", {}};
  auto mac_files = CandidateFiles(mac);
  auto win_files = CandidateFiles(win);
  EXPECT_EQ(mac_files[0].path, "/Users/me/Library/Application Support/Claude/claude_desktop_config.json");
  EXPECT_EQ(mac_files[3].path, "/Users/me/Library/Application Support/Code/User/mcp.json");
  EXPECT_EQ(win_files[0].path, "C:/Users/me/AppData/Roaming/Claude/claude_desktop_config.json");
  EXPECT_EQ(win_files[1].path, "C:/cc/.claude.json");
}

TEST(Discovery, GatedMeansUdonMcpServe) {
  EXPECT_TRUE(IsGated({{"command", "udon-mcp"}, {"args", {"serve"}}}));
  EXPECT_TRUE(IsGated({{"command", "/opt/bin/udon-mcp"}, {"args", {"serve", "--manifest", "m"}}}));
  EXPECT_FALSE(IsGated({{"command", "udon-mcp"}, {"args", {"call"}}}));
  EXPECT_FALSE(IsGated({{"command", "udon-mcp-demo-server"}, {"args", {"serve"}}}));
  EXPECT_FALSE(IsGated({{"url", "http://127.0.0.1/mcp"}}));
}

}  // namespace
}  // namespace udon::adopt
