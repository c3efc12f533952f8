// Reading inputs and writing outputs without ever leaving a half-written file.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace udon::base {

// The whole file, or stdin for "-". Errors: io.unreadable (the message names the path,
// never the contents). max_bytes 0 means no limit (io.too_large above it).
Result<std::string> ReadFile(const std::string& path, std::size_t max_bytes = 0);

// Writes to a temporary file in the same directory, fsyncs it, renames it over path and
// fsyncs the directory. Errors: io.write_failed.
Status WriteFileAtomic(const std::string& path, std::string_view bytes);
// The same for a secret (a token): the file is created 0600 and stays so, whatever the
// file it replaces allowed. Errors: io.write_failed.
Status WriteSecretFileAtomic(const std::string& path, std::string_view bytes);

// A regular file as read: its bytes, which file it was (device and inode), and the owner,
// group and permission bits a replacement keeps.
struct FileSnapshot {
  std::string bytes;
  dev_t device = 0;
  ino_t inode = 0;
  uid_t owner = 0;
  gid_t group = 0;
  mode_t mode = 0;
};

// Reads a regular file without following a link at the path's last component (O_NOFOLLOW),
// so that bytes and identity are of one file. Errors: io.unreadable (also for a link, a
// directory or anything else that is not a regular file).
Result<FileSnapshot> ReadFileSnapshot(const std::string& path);

struct ReplaceOptions {
  // Test seam: runs once the new bytes are in the temporary file, just before the last check.
  std::function<void()> before_last_check;
};

// WriteFileAtomic over a file someone else may write too: the temporary file is created
// 0600 in path's directory (opened once; every later step is relative to it), takes
// `expected`'s owner, group and permission bits, and is renamed over path only if, just
// before the rename, path still names `expected`'s file (same device and inode, not a link)
// holding `expected`'s bytes. A write between that last check and the rename is not seen
// (POSIX has no rename-if-unchanged). Errors: io.target_changed (nothing replaced,
// details.path), io.write_failed (also when the owner cannot be kept).
Status ReplaceFileIfUnchanged(const std::string& path, const FileSnapshot& expected, std::string_view bytes,
                              const ReplaceOptions& options = {});

// Removes what an interrupted write left beside path: regular files (a link is never
// followed nor removed) named `<name>.tmp.<16 hex digits>` and owned by this user or by
// `owner` (a temporary already given the replaced file's owner). Returns how many.
int RemoveStaleTemporaries(const std::string& path, uid_t owner);

// Writes BYTES whole to the descriptor FD, retrying interrupted and partial writes: false
// when a write fails (errno says why) or writes nothing.
bool WriteAll(int fd, std::string_view bytes);

// An exclusive lock on a file (flock), across processes and threads (each holder opens
// the file), held until destroyed.
class FileLock {
 public:
  // Takes the lock without waiting, creating the file 0600 when missing (never through a
  // link). Errors: io.locked (another holder has it), io.write_failed.
  static Result<FileLock> TryAcquire(const std::string& path);
  // The same, waiting at most `wait` for another holder (flock has no timed wait: it polls,
  // backing off up to 20 ms). Errors: io.locked (still held when the wait ended),
  // io.write_failed (the file cannot be opened, a link included, or locked).
  static Result<FileLock> Acquire(const std::string& path, std::chrono::milliseconds wait);
  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace udon::base
