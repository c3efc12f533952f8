// Regenerates upstream's deterministic ES6 number test sequence (json-canonicalization,
// testdata/README.md: es6testfile100m.txt) and checks the SHA-256 upstream publishes for
// its first 1,000 and 1,000,000 lines.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "json/canonical.h"
#include "json/internal/test_files.h"
#include "base/sha256.h"

namespace udon::json {
namespace {

// The sequence opens with 168 fixed edge cases; they are the first 168 lines of the
// shared copy of the file's first 100,000 lines.
std::vector<std::uint64_t> FixedEdgeCases() {
  std::istringstream lines(testing::JcsData("es6numbers/es6testfile-first100k.txt"));
  std::vector<std::uint64_t> values;
  std::string line;
  while (values.size() < 168 && std::getline(lines, line)) {
    values.push_back(std::stoull(line.substr(0, line.find(',')), nullptr, 16));
  }
  return values;
}

class SequenceHasher {
 public:
  void Add(std::uint64_t bits) {
    char hex[20];
    const int length = std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(bits));
    line_.assign(hex, static_cast<std::size_t>(length));
    line_.push_back(',');
    line_ += FormatEs6Number(std::bit_cast<double>(bits));
    line_.push_back('\n');
    hash_.Update(line_);
    ++count_;
  }

  std::size_t count() const { return count_; }

  // The digest of the lines so far (the running context is left untouched).
  std::string HexDigest() const {
    base::Sha256Stream copy = hash_;
    return copy.FinishHex();
  }

 private:
  base::Sha256Stream hash_;
  std::string line_;
  std::size_t count_ = 0;
};

TEST(Es6NumberSequence, PublishedHashesOfFirstThousandAndMillionLines) {
  const std::vector<std::uint64_t> fixed = FixedEdgeCases();
  ASSERT_EQ(fixed.size(), 168u);
  SequenceHasher hasher;
  std::string hash_1k;
  auto add = [&](std::uint64_t bits) {
    hasher.Add(bits);
    if (hasher.count() == 1'000) hash_1k = hasher.HexDigest();
  };
  for (std::uint64_t bits : fixed) add(bits);
  for (std::uint64_t i = 0; i < 2000 && hasher.count() < 1'000'000; ++i) {
    add(0x0010000000000000ull + i);
  }
  std::array<std::uint8_t, 32> state{};
  while (hasher.count() < 1'000'000) {
    state = base::Sha256(std::string_view(reinterpret_cast<const char*>(state.data()), state.size()));
    for (int word = 0; word < 4 && hasher.count() < 1'000'000; ++word) {
      std::uint64_t bits = 0;
      for (int byte = 7; byte >= 0; --byte) bits = (bits << 8) | state[word * 8 + byte];
      const double value = std::bit_cast<double>(bits);
      if (value == 0 || !std::isfinite(value)) continue;
      add(bits);
    }
  }
  EXPECT_EQ(hash_1k, "be18b62b6f69cdab33a7e0dae0d9cfa869fda80ddc712221570f9f40a5878687");
  EXPECT_EQ(hasher.HexDigest(),
            "49415fee2c56c77864931bd3624faad425c3c577d6d74e89a83bc725506dad16");
}

}  // namespace
}  // namespace udon::json
