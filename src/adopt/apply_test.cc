#include "adopt/apply.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "adopt/jsonc.h"
#include "adopt/discovery.h"
#include "base/file.h"
#include "test_support.h"
#include "base/sha256.h"
#include "json/canonical.h"
#include "manifest/internal/test_manifest.h"

namespace udon::adopt {
namespace {

namespace fs = std::filesystem;

// A host file (the VS Code fixture) adopted into D with a reviewed manifest, as
// `adopt --dir D` leaves it.
class ApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = temp_.path();
    fs::create_directories(root_ / "project/.vscode");
    fs::create_directories(root_ / "d/vscode");
    host_ = (root_ / "project/.vscode/mcp.json").string();
    dir_ = (root_ / "d").string();
    original_ = *base::ReadFile(std::string(UDON_SOURCE_DIR) + "/tests/data/adopt/vscode_mcp.json");
    ASSERT_TRUE(base::WriteFileAtomic(host_, original_).ok());
    WriteManifest(manifest::internal::ValidManifestJson());
    Adoption adoption;
    adoption.entries.push_back({"vscode", "project", host_, {"servers", "memory"}, "memory", "blender_farm",
                                "vscode/memory.tools.json", "vscode/memory.pin", (root_ / "project").string(), true});
    adoption.files[host_] = {"vscode", base::Sha256Hex(original_), "", ""};
    ASSERT_TRUE(adoption.Save(dir_).ok());
    ASSERT_TRUE(base::WriteFileAtomic(dir_ + "/mcp.json", Runtime().dump(2)).ok());
  }

  // D/mcp.json as adopt --dir D writes it: the entry the gateway starts the upstream from.
  static json::Value Runtime() {
    return {{"mcpServers", {{"blender_farm", {{"command", "node"}, {"args", {"memory.js"}}}}}}};
  }

  void WriteManifest(const json::Value& document) {
    ASSERT_TRUE(base::WriteFileAtomic(dir_ + "/vscode/memory.tools.json", document.dump(2)).ok());
  }
  std::string Host() { return *base::ReadFile(host_); }
  int Backups() {
    int count = 0;
    for (const auto& item : fs::directory_iterator(root_ / "project/.vscode")) {
      count += item.path().extension() == ".bak";
    }
    return count;
  }

  udon::testing::TempDir temp_;
  fs::path root_;
  std::string host_;
  std::string dir_;
  std::string original_;
};

