#include "base/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <thread>

#include "base/random.h"

namespace udon::base {
namespace {

Error Unreadable(const std::string& path) {
  Error error = MakeError("io.unreadable", "cannot read " + path);
  error.details["path"] = path;
  return error;
}

Error WriteFailed(const std::string& path) {
  Error error = MakeError("io.write_failed", "cannot write " + path);
  error.details["path"] = path;
  return error;
}

// Reads fd to the end; false on a read error or when more than max_bytes arrive.
enum class ReadOutcome { kOk, kFailed, kTooLarge };
// Reads straight into `out` up to `expected` bytes (a regular file's size: no staging
// copy of a large manifest on every call), then whatever follows in 64 KiB pieces.
ReadOutcome ReadAll(int fd, std::size_t max_bytes, std::string& out, std::size_t expected = 0) {
  if (expected > 0) {
    out.resize(expected);
    std::size_t filled = 0;
    while (filled < expected) {
      const ssize_t n = ::read(fd, out.data() + filled, expected - filled);
      if (n < 0) {
        if (errno == EINTR) continue;
        return ReadOutcome::kFailed;
      }
      if (n == 0) break;  // the file shrank meanwhile
      filled += static_cast<std::size_t>(n);
    }
    out.resize(filled);
    if (filled < expected) return ReadOutcome::kOk;
  }
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ReadOutcome::kFailed;
    }
    if (n == 0) return ReadOutcome::kOk;
    out.append(buffer, static_cast<std::size_t>(n));
    if (max_bytes != 0 && out.size() > max_bytes) return ReadOutcome::kTooLarge;
  }
}

std::string DirectoryOf(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

constexpr std::size_t kTemporarySuffixBytes = 8;

// Creates a fresh file beside path (O_EXCL, so never someone else's) with `mode`, returning
// its fd; path is relative to dir_fd (AT_FDCWD: the working directory). The name's suffix
// is random only to avoid collisions, not for secrecy.
int CreateTemporary(int dir_fd, const std::string& path, mode_t mode, std::string& temp_path) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto suffix = RandomHex(kTemporarySuffixBytes);
    if (!suffix.ok()) return -1;
    temp_path = path + ".tmp." + *suffix;
    const int fd = ::openat(dir_fd, temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

// `secret`: the file is created 0600 (never readable by others, not even for a moment),
// whatever a file it replaces allowed; else it keeps the permissions of the one replaced.
Status WriteAtomic(const std::string& path, std::string_view bytes, bool secret) {
  std::string temp_path;
  const int fd = CreateTemporary(AT_FDCWD, path, secret ? 0600 : 0644, temp_path);
  if (fd < 0) return WriteFailed(path);
  struct stat existing {};
  if (secret) {
    ::fchmod(fd, 0600);  // exactly 0600, whatever the umask took away
  } else if (::stat(path.c_str(), &existing) == 0) {
    ::fchmod(fd, existing.st_mode & 07777);
  }
  const bool written = WriteAll(fd, bytes) && ::fsync(fd) == 0;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(temp_path.c_str(), path.c_str()) != 0) {
    ::unlink(temp_path.c_str());
    return WriteFailed(path);
  }
  // The rename is durable only once the directory entry is.
  const int dir_fd = ::open(DirectoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    const bool synced = ::fsync(dir_fd) == 0;
    ::close(dir_fd);
    if (!synced) return WriteFailed(path);
  }
  return OkStatus();
}

}  // namespace

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

Result<std::string> ReadFile(const std::string& path, std::size_t max_bytes) {
  const bool is_stdin = path == "-";
  const int fd = is_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Unreadable(path);
  std::string contents;
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    if (max_bytes != 0 && static_cast<std::size_t>(info.st_size) > max_bytes) {
      if (!is_stdin) ::close(fd);
      Error error = MakeError("io.too_large", "the file exceeds the size limit");
      error.details["path"] = path;
      return error;
    }
  } else if (!is_stdin && S_ISDIR(info.st_mode)) {
    ::close(fd);
    return Unreadable(path);
  }
  const std::size_t expected = S_ISREG(info.st_mode) ? static_cast<std::size_t>(info.st_size) : 0;
  const ReadOutcome outcome = ReadAll(fd, max_bytes, contents, expected);
  if (!is_stdin) ::close(fd);
  if (outcome == ReadOutcome::kFailed) return Unreadable(path);
  if (outcome == ReadOutcome::kTooLarge) {
    Error error = MakeError("io.too_large", "the file exceeds the size limit");
    error.details["path"] = path;
    return error;
  }
  return contents;
}

Status WriteFileAtomic(const std::string& path, std::string_view bytes) {
  return WriteAtomic(path, bytes, false);
}

Status WriteSecretFileAtomic(const std::string& path, std::string_view bytes) {
  return WriteAtomic(path, bytes, true);
}

