#include "evidence/percentile.h"

#include <gtest/gtest.h>

namespace udon::evidence {
namespace {

TEST(NearestRank, PicksAnObservedValueAtTheCeilingRank) {
  const std::vector<double> ten = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  EXPECT_EQ(NearestRank(ten, 50), 5);    // rank 5
  EXPECT_EQ(NearestRank(ten, 90), 9);    // rank 9, not rounded up by floating point
  EXPECT_EQ(NearestRank(ten, 91), 10);   // rank ceil(9.1) = 10
  EXPECT_EQ(NearestRank(ten, 99), 10);
  EXPECT_EQ(NearestRank(ten, 100), 10);
  EXPECT_EQ(NearestRank(ten, 1), 1);
}

TEST(NearestRank, SmallAndEmptySamples) {
  EXPECT_EQ(NearestRank({}, 50), 0);
  EXPECT_EQ(NearestRank({3.5}, 1), 3.5);
  EXPECT_EQ(NearestRank({3.5}, 100), 3.5);
  EXPECT_EQ(NearestRank({1, 2}, 50), 1);
  EXPECT_EQ(NearestRank({1, 2}, 51), 2);
}

}  // namespace
}  // namespace udon::evidence
