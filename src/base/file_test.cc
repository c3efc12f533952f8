#include "base/file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
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

}  // namespace
}  // namespace udon::base
