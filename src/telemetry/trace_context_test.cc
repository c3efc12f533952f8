#include "telemetry/trace_context.h"

#include <gtest/gtest.h>

namespace udon::telemetry {
namespace {

TEST(TraceContextTest, ParsesVersion00AndFormatsItBack) {
  const std::string text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  auto parent = ParseTraceParent(text);
  ASSERT_TRUE(parent.has_value());
  EXPECT_EQ(parent->trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(parent->span_id, "00f067aa0ba902b7");
  EXPECT_TRUE(parent->sampled);
  EXPECT_EQ(FormatTraceParent(*parent), text);
  EXPECT_FALSE(ParseTraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")->sampled);
}

TEST(TraceContextTest, RefusesWhatW3CRefuses) {
  for (const char* bad : {"", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                          "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                          "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                          "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                          "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
                          "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"}) {
    EXPECT_FALSE(ParseTraceParent(bad).has_value()) << bad;
  }
  EXPECT_TRUE(ParseTraceParent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later").has_value());
}

TEST(TraceContextTest, TraceStateIsPassedOnOnlyWhenPrintableAndBounded) {
  EXPECT_TRUE(IsPassableTraceState("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
  EXPECT_FALSE(IsPassableTraceState(std::string(513, 'a')));
  EXPECT_FALSE(IsPassableTraceState("a=b\nc=d"));
}

TEST(TraceContextTest, FreshIdsHaveTheirSizesAndDiffer) {
  EXPECT_EQ(NewTraceId().size(), 32u);
  EXPECT_EQ(NewSpanId().size(), 16u);
  EXPECT_NE(NewSpanId(), NewSpanId());
}

}  // namespace
}  // namespace udon::telemetry
