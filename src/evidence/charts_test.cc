#include "evidence/charts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

namespace udon::evidence::charts {
namespace {

// Widths of the rects of one class, in document order.
std::vector<double> Widths(const std::string& svg, const std::string& cls) {
  std::vector<double> widths;
  const std::regex rect("<rect [^>]*width=\"([0-9.]+)\"[^>]*class=\"" + cls + "\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    widths.push_back(std::stod((*it)[1]));
  }
  return widths;
}

TEST(LogAxisTest, TheSmallestValueGetsAtLeastOneDecade) {
  const LogAxis axis = LogAxisFor({0.02, 0.5, 900, 0, -1});
  EXPECT_EQ(axis.min_exp, -3);
  EXPECT_EQ(axis.max_exp, 3);
  const double decade = 600.0 / (axis.max_exp - axis.min_exp);
  EXPECT_GE(axis.Position(0.02, 600), decade);
  EXPECT_LT(axis.Position(0.5, 600), axis.Position(900, 600));
  EXPECT_DOUBLE_EQ(axis.Position(1000, 600), 600);
  EXPECT_DOUBLE_EQ(axis.Position(0, 600), 0);
  const LogAxis none = LogAxisFor({});
  EXPECT_LT(none.min_exp, none.max_exp);
  const LogAxis one = LogAxisFor({10});
  EXPECT_GE(one.max_exp - one.min_exp, 2);
}

// The complaint: on a linear axis every step but the slowest was a sliver. On the
// log axis a step 50,000 times faster than the slowest still has a bar over a decade long.
TEST(LatencyChartTest, EveryStepHasAVisibleBarAndBothPercentiles) {
  const std::string svg =
      LatencyChart({{"digest", 0.004, 0.009}, {"list", 12.5, 40}, {"dispatch", 200, 900}}, "Gate-step latency");
  const std::vector<double> p50 = Widths(svg, "bar-p50");
  ASSERT_EQ(p50.size(), 3u);
  const double plot = 400;  // kPlot
  for (double width : p50) EXPECT_GT(width, plot / 8);
  const std::vector<double> p90 = Widths(svg, "bar-p90");
  ASSERT_EQ(p90.size(), 3u);
  for (double width : p90) EXPECT_GT(width, 0);
  EXPECT_NE(svg.find("p50 0.004 · p90 0.009"), std::string::npos);
  EXPECT_NE(svg.find("ms (log)"), std::string::npos);
  EXPECT_NE(LatencyChart({}, "t").find("no timings"), std::string::npos);
}

TEST(ChartsTest, LabelsAreEscapedAndEmptyChartsSaySo) {
  EXPECT_EQ(Escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  const std::string bars = BarChart({{"<script>", 2, "2"}}, "Drift");
  EXPECT_EQ(bars.find("<script>"), std::string::npos);
  EXPECT_NE(BarChart({}, "Drift", 0, "no drift observed").find("no drift observed"), std::string::npos);
  const std::string columns =
      StackedColumns({{"12:00", {{"ok", 3}, {"catalog.tool_drift", 1}}}, {"12:05", {{"ok", 2}}}}, {"ok", "catalog.tool_drift"},
                     "Outcomes");
  EXPECT_EQ(Widths(columns, "segment").size(), 3u);
  EXPECT_NE(columns.find("<title>12:00 catalog.tool_drift: 1</title>"), std::string::npos);
}

TEST(StackedColumnsTest, SeriesGoFromTheLargestTotalDown) {
  const std::vector<Column> columns = {{"a", {{"rare", 1}, {"common", 2}}}, {"b", {{"common", 3}, {"mid", 2}}},
                                       {"c", {{"mid", 1}, {"also_rare", 1}}}};
  EXPECT_EQ(SeriesByTotal(columns), (std::vector<std::string>{"common", "mid", "also_rare", "rare"}));
  EXPECT_TRUE(SeriesByTotal({}).empty());
}

TEST(BarChartTest, ALongLabelIsCondensedToItsColumn) {
  const std::string svg = BarChart({{"short", 1, "1"}, {"input_schema.documentation and more", 2, "2"}}, "t");
  EXPECT_NE(svg.find(">short</text>"), std::string::npos);
  EXPECT_EQ(svg.find("lengthAdjust=\"spacingAndGlyphs\">short"), std::string::npos);
  EXPECT_NE(svg.find("lengthAdjust=\"spacingAndGlyphs\">input_schema.documentation and more</text>"),
            std::string::npos);
}

}  // namespace
}  // namespace udon::evidence::charts
