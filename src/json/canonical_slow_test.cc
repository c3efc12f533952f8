// Regenerates upstream's deterministic ES6 number test sequence (json-canonicalization,
// testdata/README.md: es6testfile100m.txt) and checks the SHA-256 upstream publishes for
// its first 1,000 and 1,000,000 lines.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "json/internal/test_files.h"

namespace udon::json {
namespace {

TEST(Es6NumberSequence, PublishedHashesOfFirstThousandAndMillionLines) {
  testing::Es6SequenceHasher hasher;
  std::string hash_1k;
  testing::ForEachEs6TestNumber(1'000'000, [&](std::uint64_t bits) {
    hasher.Add(bits);
    if (hasher.count() == 1'000) hash_1k = hasher.HexDigest();
  });
  ASSERT_EQ(hasher.count(), 1'000'000u);
  EXPECT_EQ(hash_1k, "be18b62b6f69cdab33a7e0dae0d9cfa869fda80ddc712221570f9f40a5878687");
  EXPECT_EQ(hasher.HexDigest(),
            "49415fee2c56c77864931bd3624faad425c3c577d6d74e89a83bc725506dad16");
}

}  // namespace
}  // namespace udon::json
