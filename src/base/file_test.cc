#include "base/file.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>


namespace udon::base {
namespace {

namespace fs = std::filesystem;

std::string ReadBack(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "udon-file-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  std::size_t EntryCount() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }

  std::string dir_;
};

TEST_F(FileTest, WriteThenRead) {
  const std::string bytes("binary\0bytes\n", 13);
  ASSERT_TRUE(WriteFileAtomic(Path("out.json"), bytes).ok());
  Result<std::string> read = ReadFile(Path("out.json"));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, bytes);
  EXPECT_EQ(EntryCount(), 1u);  // no temporary file left behind
}

TEST_F(FileTest, ReplacesAndKeepsPermissions) {
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "old").ok());
  ASSERT_EQ(::chmod(Path("f").c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "new").ok());
  EXPECT_EQ(ReadBack(Path("f")), "new");
  struct stat info {};
  ASSERT_EQ(::stat(Path("f").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(EntryCount(), 1u);
}

// A token file: 0600 from its creation, whatever the file it replaces allowed.
TEST_F(FileTest, ASecretIsWrittenOwnerOnlyEvenOverAReadableFile) {
  ASSERT_TRUE(WriteFileAtomic(Path("token"), "old").ok());
  ASSERT_EQ(::chmod(Path("token").c_str(), 0644), 0);
  const mode_t umask_before = ::umask(0);  // the umask must not widen (or narrow) it
  const Status written = WriteSecretFileAtomic(Path("token"), "secret");
  ::umask(umask_before);
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(ReadBack(Path("token")), "secret");
  struct stat info {};
  ASSERT_EQ(::stat(Path("token").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(EntryCount(), 1u);
}

TEST_F(FileTest, FailureLeavesTheOldFileIntact) {
  ASSERT_TRUE(WriteFileAtomic(Path("keep"), "original").ok());
  // A file size limit makes the write of the temporary file fail part-way (as a full disk
  // would), also for root.
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto saved_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 4;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Status status = WriteFileAtomic(Path("keep"), "replacement");
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, saved_handler);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "io.write_failed");
  EXPECT_EQ(ReadBack(Path("keep")), "original");
  EXPECT_EQ(EntryCount(), 1u);
}

TEST_F(FileTest, RenameFailureRemovesTheTemporaryFile) {
  // The target is a non-empty directory: the temporary file is written, the rename fails.
  fs::create_directory(Path("target"));
  ASSERT_TRUE(WriteFileAtomic(Path("target/inner"), "x").ok());
  Status status = WriteFileAtomic(Path("target"), "data");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "io.write_failed");
  EXPECT_EQ(EntryCount(), 1u);
  EXPECT_TRUE(fs::is_directory(Path("target")));
}

TEST_F(FileTest, MissingFileIsUnreadable) {
  Result<std::string> read = ReadFile(Path("absent"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, "io.unreadable");
  Result<std::string> directory = ReadFile(dir_);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().code, "io.unreadable");
}

TEST_F(FileTest, SizeLimit) {
  ASSERT_TRUE(WriteFileAtomic(Path("big"), std::string(100, 'x')).ok());
  EXPECT_TRUE(ReadFile(Path("big"), 100).ok());
  Result<std::string> read = ReadFile(Path("big"), 99);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, "io.too_large");
}

TEST_F(FileTest, ReplaceIfUnchangedReplacesAndLeavesNoTemporary) {
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "old").ok());
  ASSERT_EQ(::chmod(Path("f").c_str(), 0640), 0);
  Result<FileSnapshot> read = ReadFileSnapshot(Path("f"));
  ASSERT_TRUE(read.ok());
  ASSERT_TRUE(ReplaceFileIfUnchanged(Path("f"), *read, "new").ok());
  EXPECT_EQ(ReadBack(Path("f")), "new");
  struct stat info {};
  ASSERT_EQ(::stat(Path("f").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640u);
  EXPECT_EQ(EntryCount(), 1u);
}

// The attack: between the read and the rename, the file is replaced by a link to a file
// the writer may write (same bytes, so a digest alone cannot tell). The link is not
// written through, nor replaced.
TEST_F(FileTest, ReplaceIfUnchangedRefusesALinkSwappedInBeforeTheRename) {
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "same").ok());
  ASSERT_TRUE(WriteFileAtomic(Path("victim"), "same").ok());
  Result<FileSnapshot> read = ReadFileSnapshot(Path("f"));
  ASSERT_TRUE(read.ok());
  ReplaceOptions options;
  options.before_last_check = [&] {
    fs::remove(Path("f"));
    fs::create_symlink(Path("victim"), Path("f"));
  };
  Status status = ReplaceFileIfUnchanged(Path("f"), *read, "attacker's gain", options);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "io.target_changed");
  EXPECT_EQ(status.error().details["path"], Path("f"));
  EXPECT_TRUE(fs::is_symlink(Path("f")));
  EXPECT_EQ(ReadBack(Path("victim")), "same");
  EXPECT_EQ(EntryCount(), 2u);  // f and victim: the temporary is gone
}

