#include "base/sha256.h"

#include <algorithm>
#include <cstring>

namespace udon::base {
namespace {

constexpr std::size_t kBlock = 64;

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

Sha256Stream::Sha256Stream() : Sha256Stream(internal::Sha256Blocks()) {}

Sha256Stream::Sha256Stream(internal::Sha256BlocksFunction blocks)
    : blocks_(blocks),
      state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256Stream::Update(std::string_view bytes) {
  if (bytes.empty()) return;  // also: no memcpy from a null view
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t size = bytes.size();
  length_ += size;
  if (buffered_ > 0) {
    const std::size_t take = std::min(size, kBlock - buffered_);
    std::memcpy(buffer_.data() + buffered_, data, take);
    buffered_ += take;
    data += take;
    size -= take;
    if (buffered_ < kBlock) return;
    blocks_(state_.data(), buffer_.data(), 1);
    buffered_ = 0;
  }
  const std::size_t blocks = size / kBlock;
  if (blocks > 0) blocks_(state_.data(), data, blocks);
  data += blocks * kBlock;
  size -= blocks * kBlock;
  if (size > 0) std::memcpy(buffer_.data(), data, size);
  buffered_ = size;
}

// Padding (FIPS 180-4, 5.1.1): 0x80, zeros to 56 bytes of the last block, the length in
// bits as a big-endian 64-bit number.
std::array<std::uint8_t, 32> Sha256Stream::Finish() {
  const std::uint64_t bits = length_ * 8;
  std::array<unsigned char, 2 * kBlock> tail{};
  std::memcpy(tail.data(), buffer_.data(), buffered_);
  tail[buffered_] = 0x80;
  const std::size_t blocks = buffered_ + 1 + 8 <= kBlock ? 1 : 2;
  for (std::size_t i = 0; i < 8; ++i) {
    tail[blocks * kBlock - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  }
  blocks_(state_.data(), tail.data(), blocks);
  std::array<std::uint8_t, 32> digest{};
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 4; ++j) {
      digest[4 * i + j] = static_cast<std::uint8_t>(state_[i] >> (24 - 8 * j));
    }
  }
  return digest;
}

std::string Sha256Stream::FinishHex() { return Hex(Finish()); }

std::array<std::uint8_t, 32> Sha256(std::string_view bytes) {
  Sha256Stream stream;
  stream.Update(bytes);
  return stream.Finish();
}

std::string Sha256Hex(std::string_view bytes) { return Hex(Sha256(bytes)); }

// RFC 2104: H((K ^ opad) || H((K ^ ipad) || message)), K padded with zeros to a block.
std::array<std::uint8_t, 32> HmacSha256(std::string_view key, std::string_view message) {
  std::array<unsigned char, kBlock> padded{};
  if (key.size() > kBlock) {
    const std::array<std::uint8_t, 32> hashed = Sha256(key);
    std::memcpy(padded.data(), hashed.data(), hashed.size());
  } else if (!key.empty()) {
    std::memcpy(padded.data(), key.data(), key.size());
  }
  const auto pad = [&padded](unsigned char with) {
    std::array<char, kBlock> out{};
    for (std::size_t i = 0; i < kBlock; ++i) out[i] = static_cast<char>(padded[i] ^ with);
    return out;
  };
  const std::array<char, kBlock> inner_pad = pad(0x36);
  const std::array<char, kBlock> outer_pad = pad(0x5c);
  Sha256Stream inner;
  inner.Update(std::string_view(inner_pad.data(), kBlock));
  inner.Update(message);
  const std::array<std::uint8_t, 32> inner_digest = inner.Finish();
  Sha256Stream outer;
  outer.Update(std::string_view(outer_pad.data(), kBlock));
  outer.Update(std::string_view(reinterpret_cast<const char*>(inner_digest.data()), inner_digest.size()));
  return outer.Finish();
}

bool IsSha256Hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace udon::base
