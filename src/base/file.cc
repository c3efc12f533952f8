#include "base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

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

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string DirectoryOf(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Creates a fresh file beside path (O_EXCL, so never someone else's) with `mode`, returning
// its fd. The name's suffix is random only to avoid collisions, not for secrecy.
int CreateTemporary(const std::string& path, mode_t mode, std::string& temp_path) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto suffix = RandomHex(8);
    if (!suffix.ok()) return -1;
    temp_path = path + ".tmp." + *suffix;
    const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

// `secret`: the file is created 0600 (never readable by others, not even for a moment),
// whatever a file it replaces allowed; else it keeps the permissions of the one replaced.
Status WriteAtomic(const std::string& path, std::string_view bytes, bool secret) {
  std::string temp_path;
  const int fd = CreateTemporary(path, secret ? 0600 : 0644, temp_path);
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

}  // namespace udon::base
