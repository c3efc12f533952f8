#include "adopt/apply.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "adopt/jsonc.h"
#include "adopt/check.h"
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

// Issue 38 items 3, 4, 6, 8, 12, 15: the host files as someone else also writes them.

constexpr char kUdonMcp[] = "/opt/udon/bin/udon-mcp";

int Temporaries(const fs::path& dir) {
  int count = 0;
  for (const auto& item : fs::directory_iterator(dir)) {
    count += item.path().filename().string().find(".tmp.") != std::string::npos;
  }
  return count;
}

// Item 3: after the digest check, the host file is swapped for a link to a file the user
// can write (with the same bytes). Neither --apply nor --undo writes through it.
TEST_F(ApplyTest, ALinkSwappedInBeforeTheRenameIsNotWrittenThrough) {
  const std::string victim = (root_ / "victim").string();
  ASSERT_TRUE(base::WriteFileAtomic(victim, original_).ok());
  FileSeams swap;
  swap.before_last_check = [&](const std::string& path) {
    EXPECT_EQ(path, host_);
    fs::rename(host_, root_ / "moved-away.json");
    fs::create_symlink(victim, host_);
  };
  auto report = Apply(dir_, kUdonMcp, swap);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, "adopt.file_changed");
  EXPECT_EQ(report.error().details["path"], host_);
  EXPECT_EQ(*base::ReadFile(victim), original_);
  EXPECT_TRUE(fs::is_symlink(host_));
  EXPECT_EQ(Temporaries(root_ / "project/.vscode"), 0);
  // --undo: the rewritten file is swapped for the link just before the restore.
  fs::remove(host_);
  fs::rename(root_ / "moved-away.json", host_);
  ASSERT_TRUE(Apply(dir_, kUdonMcp).ok());
  const std::string rewritten = Host();
  ASSERT_TRUE(base::WriteFileAtomic(victim, rewritten).ok());
  auto restored = Undo(dir_, swap);
  ASSERT_FALSE(restored.ok());
  EXPECT_EQ(restored.error().code, "adopt.file_changed");
  EXPECT_EQ(*base::ReadFile(victim), rewritten);
}

// Item 4: the host rewrites its own file between adopt's read and rename (Claude Code
// rewrites ~/.claude.json often). Its write stays, and neither run reports success.
TEST_F(ApplyTest, AHostsOwnWriteDuringApplyOrUndoIsKept) {
  const std::string hosts_write = original_ + "\n// the host's own write\n";
  FileSeams host_writes;
  host_writes.before_last_check = [&](const std::string&) {
    std::ofstream(host_, std::ios::binary | std::ios::trunc) << hosts_write;
  };
  auto report = Apply(dir_, kUdonMcp, host_writes);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, "adopt.file_changed");
  EXPECT_EQ(Host(), hosts_write);
  EXPECT_EQ(Undo(dir_).error().code, "adopt.not_applied");  // the record was taken back

  ASSERT_TRUE(base::WriteFileAtomic(host_, original_).ok());
  ASSERT_TRUE(Apply(dir_, kUdonMcp).ok());
  auto restored = Undo(dir_, host_writes);
  ASSERT_FALSE(restored.ok());
  EXPECT_EQ(restored.error().code, "adopt.file_changed");
  EXPECT_EQ(Host(), hosts_write);
}

// Item 6: one file shared by two hosts through links is rewritten once, with both hosts'
// entries, and --undo restores it.
class SharedFileTest : public ApplyTest {
 protected:
  void Share(const std::vector<std::string>& second_entry) {
    fs::create_directories(root_ / "other");
    second_ = (root_ / "other/mcp.json").string();
    fs::create_symlink(host_, second_);
    auto adoption = Adoption::Load(dir_);
    ASSERT_TRUE(adoption.ok());
    adoption->entries.push_back({"cursor", "user", second_, second_entry, second_entry.back(), "blender_farm",
                                 "vscode/memory.tools.json", "vscode/memory.pin", "", true});
    adoption->files[second_] = {"cursor", base::Sha256Hex(original_), "", ""};
    ASSERT_TRUE(adoption->Save(dir_).ok());
  }
  std::string second_;
};

TEST_F(SharedFileTest, OneFileThroughTwoPathsIsRewrittenOnceWithBothEdits) {
  Share({"servers", "remote"});
  auto report = Apply(dir_, kUdonMcp);
  ASSERT_TRUE(report.ok()) << report.error().Describe();
  const json::Value servers = (*ParseJsonc(Host()))["servers"];
  EXPECT_TRUE(IsGated(servers["memory"]));
  EXPECT_TRUE(IsGated(servers["remote"]));
  EXPECT_EQ(Backups(), 1);
  auto restored = Undo(dir_);
  ASSERT_TRUE(restored.ok()) << restored.error().Describe();
  EXPECT_EQ(restored->size(), 2u);
  EXPECT_EQ(Host(), original_);
  EXPECT_TRUE(fs::is_symlink(second_));
}

