#include "adopt/adoption_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace udon::adopt {
namespace {

Error Unsafe(const std::string& dir, const char* reason, const char* message) {
  Error error = MakeError("adopt.dir_unsafe", message);
  error.details["path"] = dir;
  error.details["reason"] = reason;
  return error;
}

}  // namespace

Status SecureAdoptionDir(const std::string& dir, bool create) {
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) {
    if (errno != ENOENT || !create) {
      Error error = MakeError("io.unreadable", "the adoption directory cannot be read");
      error.details["path"] = dir;
      return error;
    }
    std::error_code ignored;  // a missing parent is made as mkdir -p would; D itself is 0700
    std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ignored);
    return MakeOwnerOnlyDir(dir);
  }
  if (!S_ISDIR(info.st_mode)) return Unsafe(dir, "not_directory", "the adoption directory is not a directory");
  if (info.st_uid != ::geteuid()) {
    return Unsafe(dir, "other_owner",
                  "another user owns the adoption directory; what it holds decides what your hosts run as you");
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Unsafe(dir, "writable_by_others",
                  "others may write the adoption directory; what it holds decides what your hosts run as you "
                  "(chmod 700 it after checking its files, or choose another --dir)");
  }
  return MakeOwnerOnlyDir(dir);
}

Status MakeOwnerOnlyDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    Error error = MakeError("io.write_failed", "cannot create a directory in the adoption directory");
    error.details["path"] = dir;
    return error;
  }
  if (::chmod(dir.c_str(), 0700) != 0) {
    Error error = MakeError("io.write_failed", "cannot make a directory of the adoption directory owner-only");
    error.details["path"] = dir;
    return error;
  }
  return OkStatus();
}

}  // namespace udon::adopt
