#include "manifest/instant.h"

#include <gtest/gtest.h>

namespace udon::manifest {
namespace {

TEST(InstantTest, ParsesAndFormatsTheOneSpelling) {
  auto parsed = ParseInstant("2026-08-30T12:00:00Z");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, 1788091200);
  EXPECT_EQ(FormatInstant(*parsed), "2026-08-30T12:00:00Z");
  EXPECT_EQ(*ParseInstant("2024-02-29T23:59:59Z") + 1, *ParseInstant("2024-03-01T00:00:00Z"));
}

TEST(InstantTest, RefusesEveryOtherSpelling) {
  for (const char* text : {"2026-08-30T12:00:00", "2026-08-30T12:00:00.5Z", "2026-08-30T12:00:00+00:00",
                           "2026-08-30 12:00:00Z", "2026-8-30T12:00:00Z", "2026-02-30T12:00:00Z",
                           "2025-02-29T00:00:00Z", "2026-08-30T24:00:00Z", "2026-08-30T12:60:00Z",
                           "2026-08-30T12:00:60Z", "2026-13-01T00:00:00Z", "2026-08-30t12:00:00z", ""}) {
    EXPECT_EQ(ParseInstant(text).error().code, "time.invalid") << text;
  }
}

}  // namespace
}  // namespace udon::manifest
