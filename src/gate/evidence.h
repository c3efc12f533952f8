// Evidence (contract 5): one value-free JSON object per gate decision or call, appended
// as a JSON Line. Records carry digests, pointers, codes and timings, never argument or
// result values, credentials or server error text.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "json/json.h"
#include "base/result.h"

namespace udon::gate {

class EvidenceWriter {
 public:
  // Appends to path (created if absent). Errors: evidence.write_failed.
  static Result<std::unique_ptr<EvidenceWriter>> Open(const std::string& path);
  virtual ~EvidenceWriter();
  EvidenceWriter(const EvidenceWriter&) = delete;
  EvidenceWriter& operator=(const EvidenceWriter&) = delete;

  // One line, written with a single write under an exclusive file lock so concurrent
  // writers (threads or processes) never interleave. Other sinks (the PostgreSQL table,
  // src/state_pg/) override it and store the same line. The file stays open across
  // appends; when the path names another file (rotated: renamed, or removed), the path is
  // opened again, so later lines go where the path points. Errors: evidence.write_failed.
  virtual Status Append(const json::Value& record);

 protected:
  EvidenceWriter() = default;

 private:
  EvidenceWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status FollowPath();  // under mutex_
  void Identify();      // the open file's device and inode
  std::string path_;
  int fd_ = -1;
  std::uint64_t device_ = 0;
  std::uint64_t inode_ = 0;
  std::mutex mutex_;
};

// The record as its one JSON line (no newline), whatever the sink.
std::string EvidenceLine(const json::Value& record);

// "2026-11-30T04:49:24.123Z": evidence keeps milliseconds, manifests do not.
std::string EvidenceTimestamp();

}  // namespace udon::gate
