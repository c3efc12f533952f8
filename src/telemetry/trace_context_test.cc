#include "telemetry/trace_context.h"

#include <gtest/gtest.h>

#include <set>

#include "telemetry/telemetry.h"

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

TEST(TraceContextTest, IdsDrawnTogetherHaveTheirSizesAndDiffer) {
  const std::vector<std::string> ids = NewIds({8, 16, 8});
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[0].size(), 16u);
  EXPECT_EQ(ids[1].size(), 32u);
  EXPECT_EQ(ids[2].size(), 16u);
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 3u);
}

// Issue 41: a call draws the ids something reads, no more. The upstream's traceparent
// reads the trace and the dispatch span; the SERVER span's id only an export reads.
TEST(TraceContextTest, WithoutAnExportTheServerSpanDrawsNoId) {
  Telemetry telemetry(OtlpConfig{});
  const CallTrace fresh = telemetry.Begin({"2025-11-25", "", "tcp", "", ""});
  EXPECT_TRUE(fresh.span_id.empty());
  const auto upstream = ParseTraceParent(fresh.upstream_traceparent());
  ASSERT_TRUE(upstream.has_value()) << fresh.upstream_traceparent();
  EXPECT_EQ(upstream->trace_id, fresh.trace_id);
  EXPECT_EQ(upstream->span_id, fresh.dispatch_span_id);
  const CallTrace carried =
      telemetry.Begin({"2025-11-25", "", "tcp", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""});
  EXPECT_EQ(carried.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_TRUE(carried.span_id.empty());
  EXPECT_EQ(carried.dispatch_span_id.size(), 16u);
  EXPECT_NE(carried.dispatch_span_id, fresh.dispatch_span_id);
}

TEST(TraceContextTest, WithAnExportTheServerSpanHasItsOwnId) {
  OtlpConfig otlp;
  otlp.endpoint = "http://127.0.0.1:9/v1/traces";  // nothing is exported: no call ends here
  Telemetry telemetry(otlp);
  const CallTrace trace = telemetry.Begin({"2025-11-25", "", "tcp", "", ""});
  EXPECT_EQ(trace.span_id.size(), 16u);
  EXPECT_NE(trace.span_id, trace.dispatch_span_id);
  EXPECT_EQ(trace.trace_id.size(), 32u);
}

}  // namespace
}  // namespace udon::telemetry
