#include "base/random.h"

#include <sys/random.h>

#include <cerrno>
#include <vector>

namespace udon::base {

Status RandomBytes(std::uint8_t* out, std::size_t size) {
  while (size > 0) {
    // Blocks only until the kernel's pool was first initialized; never a short read for
    // 256 bytes or fewer, but larger requests and signals may return less.
    const ssize_t got = ::getrandom(out, size, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return MakeError("random.unavailable", "the operating system's random source failed");
    }
    out += got;
    size -= static_cast<std::size_t>(got);
  }
  return OkStatus();
}

Result<std::string> RandomHex(std::size_t bytes) {
  std::vector<std::uint8_t> buffer(bytes);
  UDON_RETURN_IF_ERROR(RandomBytes(buffer.data(), buffer.size()));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes * 2);
  for (std::uint8_t byte : buffer) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 0x0F];
  }
  return hex;
}

}  // namespace udon::base