TEST_F(SharedFileTest, OneEntryThroughTwoPathsIsRefused) {
  Share({"servers", "memory"});
  auto report = Apply(dir_, kUdonMcp);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, "adopt.entry_shared");
  EXPECT_EQ(Host(), original_);
  EXPECT_EQ(Backups(), 0);
}

// Item 8: a second run (another process) while --apply holds D: apply, undo and capture
// are refused, and the first run's record stands.
TEST_F(ApplyTest, ASecondRunWhileAnApplyHoldsTheAdoptionIsRefused) {
  int reached[2];
  int proceed[2];
  ASSERT_EQ(::pipe(reached), 0);
  ASSERT_EQ(::pipe(proceed), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    // Only the parent writes `proceed`: if it stops early, the child reads end of file.
    ::close(proceed[1]);
    FileSeams pause;
    pause.before_last_check = [&](const std::string&) {
      char byte = 'r';
      if (::write(reached[1], &byte, 1) != 1 || ::read(proceed[0], &byte, 1) != 1) ::_exit(3);
    };
    ::_exit(Apply(dir_, kUdonMcp, pause).ok() ? 0 : 1);
  }
  ::close(proceed[0]);
  ::close(reached[1]);
  char byte = 0;
  ASSERT_EQ(::read(reached[0], &byte, 1), 1);
  EXPECT_EQ(Apply(dir_, kUdonMcp).error().code, "adopt.busy");
  EXPECT_EQ(Undo(dir_).error().code, "adopt.busy");
  CaptureRequest capture;
  capture.dir = dir_;
  EXPECT_EQ(CaptureEntries({}, capture).error().code, "adopt.busy");
  ASSERT_EQ(::write(proceed[1], &byte, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(Adoption::Load(dir_)->files.at(host_).applied_sha256.empty());
  EXPECT_EQ(CaptureEntries({}, capture).error().code, "adopt.nothing_selected");  // the lock is free again
  EXPECT_EQ(Apply(dir_, kUdonMcp).error().code, "adopt.already_applied");
  ::close(reached[0]);
  ::close(proceed[1]);
}

// Item 12: run as root over another user's file, --apply and --undo keep its owner and
// group (and the backup is the user's too).
TEST_F(ApplyTest, AnotherUsersFileKeepsItsOwnerAndGroupThroughApplyAndUndo) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the host file to another user";
  ASSERT_EQ(::chown(host_.c_str(), 65534, 65534), 0);
  auto owner_of = [](const std::string& path) {
    struct stat info {};
    EXPECT_EQ(::lstat(path.c_str(), &info), 0);
    return std::make_pair(info.st_uid, info.st_gid);
  };
  const auto theirs = std::make_pair(uid_t{65534}, gid_t{65534});
  auto report = Apply(dir_, kUdonMcp);
  ASSERT_TRUE(report.ok()) << report.error().Describe();
  EXPECT_EQ(owner_of(host_), theirs);
  EXPECT_EQ(owner_of(report->files[0].second), theirs);
  ASSERT_TRUE(Undo(dir_).ok());
  EXPECT_EQ(owner_of(host_), theirs);
  EXPECT_EQ(Host(), original_);
}

// A child process runs --apply and dies (exit 9) at the seam just before the rename.
int ApplyKilledBeforeItsRename(const std::string& dir) {
  const pid_t child = ::fork();
  if (child == 0) {
    FileSeams crash;
    crash.before_last_check = [](const std::string&) { ::_exit(9); };
    ::_exit(Apply(dir, kUdonMcp, crash).ok() ? 0 : 1);
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Item 15: --apply killed just before its rename. The backup is in the record already;
// the next run removes the temporary it left and applies; --undo then restores.
TEST_F(ApplyTest, AnApplyKilledBeforeItsRenameLeavesARecordTheNextRunsUnderstand) {
  ASSERT_EQ(ApplyKilledBeforeItsRename(dir_), 9);
  EXPECT_EQ(Temporaries(root_ / "project/.vscode"), 1);
  EXPECT_EQ(Host(), original_);
  const AdoptedFile record = Adoption::Load(dir_)->files.at(host_);
  ASSERT_FALSE(record.backup.empty());
  EXPECT_EQ(*base::ReadFile(record.backup), original_);

  auto restored = Undo(dir_);  // nothing was renamed: nothing to restore, the record cleared
  ASSERT_TRUE(restored.ok()) << restored.error().Describe();
  EXPECT_EQ(Temporaries(root_ / "project/.vscode"), 0);
  EXPECT_EQ(Host(), original_);
  auto report = Apply(dir_, kUdonMcp);
  ASSERT_TRUE(report.ok()) << report.error().Describe();
  ASSERT_TRUE(Undo(dir_).ok());
  EXPECT_EQ(Host(), original_);
}

TEST_F(ApplyTest, AnApplyKilledBeforeItsRenameIsAppliedByTheNextApply) {
  ASSERT_EQ(ApplyKilledBeforeItsRename(dir_), 9);
  auto report = Apply(dir_, kUdonMcp);
  ASSERT_TRUE(report.ok()) << report.error().Describe();
  EXPECT_EQ(Temporaries(root_ / "project/.vscode"), 0);
  EXPECT_TRUE(IsGated((*ParseJsonc(Host()))["servers"]["memory"]));
  ASSERT_TRUE(Undo(dir_).ok());
  EXPECT_EQ(Host(), original_);
}

// Issue 38 item 14: an adopt.json whose entries name a host file it does not record ends
// in a stable code, not internal.error.
TEST_F(ApplyTest, ARecordWithoutItsHostFilesIsRefusedWithAStableCode) {
  json::Value record = *json::Parse(*base::ReadFile(dir_ + "/adopt.json"));
  record["files"] = json::Value::object();
  ASSERT_TRUE(base::WriteFileAtomic(dir_ + "/adopt.json", record.dump()).ok());
  auto report = Apply(dir_, "/opt/udon/bin/udon-mcp");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, "adopt.record_invalid");
  EXPECT_EQ(report.error().details["server"], "blender_farm");
  EXPECT_EQ(Undo(dir_).error().code, "adopt.record_invalid");
  EXPECT_EQ(Host(), original_);
  EXPECT_EQ(Backups(), 0);
}

// Issue 38 item 21: of several host files, the refusal names the one that changed, in its
// message (what text output prints) as in its details.
TEST_F(ApplyTest, AFileChangedRefusalNamesTheFileInItsMessage) {
  ASSERT_TRUE(base::WriteFileAtomic(host_, original_ + "\n").ok());
  auto report = Apply(dir_, "/opt/udon/bin/udon-mcp");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, "adopt.file_changed");
  EXPECT_NE(report.error().Describe().find(host_), std::string::npos) << report.error().Describe();
  ASSERT_TRUE(base::WriteFileAtomic(host_, original_).ok());
  ASSERT_TRUE(Apply(dir_, "/opt/udon/bin/udon-mcp").ok());
  ASSERT_TRUE(base::WriteFileAtomic(host_, Host() + " ").ok());
  auto restored = Undo(dir_);
  ASSERT_FALSE(restored.ok());
  EXPECT_NE(restored.error().Describe().find(host_), std::string::npos) << restored.error().Describe();
  EXPECT_EQ(restored.error().details["path"], host_);
}

// Issue 38 item 10: an entry that still runs "udon-mcp serve" but is not what --apply wrote
// (here: another manifest and an injected variable) is not gated for --check, and is not
// started; one the host merely re-indented still is.
TEST_F(ApplyTest, CheckRefusesAGatewayEntryChangedSinceApply) {
  ASSERT_TRUE(Apply(dir_, "/opt/udon/bin/udon-mcp").ok());
  const std::string applied = Host();
  json::Value document = *ParseJsonc(applied);
  ASSERT_TRUE(base::WriteFileAtomic(host_, document.dump(4)).ok());  // re-indented, comments gone
  auto checks = CheckAdopted(dir_);
  ASSERT_TRUE(checks.ok()) << checks.error().Describe();
  EXPECT_TRUE((*checks)[0].gated);
  ASSERT_TRUE((*checks)[0].error);
  EXPECT_NE((*checks)[0].error->code, "adopt.entry_changed");

  for (const auto& [member, value] :
       std::vector<std::pair<std::string, json::Value>>{{"args", {"serve", "--manifest", "/srv/other.tools.json"}},
                                                        {"env", {{"LD_PRELOAD", "/opt/evil/x.so"}}}}) {
    json::Value changed = document;
    changed["servers"]["memory"][member] = value;
    ASSERT_TRUE(base::WriteFileAtomic(host_, changed.dump()).ok());
    auto refused = CheckAdopted(dir_);
    ASSERT_TRUE(refused.ok()) << refused.error().Describe();
    EXPECT_FALSE((*refused)[0].gated) << member;
    EXPECT_FALSE((*refused)[0].connected) << member;
    ASSERT_TRUE((*refused)[0].error) << member;
    EXPECT_EQ((*refused)[0].error->code, "adopt.entry_changed") << member;
  }
}

}  // namespace
}  // namespace udon::adopt
