#include "base/random.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace udon::base {
namespace {

TEST(RandomTest, HexHasTwoDigitsPerByteAndNeverRepeats) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto hex = RandomHex(16);
    ASSERT_TRUE(hex.ok());
    ASSERT_EQ(hex->size(), 32u);
    EXPECT_EQ(hex->find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_TRUE(seen.insert(*hex).second);
  }
}

TEST(RandomTest, LargeRequestsAreFilledWhole) {
  std::vector<std::uint8_t> bytes(1 << 16, 0);
  ASSERT_TRUE(RandomBytes(bytes.data(), bytes.size()).ok());
  // The last 4 KiB all zero after a fill has odds of 2^-32768: a short read left them.
  bool any = false;
  for (std::size_t i = bytes.size() - 4096; i < bytes.size(); ++i) any = any || bytes[i] != 0;
  EXPECT_TRUE(any);
}

}  // namespace
}  // namespace udon::base
