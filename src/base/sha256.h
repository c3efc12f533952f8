// SHA-256 digests (FIPS 180-4), in the lowercase hex form manifests pin, and HMAC-SHA-256
// (RFC 2104). The project's one SHA-256: every digest goes through here. Own code rather
// than OpenSSL's EVP interface, whose first use in a process fetches the algorithm from the
// default provider (about 3 M instructions, a fifth of a fresh `udon-mcp call`); the x86
// SHA extensions are used where the CPU has them (base/internal/sha256_blocks.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/internal/sha256_blocks.h"
#include "base/result.h"

namespace udon::base {

std::array<std::uint8_t, 32> Sha256(std::string_view bytes);
std::string Sha256Hex(std::string_view bytes);

// HMAC-SHA-256 of message under key (any length; keys over 64 bytes are hashed first).
std::array<std::uint8_t, 32> HmacSha256(std::string_view key, std::string_view message);

// SHA-256 of bytes that arrive in pieces, so they need not be gathered into one string.
// A copy carries on independently (the digest of a prefix, then more bytes).
class Sha256Stream {
 public:
  Sha256Stream();
  // With one given compression function instead of the one for this CPU: tests run every
  // implementation through the same padding.
  explicit Sha256Stream(internal::Sha256BlocksFunction blocks);

  void Update(std::string_view bytes);
  // The digest of everything passed to Update; the stream is spent afterwards.
  std::array<std::uint8_t, 32> Finish();
  // Lowercase hex of Finish().
  std::string FinishHex();

 private:
  internal::Sha256BlocksFunction blocks_;
  std::array<std::uint32_t, 8> state_;
  std::array<unsigned char, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;
};

// True for exactly 64 lowercase hex digits.
bool IsSha256Hex(std::string_view text);

}  // namespace udon::base
