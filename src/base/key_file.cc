#include "base/key_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <vector>

#include "base/file.h"
#include "base/random.h"

namespace udon::base {
namespace {

Error KeyError(const KeyFile& key, const char* problem) { return MakeError(key.code, key.what + problem); }

// Written whole under a temporary name, then linked into place, so a concurrent reader
// never sees a partial key.
Status CreateKey(const KeyFile& key, const std::string& dir) {
  std::vector<unsigned char> bytes(key.size);
  if (!RandomBytes(bytes.data(), bytes.size()).ok()) return KeyError(key, ": no randomness to make it");
  const std::string temporary = dir + "/.key." + std::to_string(::getpid());
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return KeyError(key, " cannot be created");
  const std::string_view key_bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const bool written = WriteAll(fd, key_bytes) && fsync(fd) == 0;
  close(fd);
  if (!written) {
    unlink(temporary.c_str());
    return KeyError(key, " cannot be written");
  }
  // link fails with EEXIST when another process won: its key stands.
  const int linked = link(temporary.c_str(), key.path.c_str());
  const int link_errno = errno;
  unlink(temporary.c_str());
  if (linked != 0 && link_errno != EEXIST) return KeyError(key, " cannot be created");
  return OkStatus();
}

}  // namespace

Result<std::string> ReadKeyFile(const KeyFile& key) {
  const int fd = open(key.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return KeyError(key, " cannot be opened");
  std::string bytes(key.size + 1, '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  close(fd);
  if (got != key.size) return KeyError(key, " has the wrong size");
  bytes.resize(key.size);
  return bytes;
}

Result<std::string> LoadOrCreateKeyFile(const KeyFile& key, const std::string& dir) {
  if (access(key.path.c_str(), F_OK) != 0) {
    if (errno != ENOENT) return KeyError(key, " cannot be read");
    UDON_RETURN_IF_ERROR(CreateKey(key, dir));
  }
  return ReadKeyFile(key);
}

}  // namespace udon::base
