// Issue 38, items 2 and 9 from the attacker's side: an adoption directory another user can
// write (or owns) decides what the user's hosts run, so adopt refuses it.
#include "adopt/adoption_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.h"

namespace udon::adopt {
namespace {

unsigned Mode(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

TEST(AdoptionDir, ANewDirectoryIsOwnerOnlyParentsIncluded) {
  udon::testing::TempDir temp;
  const std::string dir = temp.File("a/b/adopted");
  ASSERT_TRUE(SecureAdoptionDir(dir, true).ok());
  EXPECT_EQ(Mode(dir), 0700u);
  EXPECT_EQ(SecureAdoptionDir(temp.File("missing"), false).error().code, "io.unreadable");
  EXPECT_FALSE(std::filesystem::exists(temp.File("missing")));
}

TEST(AdoptionDir, ADirectoryOthersCanWriteIsRefused) {
  udon::testing::TempDir temp;
  const std::string dir = temp.File("adopted");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  for (unsigned mode : {0777u, 0770u, 0722u}) {
    ASSERT_EQ(::chmod(dir.c_str(), mode), 0);
    const Status secured = SecureAdoptionDir(dir, true);
    ASSERT_FALSE(secured.ok()) << mode;
    EXPECT_EQ(secured.error().code, "adopt.dir_unsafe");
    EXPECT_EQ(secured.error().details["reason"], "writable_by_others");
    EXPECT_EQ(Mode(dir), mode);  // refused, not repaired behind the user's back
  }
}

TEST(AdoptionDir, ADirectoryAnotherUserOwnsIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a directory to another user needs root";
  udon::testing::TempDir temp;
  const std::string dir = temp.File("adopted");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  const Status secured = SecureAdoptionDir(dir, true);
  ASSERT_FALSE(secured.ok());
  EXPECT_EQ(secured.error().details["reason"], "other_owner");
}

TEST(AdoptionDir, AnOwnReadableDirectoryIsMadeOwnerOnlyAndAFileIsRefused) {
  udon::testing::TempDir temp;
  const std::string dir = temp.File("adopted");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  ASSERT_TRUE(SecureAdoptionDir(dir, false).ok());
  EXPECT_EQ(Mode(dir), 0700u);
  temp.Write("file", "x");
  EXPECT_EQ(SecureAdoptionDir(temp.File("file"), true).error().details["reason"], "not_directory");
}

}  // namespace
}  // namespace udon::adopt
