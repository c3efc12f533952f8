// SHA-256 digests (FIPS 180-4), in the lowercase hex form manifests pin, and HMAC-SHA-256
// (RFC 2104). The project's one SHA-256: every digest goes through here. The primitives are
// Nettle's (the library under GnuTLS), not our own code: it picks the x86 SHA extensions at
// run time where the CPU has them and costs almost nothing at process start, where OpenSSL
// 3's EVP interface fetches the algorithm from its provider store at the first digest
// (about 3 M instructions, a fifth of a fresh `udon-mcp call`; issues 31 and 41).
#pragma once

#include <nettle/sha2.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

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

  void Update(std::string_view bytes);
  // The digest of everything passed to Update; the stream is spent afterwards.
  std::array<std::uint8_t, 32> Finish();
  // Lowercase hex of Finish().
  std::string FinishHex();

 private:
  sha256_ctx context_;
};

// True for exactly 64 lowercase hex digits.
bool IsSha256Hex(std::string_view text);

}  // namespace udon::base
