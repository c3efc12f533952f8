#include "base/sha256.h"

#include <nettle/hmac.h>

#include "base/bytes.h"

namespace udon::base {
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

Sha256Stream::Sha256Stream() { sha256_init(&context_); }

void Sha256Stream::Update(std::string_view bytes) {
  if (bytes.empty()) return;  // also: no pointer arithmetic on a null view
  sha256_update(&context_, bytes.size(), UnsignedBytes(bytes));
}

std::array<std::uint8_t, 32> Sha256Stream::Finish() {
  std::array<std::uint8_t, 32> digest{};
  sha256_digest(&context_, digest.size(), digest.data());
  return digest;
}

std::string Sha256Stream::FinishHex() { return Hex(Finish()); }

std::array<std::uint8_t, 32> Sha256(std::string_view bytes) {
  Sha256Stream stream;
  stream.Update(bytes);
  return stream.Finish();
}

std::string Sha256Hex(std::string_view bytes) { return Hex(Sha256(bytes)); }

std::array<std::uint8_t, 32> HmacSha256(std::string_view key, std::string_view message) {
  hmac_sha256_ctx context;
  hmac_sha256_set_key(&context, key.size(), UnsignedBytes(key));
  if (!message.empty()) hmac_sha256_update(&context, message.size(), UnsignedBytes(message));
  std::array<std::uint8_t, 32> mac{};
  hmac_sha256_digest(&context, mac.size(), mac.data());
  return mac;
}

bool IsSha256Hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace udon::base
