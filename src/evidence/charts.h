// SVG charts for the evidence report (`evidence summarize`: the SVG beside the Markdown and
// the self-contained HTML file). Plain SVG text, no script, no external reference; sizes
// in user units with a viewBox, so a page can scale them. Every label is escaped.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace udon::evidence::charts {

// Text for XML and HTML content and attribute values.
std::string Escape(std::string_view text);

// A base-10 logarithmic axis over whole decades [10^min_exp, 10^max_exp]. The lowest
// decade lies below the smallest positive value, so that every positive value, however
// far from the largest, gets a bar at least one decade long.
struct LogAxis {
  int min_exp = 0;
  int max_exp = 1;
  // 0 at 10^min_exp, `width` at 10^max_exp; values at or below 10^min_exp (0 included) at 0.
  double Position(double value, double width) const;
};
// The axis for these values (non-positive ones ignored; none positive: [10^-1, 10^0]).
LogAxis LogAxisFor(const std::vector<double>& values);

struct LatencyRow {
  std::string label;
  double p50 = 0;
  double p90 = 0;
};
// One row per step on a log axis: a solid bar to p50 and a lighter bar on to p90 with a
// tick at p90, both values written beside it; decade grid lines labelled in ms.
// Bars carry class="bar-p50" / "bar-p90" and data-label.
std::string LatencyChart(const std::vector<LatencyRow>& rows, std::string_view title);

struct Bar {
  std::string label;
  double value = 0;
  std::string text;  // written beside the bar (the value, "3 / 20", ...)
  bool alert = false;  // drawn in the alert colour
};
// Horizontal bars on a linear axis from 0 to `maximum` (0: the largest value); `empty`
// is written when there are no bars.
std::string BarChart(const std::vector<Bar>& bars, std::string_view title, double maximum = 0,
                     std::string_view empty = "none observed");

struct Column {
  std::string label;                               // e.g. the bucket's start
  std::vector<std::pair<std::string, int>> parts;  // series name -> count
};
// The series the columns name, the largest total first (equal totals by name), so that
// stacked in this order the most common one sits at the base.
std::vector<std::string> SeriesByTotal(const std::vector<Column>& columns);

// Stacked columns (one per bucket, series stacked in `series` order) with a legend.
std::string StackedColumns(const std::vector<Column>& columns, const std::vector<std::string>& series,
                           std::string_view title);

}  // namespace udon::evidence::charts
