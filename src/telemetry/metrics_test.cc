#include "telemetry/metrics.h"

#include <gtest/gtest.h>

namespace udon::telemetry {
namespace {

TEST(MetricsTest, RendersFamiliesWithHelpTypeAndEscapedLabels) {
  Metrics metrics;
  metrics.Declare("udon_mcp_tool_calls_total", MetricKind::kCounter, "Calls.\nBy tool.");
  metrics.Add("udon_mcp_tool_calls_total", {{"tool", "a\"b\\c\nd"}, {"outcome", "ok"}});
  metrics.Add("udon_mcp_tool_calls_total", {{"tool", "a\"b\\c\nd"}, {"outcome", "ok"}}, 2);
  const std::string page = metrics.Render();
  EXPECT_NE(page.find("# HELP udon_mcp_tool_calls_total Calls.\\nBy tool.\n"), std::string::npos) << page;
  EXPECT_NE(page.find("# TYPE udon_mcp_tool_calls_total counter\n"), std::string::npos);
  EXPECT_NE(page.find("udon_mcp_tool_calls_total{tool=\"a\\\"b\\\\c\\nd\",outcome=\"ok\"} 3\n"), std::string::npos)
      << page;
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Metrics metrics;
  metrics.Declare("d_seconds", MetricKind::kHistogram, "D.", {0.1, 1});
  metrics.Observe("d_seconds", {{"step", "list"}}, 0.05);
  metrics.Observe("d_seconds", {{"step", "list"}}, 0.5);
  metrics.Observe("d_seconds", {{"step", "list"}}, 5);
  const std::string page = metrics.Render();
  EXPECT_NE(page.find("d_seconds_bucket{step=\"list\",le=\"0.10000000000000001\"} 1\n"), std::string::npos) << page;
  EXPECT_NE(page.find("d_seconds_bucket{step=\"list\",le=\"1\"} 2\n"), std::string::npos) << page;
  EXPECT_NE(page.find("d_seconds_bucket{step=\"list\",le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(page.find("d_seconds_sum{step=\"list\"} 5.5499999999999998\n"), std::string::npos) << page;
  EXPECT_NE(page.find("d_seconds_count{step=\"list\"} 3\n"), std::string::npos);
}

TEST(MetricsTest, UndeclaredOrMistypedNamesAreIgnoredAndSamplersRunAtRender) {
  Metrics metrics;
  metrics.Declare("g", MetricKind::kGauge, "G.");
  metrics.Add("g", {}, 1);           // a gauge is not a counter
  metrics.Add("never_declared", {});  // nothing
  int samples = 0;
  metrics.AddSampler([&samples](Metrics& m) { m.Set("g", {}, ++samples); });
  metrics.Render();
  const std::string page = metrics.Render();
  EXPECT_NE(page.find("g 2\n"), std::string::npos) << page;
  EXPECT_EQ(page.find("never_declared"), std::string::npos);
}

}  // namespace
}  // namespace udon::telemetry
