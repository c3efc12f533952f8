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

bool IsPostgresUrl(std::string_view url_or_path) {
  return url_or_path.rfind("postgres://", 0) == 0 || url_or_path.rfind("postgresql://", 0) == 0;
}

}  // namespace udon::gate