TEST_F(ApplyTest, ApplyRewritesBacksUpAndPinsThenUndoRestoresByteForByte) {
  ::chmod(host_.c_str(), 0600);
  auto report = Apply(dir_, "/opt/udon/bin/udon-mcp");
  ASSERT_TRUE(report.ok()) << report.error().Describe();
  ASSERT_EQ(report->entries.size(), 1u);
  EXPECT_EQ(report->entries[0].reviewed, std::vector<std::string>{"render_turntable"});
  EXPECT_EQ(report->entries[0].unreviewed, std::vector<std::string>{"list_assets"});
  const json::Value entry = (*ParseJsonc(Host()))["servers"]["memory"];
  EXPECT_TRUE(IsGated(entry));
  EXPECT_EQ(entry["args"][4], dir_ + "/vscode/memory.pin");
  const std::string entry_sha256 = *json::CanonicalSha256(Runtime()["mcpServers"]["blender_farm"]);
  EXPECT_EQ(*base::ReadFile(dir_ + "/vscode/memory.pin"),
            report->entries[0].manifest_sha256 + "\nentry blender_farm " + entry_sha256 + "\n");
  ASSERT_EQ(report->files.size(), 1u);
  EXPECT_EQ(*base::ReadFile(report->files[0].second), original_);
  struct stat info {};
  ASSERT_EQ(::stat(host_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(Apply(dir_, "/opt/udon/bin/udon-mcp").error().code, "adopt.already_applied");

  auto restored = Undo(dir_);
  ASSERT_TRUE(restored.ok()) << restored.error().Describe();
  EXPECT_EQ(Host(), original_);
  ASSERT_EQ(::stat(host_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(Undo(dir_).error().code, "adopt.not_applied");
  // Applied again after the undo: the record's digest is the original's again.
  EXPECT_TRUE(Apply(dir_, "/opt/udon/bin/udon-mcp").ok());
}

// Issue 38, item 2: the pin, like everything adopt writes under D, is its owner's only.
TEST_F(ApplyTest, ThePinIsOwnerOnly) {
  ::umask(022);
  ASSERT_TRUE(Apply(dir_, "/opt/udon/bin/udon-mcp").ok());
  struct stat info {};
  ASSERT_EQ(::stat((dir_ + "/vscode/memory.pin").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST_F(ApplyTest, TheGatewayRunsUnderTheCapturesPolicy) {
  auto adoption = Adoption::Load(dir_);
  ASSERT_TRUE(adoption.ok());
  adoption->policy = "/etc/udon/policy.yaml";
  ASSERT_TRUE(adoption->Save(dir_).ok());
  ASSERT_TRUE(Apply(dir_, "/opt/udon/bin/udon-mcp").ok());
  const json::Value args = (*ParseJsonc(Host()))["servers"]["memory"]["args"];
  ASSERT_EQ(args.size(), 11u);
  EXPECT_EQ(args[9], "--policy");
  EXPECT_EQ(args[10], "/etc/udon/policy.yaml");
}

TEST_F(ApplyTest, ASymlinkedHostFileIsWrittenThroughItsLink) {
  fs::create_directories(root_ / "dotfiles");
  fs::rename(host_, root_ / "dotfiles/mcp.json");
  fs::create_symlink(root_ / "dotfiles/mcp.json", host_);
  ASSERT_TRUE(Apply(dir_, "/opt/udon/bin/udon-mcp").ok());
  EXPECT_TRUE(fs::is_symlink(host_));
  EXPECT_TRUE(IsGated((*ParseJsonc(Host()))["servers"]["memory"]));
  ASSERT_TRUE(Undo(dir_).ok());
  EXPECT_TRUE(fs::is_symlink(host_));
  EXPECT_EQ(Host(), original_);
}

TEST_F(ApplyTest, AFileChangedSinceAdoptReadItIsRefusedAndNothingIsWritten) {
  const std::string changed = original_ + "\n";
  ASSERT_TRUE(base::WriteFileAtomic(host_, changed).ok());
  auto report = Apply(dir_, "/opt/udon/bin/udon-mcp");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, "adopt.file_changed");
  EXPECT_EQ(report.error().details["path"], host_);
  EXPECT_EQ(Host(), changed);
  EXPECT_EQ(Backups(), 0);
  EXPECT_FALSE(fs::exists(dir_ + "/vscode/memory.pin"));
}

TEST_F(ApplyTest, AFileChangedSinceApplyIsNotRestoredOver) {
  ASSERT_TRUE(Apply(dir_, "/opt/udon/bin/udon-mcp").ok());
  const std::string edited = Host() + " ";
  ASSERT_TRUE(base::WriteFileAtomic(host_, edited).ok());
  auto restored = Undo(dir_);
  ASSERT_FALSE(restored.ok());
  EXPECT_EQ(restored.error().code, "adopt.file_changed");
  EXPECT_EQ(Host(), edited);
}

TEST_F(ApplyTest, NothingIsPinnedOrRewrittenBeforeAToolIsReviewed) {
  json::Value document = manifest::internal::ValidManifestJson();
  document["servers"]["blender_farm"]["reviews"] = json::Value::object();
  WriteManifest(document);
  auto report = Apply(dir_, "/opt/udon/bin/udon-mcp");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, "adopt.not_reviewed");
  EXPECT_EQ(report.error().details["server"], "blender_farm");
  EXPECT_EQ(Host(), original_);
  EXPECT_EQ(Backups(), 0);
  EXPECT_FALSE(fs::exists(dir_ + "/vscode/memory.pin"));
}

}  // namespace
}  // namespace udon::adopt
