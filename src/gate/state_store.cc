#include "gate/state_store.h"

#include "gate/state.h"

namespace udon::gate {
namespace {

class FileLock : public StateLock {
 public:
  explicit FileLock(std::unique_ptr<SerializeLock> lock) : lock_(std::move(lock)) {}

 private:
  std::unique_ptr<SerializeLock> lock_;  // flock: held until the descriptor closes
};

}  // namespace

Result<bool> FileStateStore::IsInvalidated(std::string_view manifest_sha256, std::string_view server,
                                           std::int64_t captured_at) {
  return InvalidationStore(state_dir_).IsInvalidated(manifest_sha256, server, captured_at);
}

Status FileStateStore::Record(std::string_view manifest_sha256, std::string_view server,
                              std::string_view reason, std::int64_t at) {
  return InvalidationStore(state_dir_).Record(manifest_sha256, server, reason, at);
}

Result<std::unique_ptr<StateLock>> FileStateStore::AcquireSerializeLock(const std::string& scope,
                                                                        std::chrono::milliseconds timeout) {
  UDON_ASSIGN_OR_RETURN(auto lock, SerializeLock::Acquire(state_dir_, scope, timeout));
  return std::unique_ptr<StateLock>(new FileLock(std::move(lock)));
}

void InvalidationMemory::Note(std::string_view manifest_sha256, std::string_view server, std::int64_t at) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto& records = by_server_[std::string(server)];
  records.emplace_back(std::string(manifest_sha256), at);
}

bool InvalidationMemory::Covers(std::string_view manifest_sha256, std::string_view server,
                                std::int64_t captured_at) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = by_server_.find(server);
  if (it == by_server_.end()) return false;
  for (const auto& [digest, at] : it->second) {
    if (digest == manifest_sha256 || at >= captured_at) return true;
  }
  return false;
}

bool IsPostgresUrl(std::string_view url_or_path) {
  return url_or_path.rfind("postgres://", 0) == 0 || url_or_path.rfind("postgresql://", 0) == 0;
}

}  // namespace udon::gate
