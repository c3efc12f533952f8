#include "gate/evidence_key.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "gate/state.h"
#include "json/canonical.h"
#include "json/random.h"
#include "json/sha256.h"

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
  if (!json::RandomBytes(bytes, sizeof bytes).ok()) return Unavailable("no randomness for the evidence key");
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

struct EvidenceKey::Keyed {
  EVP_MAC* mac = nullptr;
  EVP_MAC_CTX* context = nullptr;
  ~Keyed() {
    EVP_MAC_CTX_free(context);
    EVP_MAC_free(mac);
  }
};

EvidenceKey::EvidenceKey(std::string key) : key_(std::move(key)) {
  id_ = "k1:" + json::Sha256Hex(std::string(kIdLabel) + key_).substr(0, 16);
  auto keyed = std::make_shared<Keyed>();
  keyed->mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (keyed->mac != nullptr) keyed->context = EVP_MAC_CTX_new(keyed->mac);
  if (keyed->context == nullptr) return;
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
  if (EVP_MAC_init(keyed->context, reinterpret_cast<const unsigned char*>(key_.data()), key_.size(), params) == 1) {
    keyed_ = std::move(keyed);
  }
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
  unsigned char mac[EVP_MAX_MD_SIZE];
  if (keyed_ != nullptr) {
    EVP_MAC_CTX* context = EVP_MAC_CTX_dup(keyed_->context);
    std::size_t length = 0;
    const bool done = context != nullptr &&
                      EVP_MAC_update(context, reinterpret_cast<const unsigned char*>(canonical->data()),
                                     canonical->size()) == 1 &&
                      EVP_MAC_final(context, mac, &length, sizeof mac) == 1;
    EVP_MAC_CTX_free(context);
    if (done) return HexName(std::string_view(reinterpret_cast<const char*>(mac), length));
  }
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
           reinterpret_cast<const unsigned char*>(canonical->data()), canonical->size(), mac,
           &length) == nullptr) {
    return {};
  }
  return HexName(std::string_view(reinterpret_cast<const char*>(mac), length));
}

}  // namespace udon::gate
