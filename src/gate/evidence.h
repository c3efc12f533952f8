// Evidence (contract 5): one value-free JSON object per gate decision or call, appended
// as a JSON Line. Records carry digests, pointers, codes and timings, never argument or
// result values, credentials or server error text.
#pragma once

#include <mutex>
#include <string>

#include "json/json.h"
#include "json/result.h"

namespace udon::gate {

class EvidenceWriter {
 public:
  // Appends to path (created if absent). Errors: evidence.write_failed.
  static Result<std::unique_ptr<EvidenceWriter>> Open(const std::string& path);
  ~EvidenceWriter();
  EvidenceWriter(const EvidenceWriter&) = delete;
  EvidenceWriter& operator=(const EvidenceWriter&) = delete;

  // One line, written with a single write under an exclusive file lock so concurrent
  // writers (threads or processes) never interleave.
  Status Append(const json::Value& record);

 private:
  explicit EvidenceWriter(int fd) : fd_(fd) {}
  int fd_;
  std::mutex mutex_;
};

// "2026-11-30T04:49:24.123Z": evidence keeps milliseconds, manifests do not.
std::string EvidenceTimestamp();

}  // namespace udon::gate
