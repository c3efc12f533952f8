#include "gate/evidence.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace udon::gate {

namespace {

int OpenForAppend(const std::string& path) {
  return open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

}  // namespace

Result<std::unique_ptr<EvidenceWriter>> EvidenceWriter::Open(const std::string& path) {
  const int fd = OpenForAppend(path);
  if (fd < 0) return MakeError("evidence.write_failed", "cannot open the evidence file");
  std::unique_ptr<EvidenceWriter> writer(new EvidenceWriter(path, fd));
  writer->Identify();
  return writer;
}

// One stat per append: the open file is still the one the path names, else the path is
// opened again (a rotation renamed or removed it; another process may have created the new
// one already). A line written by another process meanwhile went where the path then led.
Status EvidenceWriter::FollowPath() {
  struct stat named {};
  if (::stat(path_.c_str(), &named) == 0 && named.st_dev == device_ && named.st_ino == inode_) return OkStatus();
  const int fd = OpenForAppend(path_);
  if (fd < 0) return MakeError("evidence.write_failed", "cannot open the evidence file again after it moved");
  close(fd_);
  fd_ = fd;
  Identify();
  return OkStatus();
}

void EvidenceWriter::Identify() {
  struct stat opened {};
  if (fstat(fd_, &opened) != 0) return;  // unknown: the next append opens the path again
  device_ = opened.st_dev;
  inode_ = opened.st_ino;
}

EvidenceWriter::~EvidenceWriter() {
  if (fd_ >= 0) close(fd_);
}

std::string EvidenceLine(const json::Value& record) {
  return record.dump(-1, ' ', false, json::Value::error_handler_t::replace);
}

Status EvidenceWriter::Append(const json::Value& record) {
  const std::string line = EvidenceLine(record) + "\n";
  std::lock_guard<std::mutex> guard(mutex_);
  UDON_RETURN_IF_ERROR(FollowPath());
  // The lock stays although one O_APPEND write already lands whole on a local file system:
  // a short write (a full disk, a signal) is continued below, and the rest must follow its
  // beginning before another process's line.
  while (flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) return MakeError("evidence.write_failed", "cannot lock the evidence file");
  }
  std::size_t written = 0;
  bool failed = false;
  while (written < line.size()) {
    const ssize_t n = write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed = true;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  flock(fd_, LOCK_UN);
  if (failed) return MakeError("evidence.write_failed", "cannot append to the evidence file");
  return OkStatus();
}

std::string EvidenceTimestamp() {
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[96];  // room for any int the format could print
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buffer;
}

}  // namespace udon::gate
