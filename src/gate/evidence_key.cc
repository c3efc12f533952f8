#include "gate/evidence_key.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <filesystem>

#include "gate/state.h"
#include "json/canonical.h"
#include "base/random.h"
#include "base/sha256.h"

namespace udon::gate {
namespace {

constexpr std::size_t kKeyBytes = 32;
constexpr const char* kIdLabel = "udon-mcp evidence key id\n";

Error Unavailable(const char* message) { return MakeError("state.unavailable", message); }

bool WriteAll(int fd, const unsigned char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

Result<std::string> ReadKey(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Unavailable("the evidence key cannot be opened");
  std::string key(kKeyBytes + 1, '\0');
  std::size_t got = 0;
  while (got < key.size()) {
    const ssize_t n = read(fd, key.data() + got, key.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  close(fd);
  if (got != kKeyBytes) return Unavailable("the evidence key has the wrong size");
  key.resize(kKeyBytes);
  return key;
}

// Creates the key with O_EXCL: written whole under a temporary name, then linked into
// place, so a concurrent reader never sees a partial key.
Status CreateKey(const std::string& dir, const std::string& path) {
  unsigned char bytes[kKeyBytes];
  if (!base::RandomBytes(bytes, sizeof bytes).ok()) return Unavailable("no randomness for the evidence key");
  const std::string temporary = dir + "/.evidence.key." + std::to_string(::getpid());
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Unavailable("the evidence key cannot be created");
  const bool written = WriteAll(fd, bytes, sizeof bytes) && fsync(fd) == 0;
  close(fd);
  if (!written) {
    unlink(temporary.c_str());
    return Unavailable("the evidence key cannot be written");
  }
  // link fails with EEXIST when another process won: its key stands.
  const int linked = link(temporary.c_str(), path.c_str());
  const int link_errno = errno;
  unlink(temporary.c_str());
  if (linked != 0 && link_errno != EEXIST) return Unavailable("the evidence key cannot be created");
  return OkStatus();
}

}  // namespace

EvidenceKey::EvidenceKey(std::string key) : key_(std::move(key)) {
  id_ = "k1:" + base::Sha256Hex(std::string(kIdLabel) + key_).substr(0, 16);
}

Result<EvidenceKey> EvidenceKey::LoadOrCreate(const std::string& state_dir) {
  std::error_code error;
  std::filesystem::create_directories(state_dir, error);
  if (error) return Unavailable("the state directory cannot be created");
  const std::string path = state_dir + "/evidence.key";
  if (access(path.c_str(), F_OK) != 0) {
    if (errno != ENOENT) return Unavailable("the evidence key cannot be read");
    UDON_RETURN_IF_ERROR(CreateKey(state_dir, path));
  }
  UDON_ASSIGN_OR_RETURN(std::string key, ReadKey(path));
  return EvidenceKey(std::move(key));
}

std::string EvidenceKey::Digest(const json::Value& value) const {
  auto canonical = json::Canonicalize(value);
  if (!canonical.ok()) return {};
  const std::array<std::uint8_t, 32> mac = base::HmacSha256(key_, *canonical);
  return HexName(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

}  // namespace udon::gate
