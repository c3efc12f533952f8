#include "gate/state.h"

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "base/file.h"
#include "json/json.h"
#include "manifest/instant.h"

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

namespace {

// The instant a record speaks of: "at" (the gate's clock), else its recordedAt.
std::optional<std::int64_t> RecordedAt(const json::Value& record) {
  if (auto at = record.find("at"); at != record.end() && at->is_number_integer()) return at->get<std::int64_t>();
  if (auto when = record.find("recordedAt"); when != record.end() && when->is_string()) {
    auto parsed = manifest::ParseInstant(when->get<std::string>());
    if (parsed.ok()) return *parsed;
  }
  return std::nullopt;
}

Error Unreadable(const char* message) { return MakeError("state.unavailable", message); }

}  // namespace

Result<bool> InvalidationStore::IsInvalidated(std::string_view manifest_sha256, std::string_view server,
                                              std::int64_t captured_at) const {
  const std::string dir = state_dir_ + "/invalidated";
  std::error_code error;
  if (!std::filesystem::exists(dir, error)) {
    if (error) return Unreadable("the invalidation records cannot be read");
    return false;
  }
  if (std::filesystem::exists(PathFor(manifest_sha256, server), error)) return true;
  if (error) return Unreadable("the invalidation records cannot be read");
  // Records are named <hex digest>-<hex server>.json, the digest part of fixed length.
  const std::string suffix = "-" + HexName(server) + ".json";
  const std::size_t name_length = 2 * 64 + suffix.size();
  std::filesystem::directory_iterator entries(dir, error);
  if (error) return Unreadable("the invalidation records cannot be listed");
  for (const auto& entry : entries) {
    const std::string name = entry.path().filename().string();
    if (name.size() != name_length || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    auto text = base::ReadFile(entry.path().string(), 1u << 16);
    if (!text.ok()) return Unreadable("an invalidation record cannot be read");
    auto record = json::Parse(*text);
    if (!record.ok() || !record->is_object()) return Unreadable("an invalidation record is malformed");
    const std::optional<std::int64_t> at = RecordedAt(*record);
    if (!at) return Unreadable("an invalidation record names no time");
    if (captured_at <= *at) return true;
  }
  return false;
}

Status InvalidationStore::Record(std::string_view manifest_sha256, std::string_view server,
                                 std::string_view reason, std::int64_t at) const {
  UDON_RETURN_IF_ERROR(EnsureDir(state_dir_ + "/invalidated"));
  const json::Value record = {{"manifestSha256", manifest_sha256},
                              {"server", server},
                              {"reason", reason},
                              {"at", at},
                              {"recordedAt", NowIso()}};
  Status written = base::WriteFileAtomic(PathFor(manifest_sha256, server), record.dump() + "\n");
  if (!written.ok()) return MakeError("state.write_failed", "cannot record the invalidation durably");
  return OkStatus();
}

Result<std::unique_ptr<SerializeLock>> SerializeLock::Acquire(const std::string& state_dir,
                                                              const std::string& scope_key,
                                                              std::chrono::milliseconds timeout) {
  if (!EnsureDir(state_dir + "/locks").ok()) {
    return MakeError("state.lock_failed", "cannot create the lock directory");
  }
  const std::string path = state_dir + "/locks/" + HexName(scope_key) + ".lock";
  Result<base::FileLock> lock = base::FileLock::Acquire(path, timeout);
  if (lock.ok()) return std::unique_ptr<SerializeLock>(new SerializeLock(std::move(lock).value()));
  if (lock.error().code != "io.locked") return MakeError("state.lock_failed", "cannot open or take the serialize lock");
  Error error = MakeError("state.lock_timeout", "another call of this serialized tool held its lock too long");
  error.details["timeoutSeconds"] = std::chrono::duration<double>(timeout).count();
  return error;
}

}  // namespace udon::gate