namespace {

std::string NameOf(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsFileOf(const struct stat& info, const FileSnapshot& snapshot) {
  return S_ISREG(info.st_mode) && info.st_dev == snapshot.device && info.st_ino == snapshot.inode;
}

// The file named `name` in dir_fd, opened without following a link and without blocking
// on a FIFO; its stat in `info`. -1 when it cannot be opened or is not a regular file.
int OpenRegularNoFollow(int dir_fd, const std::string& name, struct stat& info) {
  const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// True when `name` in dir_fd is still the snapshot's file with the snapshot's bytes.
bool StillUnchanged(int dir_fd, const std::string& name, const FileSnapshot& expected) {
  struct stat info {};
  const int fd = OpenRegularNoFollow(dir_fd, name, info);
  if (fd < 0) return false;
  std::string bytes;
  const bool read = IsFileOf(info, expected) && static_cast<std::size_t>(info.st_size) == expected.bytes.size() &&
                    ReadAll(fd, expected.bytes.size(), bytes, expected.bytes.size()) == ReadOutcome::kOk;
  ::close(fd);
  return read && bytes == expected.bytes;
}

// The new bytes, durable, with the replaced file's owner, group and permission bits (the
// owner first: a chown may clear set-id bits). An owner or group this process cannot give
// is refused rather than changed.
Status FillTemporary(int fd, const std::string& path, const FileSnapshot& expected, std::string_view bytes) {
  struct stat info {};
  if (!WriteAll(fd, bytes) || ::fstat(fd, &info) != 0) return WriteFailed(path);
  if ((info.st_uid != expected.owner || info.st_gid != expected.group) &&
      ::fchown(fd, expected.owner, expected.group) != 0) {
    Error error = MakeError("io.write_failed", "cannot give the new file the owner and group of the file it replaces");
    error.details["path"] = path;
    return error;
  }
  if (::fchmod(fd, expected.mode & 07777) != 0 || ::fsync(fd) != 0) return WriteFailed(path);
  return OkStatus();
}

Error TargetChanged(const std::string& path) {
  Error error = MakeError("io.target_changed", "the file changed since it was read; it was not replaced");
  error.details["path"] = path;
  return error;
}

bool IsTemporaryOf(const std::string& entry, const std::string& name) {
  const std::string prefix = name + ".tmp.";
  if (entry.size() != prefix.size() + 2 * kTemporarySuffixBytes || entry.compare(0, prefix.size(), prefix) != 0) {
    return false;
  }
  for (std::size_t i = prefix.size(); i < entry.size(); ++i) {
    const char c = entry[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

Result<FileSnapshot> ReadFileSnapshot(const std::string& path) {
  struct stat info {};
  const int fd = OpenRegularNoFollow(AT_FDCWD, path, info);
  if (fd < 0) return Unreadable(path);
  FileSnapshot snapshot{"", info.st_dev, info.st_ino, info.st_uid, info.st_gid, info.st_mode};
  const ReadOutcome outcome = ReadAll(fd, 0, snapshot.bytes, static_cast<std::size_t>(info.st_size));
  ::close(fd);
  if (outcome != ReadOutcome::kOk) return Unreadable(path);
  return snapshot;
}

Status ReplaceFileIfUnchanged(const std::string& path, const FileSnapshot& expected, std::string_view bytes,
                              const ReplaceOptions& options) {
  const int dir_fd = ::open(DirectoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return WriteFailed(path);
  const std::string name = NameOf(path);
  std::string temp_name;
  const int fd = CreateTemporary(dir_fd, name, 0600, temp_name);
  Status status = OkStatus();
  if (fd < 0) {
    status = WriteFailed(path);
  } else {
    status = FillTemporary(fd, path, expected, bytes);
    if (::close(fd) != 0 && status.ok()) status = WriteFailed(path);
  }
  if (status.ok() && options.before_last_check) options.before_last_check();
  if (status.ok() && !StillUnchanged(dir_fd, name, expected)) status = TargetChanged(path);
  if (status.ok() && ::renameat(dir_fd, temp_name.c_str(), dir_fd, name.c_str()) != 0) status = WriteFailed(path);
  if (!status.ok() && fd >= 0) ::unlinkat(dir_fd, temp_name.c_str(), 0);
  // The rename is durable only once the directory entry is.
  if (status.ok() && ::fsync(dir_fd) != 0) status = WriteFailed(path);
  ::close(dir_fd);
  return status;
}

int RemoveStaleTemporaries(const std::string& path, uid_t owner) {
  const int dir_fd = ::open(DirectoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return 0;
  DIR* listing = ::fdopendir(::dup(dir_fd));
  const std::string name = NameOf(path);
  int removed = 0;
  while (listing != nullptr) {
    const dirent* entry = ::readdir(listing);
    if (entry == nullptr) break;
    struct stat info {};
    if (!IsTemporaryOf(entry->d_name, name) || ::fstatat(dir_fd, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) {
      continue;
    }
    const bool ours = S_ISREG(info.st_mode) && (info.st_uid == ::geteuid() || info.st_uid == owner);
    if (ours && ::unlinkat(dir_fd, entry->d_name, 0) == 0) ++removed;
  }
  if (listing != nullptr) ::closedir(listing);
  ::close(dir_fd);
  return removed;
}

Result<FileLock> FileLock::TryAcquire(const std::string& path) { return Acquire(path, std::chrono::milliseconds(0)); }

Result<FileLock> FileLock::Acquire(const std::string& path, std::chrono::milliseconds wait) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return WriteFailed(path);
  FileLock lock(fd);  // closes the file on every way out but success
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto pause = std::chrono::milliseconds(1);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return WriteFailed(path);
    if (std::chrono::steady_clock::now() >= deadline) {
      Error error = MakeError("io.locked", "another process holds the lock");
      error.details["path"] = path;
      return error;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
  return Result<FileLock>(std::move(lock));
}

FileLock::~FileLock() {
  if (fd_ < 0) return;
  // Unlocked first: a child forked meanwhile (before its exec) shares the open file, and
  // closing only this descriptor would leave the lock held until the child lets it go.
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace udon::base
