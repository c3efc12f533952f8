#include "gate/state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "json/file.h"
#include "json/json.h"

namespace udon::gate {
namespace {

Status EnsureDir(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) return MakeError("state.write_failed", "cannot create the state directory");
  return OkStatus();
}

std::string NowIso() {
  char buffer[32];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

}  // namespace

std::string HexName(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xF]);
  }
  return out;
}

Result<std::string> ResolveStateDir(const std::optional<std::string>& flag) {
  if (flag && !flag->empty()) return *flag;
  if (const char* dir = std::getenv("UDON_MCP_STATE_DIR"); dir != nullptr && *dir != '\0') {
    return std::string(dir);
  }
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/udon-mcp";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.local/state/udon-mcp";
  }
  return MakeError("state.unavailable", "no state directory: set --state-dir or UDON_MCP_STATE_DIR");
}

std::string InvalidationStore::PathFor(std::string_view manifest_sha256,
                                       std::string_view server) const {
  return state_dir_ + "/invalidated/" + HexName(manifest_sha256) + "-" + HexName(server) + ".json";
}

bool InvalidationStore::IsInvalidated(std::string_view manifest_sha256,
                                      std::string_view server) const {
  return access(PathFor(manifest_sha256, server).c_str(), F_OK) == 0;
}

Status InvalidationStore::Record(std::string_view manifest_sha256, std::string_view server,
                                 std::string_view reason) const {
  UDON_RETURN_IF_ERROR(EnsureDir(state_dir_ + "/invalidated"));
  const json::Value record = {{"manifestSha256", manifest_sha256},
                              {"server", server},
                              {"reason", reason},
                              {"recordedAt", NowIso()}};
  Status written = json::WriteFileAtomic(PathFor(manifest_sha256, server), record.dump() + "\n");
  if (!written.ok()) return MakeError("state.write_failed", "cannot record the invalidation durably");
  return OkStatus();
}

Result<std::unique_ptr<SerializeLock>> SerializeLock::Acquire(const std::string& state_dir,
                                                              const std::string& scope_key) {
  if (!EnsureDir(state_dir + "/locks").ok()) {
    return MakeError("state.lock_failed", "cannot create the lock directory");
  }
  const std::string path = state_dir + "/locks/" + HexName(scope_key) + ".lock";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return MakeError("state.lock_failed", "cannot open the serialize lock");
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      close(fd);
      return MakeError("state.lock_failed", "cannot take the serialize lock");
    }
  }
  return std::unique_ptr<SerializeLock>(new SerializeLock(fd));
}

SerializeLock::~SerializeLock() {
  flock(fd_, LOCK_UN);
  close(fd_);
}

}  // namespace udon::gate
