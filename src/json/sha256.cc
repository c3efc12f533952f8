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

namespace {

std::string Hex(const std::array<std::uint8_t, 32>& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (std::uint8_t byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0xF]);
  }
  return hex;
}

}  // namespace

std::string Sha256Hex(std::string_view bytes) { return Hex(Sha256(bytes)); }

// EVP_MD_CTX_new and EVP_DigestInit_ex fail only on memory exhaustion, like the one-shot
// EVP_Digest above.
Sha256Stream::Sha256Stream() : context_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(context_, EVP_sha256(), nullptr);
}

Sha256Stream::~Sha256Stream() { EVP_MD_CTX_free(context_); }

void Sha256Stream::Update(std::string_view bytes) {
  EVP_DigestUpdate(context_, bytes.data(), bytes.size());
}

std::string Sha256Stream::FinishHex() {
  std::array<std::uint8_t, 32> digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(context_, digest.data(), &length);
  return Hex(digest);
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
