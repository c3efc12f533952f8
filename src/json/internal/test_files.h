// Test helpers: reading the shared test data as exact bytes, and inputs several tests share.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace udon::json::testing {

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

inline std::string JcsData(const std::string& relative) {
  return ReadBytes(std::string(UDON_SHARED_DIR) + "/testdata/jcs/" + relative);
}

// "7b 22 ..." (whitespace-separated hex bytes) to bytes.
inline std::string FromHexDump(const std::string& dump) {
  std::istringstream in(dump);
  std::string out;
  std::string byte;
  while (in >> byte) out.push_back(static_cast<char>(std::stoi(byte, nullptr, 16)));
  return out;
}

// A deterministic pseudo-random sequence (xorshift64) for tests that sweep many inputs.
class XorShift64 {
 public:
  explicit XorShift64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t operator()() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }

 private:
  std::uint64_t state_;
};

// Malformed UTF-8, each refused at its first byte: overlongs, encoded surrogates, above
// U+10FFFF, invalid and stray bytes, truncated sequences and sequences broken off.
inline const std::vector<std::string>& MalformedUtf8Forms() {
  static const std::vector<std::string> forms = {
      "\xC0\xAF",         "\xC1\xBF",         "\xE0\x80\xAF",     "\xE0\x9F\xBF",
      "\xF0\x80\x80\xAF", "\xF0\x8F\xBF\xBF", "\xED\xA0\x80",     "\xED\xBF\xBF",
      "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF",             "\xFE",
      "\x80",             "\xBF",             "\xE2\x82",         "\xF0\x9F\x98",
      "\xC3",             "\xE2\x28\xA1",     "\xC3\x28",         "\xF0\x9F\x98\x28",
      "\xE1\x80\xC0",     "\xF1\x80\x80\xF1"};
  return forms;
}

}  // namespace udon::json::testing