// Another program writes the file between the read and the rename: its write is kept.
TEST_F(FileTest, ReplaceIfUnchangedKeepsAWriteMadeMeanwhile) {
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "read").ok());
  Result<FileSnapshot> read = ReadFileSnapshot(Path("f"));
  ASSERT_TRUE(read.ok());
  ReplaceOptions options;
  options.before_last_check = [&] { std::ofstream(Path("f"), std::ios::binary | std::ios::trunc) << "reed"; };
  Status status = ReplaceFileIfUnchanged(Path("f"), *read, "ours", options);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "io.target_changed");
  EXPECT_EQ(ReadBack(Path("f")), "reed");
  EXPECT_EQ(EntryCount(), 1u);
}

// Run as root over another user's file, the replacement stays that user's.
TEST_F(FileTest, ReplaceIfUnchangedKeepsOwnerAndGroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "theirs").ok());
  ASSERT_EQ(::chown(Path("f").c_str(), 65534, 65534), 0);
  Result<FileSnapshot> read = ReadFileSnapshot(Path("f"));
  ASSERT_TRUE(read.ok());
  ASSERT_TRUE(ReplaceFileIfUnchanged(Path("f"), *read, "still theirs").ok());
  struct stat info {};
  ASSERT_EQ(::stat(Path("f").c_str(), &info), 0);
  EXPECT_EQ(info.st_uid, 65534u);
  EXPECT_EQ(info.st_gid, 65534u);
}

// A user who may not give the file's group (not a member of it) is refused rather than
// silently changing it: a child process runs as user 65534 over its file of group 0.
TEST_F(FileTest, ReplaceIfUnchangedRefusesRatherThanChangeTheGroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a child as another user";
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "theirs").ok());
  ASSERT_EQ(::chown(Path("f").c_str(), 65534, 0), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    Result<FileSnapshot> read = ReadFileSnapshot(Path("f"));
    if (!read.ok()) ::_exit(4);
    Status status = ReplaceFileIfUnchanged(Path("f"), *read, "changed");
    ::_exit(status.ok() ? 0 : status.error().code == "io.write_failed" ? 1 : 2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(ReadBack(Path("f")), "theirs");
  EXPECT_EQ(EntryCount(), 1u);
}

TEST_F(FileTest, ReadFileSnapshotRefusesALink) {
  ASSERT_TRUE(WriteFileAtomic(Path("target"), "x").ok());
  fs::create_symlink(Path("target"), Path("link"));
  Result<FileSnapshot> read = ReadFileSnapshot(Path("link"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, "io.unreadable");
}

// Only regular files named like our temporaries of that file go; a planted link of that
// name is removed as a link at most, never followed.
TEST_F(FileTest, RemoveStaleTemporariesRemovesOnlyOurs) {
  const std::string hex(16, 'a');
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "file").ok());
  ASSERT_TRUE(WriteFileAtomic(Path("f.tmp." + hex), "stale").ok());
  ASSERT_TRUE(WriteFileAtomic(Path("f.tmp.short"), "kept").ok());
  ASSERT_TRUE(WriteFileAtomic(Path("g.tmp." + hex), "kept").ok());
  ASSERT_TRUE(WriteFileAtomic(Path("victim"), "kept").ok());
  fs::create_symlink(Path("victim"), Path("f.tmp." + std::string(16, 'b')));
  EXPECT_EQ(RemoveStaleTemporaries(Path("f"), ::geteuid()), 1);
  EXPECT_FALSE(fs::exists(Path("f.tmp." + hex)));
  EXPECT_TRUE(fs::is_symlink(Path("f.tmp." + std::string(16, 'b'))));
  EXPECT_EQ(ReadBack(Path("victim")), "kept");
  EXPECT_EQ(EntryCount(), 5u);
}

// A second process cannot take a lock the first holds, and can once it is released.
TEST_F(FileTest, FileLockIsExclusiveAcrossProcesses) {
  auto in_child = [&] {
    const pid_t child = ::fork();
    if (child == 0) {
      Result<FileLock> lock = FileLock::TryAcquire(Path("lock"));
      ::_exit(lock.ok() ? 0 : lock.error().code == "io.locked" ? 1 : 2);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  {
    Result<FileLock> held = FileLock::TryAcquire(Path("lock"));
    ASSERT_TRUE(held.ok());
    EXPECT_EQ(in_child(), 1);
  }
  EXPECT_EQ(in_child(), 0);
}

// A lock is released when its holder lets it go, even while a process forked meanwhile
// (a server being started, before its exec) still shares the lock's open file.
TEST_F(FileTest, FileLockIsReleasedAlthoughAForkedChildSharesItsDescriptor) {
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  std::optional<Result<FileLock>> held = FileLock::TryAcquire(Path("lock"));
  ASSERT_TRUE(held->ok());
  const pid_t child = ::fork();
  if (child == 0) {
    char byte = 0;
    ::close(go[1]);
    ::_exit(::read(go[0], &byte, 1) == 1 ? 0 : 1);  // holds the shared descriptor until told
  }
  ::close(go[0]);
  held.reset();
  Result<FileLock> again = FileLock::TryAcquire(Path("lock"));
  EXPECT_TRUE(again.ok()) << again.error().Describe();
  EXPECT_EQ(::write(go[1], "x", 1), 1);
  ::close(go[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
}

}  // namespace
}  // namespace udon::base
