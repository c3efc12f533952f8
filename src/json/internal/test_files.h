// Test helpers: reading test data as exact bytes (the project's own under tests/data/, the
// external RFC 8785 vectors through tests/support/external_testdata.h), upstream's ES6 number
// sequence, and inputs several tests share.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "base/sha256.h"
#include "external_testdata.h"
#include "json/canonical.h"

namespace udon::json::testing {

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// A file of the project's own test data, tests/data/RELATIVE.
inline std::string ProjectData(const std::string& relative) {
  return ReadBytes(std::string(UDON_SOURCE_DIR) + "/tests/data/" + relative);
}

// A file of the external RFC 8785 vectors (input/, output/, outhex/); check
// udon::testing::HaveExternalSuite("jcs") first.
inline std::string JcsVector(const std::string& relative) {
  return ReadBytes(udon::testing::ExternalSuiteDir("jcs") + "/" + relative);
}

// Upstream's deterministic ES6 number test sequence (json-canonicalization,
// testdata/README.md: es6testfile100m.txt), whose SHA-256 over its first N lines upstream
// publishes: the fixed edge cases of tests/data/jcs/es6-edge-cases.txt, then
// 0x0010000000000000 + i for i < 2000, then a SHA-256 chain from 32 zero bytes, each digest
// read as four little-endian doubles, zero and non-finite values skipped. Calls
// visit(bits) for the first `count` values.
template <typename Visit>
void ForEachEs6TestNumber(std::size_t count, Visit visit) {
  std::size_t done = 0;
  std::istringstream fixed(ProjectData("jcs/es6-edge-cases.txt"));
  for (std::string line; done < count && std::getline(fixed, line); ++done) {
    visit(static_cast<std::uint64_t>(std::stoull(line, nullptr, 16)));
  }
  for (std::uint64_t i = 0; i < 2000 && done < count; ++i, ++done) visit(0x0010000000000000ull + i);
  std::array<std::uint8_t, 32> state{};
  while (done < count) {
    state = base::Sha256(std::string_view(reinterpret_cast<const char*>(state.data()), state.size()));
    for (int word = 0; word < 4 && done < count; ++word) {
      std::uint64_t bits = 0;
      for (int byte = 7; byte >= 0; --byte) bits = (bits << 8) | state[word * 8 + byte];
      const double value = std::bit_cast<double>(bits);
      if (value == 0 || !std::isfinite(value)) continue;
      visit(bits);
      ++done;
    }
  }
}

// The SHA-256 of the sequence's lines "<bits, lowercase hex>,<FormatEs6Number>\n", the
// form of upstream's file, as they are added.
class Es6SequenceHasher {
 public:
  // Adds the line of `bits` and returns its ES6 text.
  const std::string& Add(std::uint64_t bits) {
    char hex[20];
    const int length = std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(bits));
    text_ = json::FormatEs6Number(std::bit_cast<double>(bits));
    line_.assign(hex, static_cast<std::size_t>(length));
    line_ += ',' + text_ + '\n';
    hash_.Update(line_);
    ++count_;
    return text_;
  }

  std::size_t count() const { return count_; }

  // The digest of the lines so far (the running context is left untouched).
  std::string HexDigest() const {
    base::Sha256Stream copy = hash_;
    return copy.FinishHex();
  }

 private:
  base::Sha256Stream hash_;
  std::string text_;
  std::string line_;
  std::size_t count_ = 0;
};

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
