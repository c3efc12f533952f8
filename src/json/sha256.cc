#include "json/sha256.h"

#include <openssl/evp.h>

#include "json/canonical.h"

namespace udon::json {

std::array<std::uint8_t, 32> Sha256(std::string_view bytes) {
  std::array<std::uint8_t, 32> digest{};
  unsigned int length = 0;
  // One-shot EVP digest; it cannot fail for SHA-256 short of memory exhaustion.
  EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr);
  return digest;
}

std::string Sha256Hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::array<std::uint8_t, 32> digest = Sha256(bytes);
  std::string hex;
  hex.reserve(64);
  for (std::uint8_t byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0xF]);
  }
  return hex;
}

Result<std::string> CanonicalSha256(const Value& value) {
  UDON_ASSIGN_OR_RETURN(const std::string canonical, Canonicalize(value));
  return Sha256Hex(canonical);
}

bool IsSha256Hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace udon::json
