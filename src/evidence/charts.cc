#include "evidence/charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace udon::evidence::charts {
namespace {

constexpr int kWidth = 760, kLabel = 170, kRight = 190, kRow = 26, kTop = 44;
constexpr int kPlot = kWidth - kLabel - kRight;
constexpr std::size_t kLabelChars = 24;  // what fits in kLabel at the chart's font size
constexpr const char* kFont = "font-family=\"system-ui, sans-serif\" font-size=\"12\"";

std::string Number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

std::string Px(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  return buffer;
}

// <svg ...> with a title (its accessible name) and a white background.
std::string Open(int height, std::string_view title, std::string_view id) {
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-labelledby=\"" + std::string(id) +
                    "\" viewBox=\"0 0 " + std::to_string(kWidth) + " " + std::to_string(height) + "\" width=\"" +
                    std::to_string(kWidth) + "\" height=\"" + std::to_string(height) + "\" " + kFont + ">\n";
  svg += "<title id=\"" + std::string(id) + "\">" + Escape(title) + "</title>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"10\" y=\"24\" font-size=\"15\" font-weight=\"bold\">" + Escape(title) + "</text>\n";
  return svg;
}

std::string Text(double x, double y, std::string_view text, std::string_view extra = {}) {
  return "<text x=\"" + Px(x) + "\" y=\"" + Px(y) + "\"" + (extra.empty() ? "" : " " + std::string(extra)) + ">" +
         Escape(text) + "</text>\n";
}

std::string Rect(double x, double y, double width, double height, std::string_view fill, std::string_view extra = {}) {
  return "<rect x=\"" + Px(x) + "\" y=\"" + Px(y) + "\" width=\"" + Px(width) + "\" height=\"" + Px(height) +
         "\" fill=\"" + std::string(fill) + "\"" + (extra.empty() ? "" : " " + std::string(extra)) + "/>\n";
}

std::string Line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1) {
  return "<line x1=\"" + Px(x1) + "\" y1=\"" + Px(y1) + "\" x2=\"" + Px(x2) + "\" y2=\"" + Px(y2) + "\" stroke=\"" +
         std::string(stroke) + "\" stroke-width=\"" + Px(width) + "\"/>\n";
}

std::string Id(std::string_view title) {
  std::string id = "chart-";
  for (char c : title) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) id += c;
  }
  return id;
}

// Colours told apart without relying on hue alone: each has a distinct lightness.
const std::vector<const char*> kPalette = {"#1f5fa8", "#d68910", "#7d3c98", "#148f77", "#c0392b",
                                           "#5d6d7e", "#b7950b", "#2e86c1", "#a04000", "#6c3483"};

}  // namespace

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

double LogAxis::Position(double value, double width) const {
  if (value <= 0) return 0;
  const double at = (std::log10(value) - min_exp) / (max_exp - min_exp);
  return std::clamp(at, 0.0, 1.0) * width;
}

LogAxis LogAxisFor(const std::vector<double>& values) {
  double smallest = 0, largest = 0;
  for (double value : values) {
    if (value <= 0 || !std::isfinite(value)) continue;
    smallest = smallest == 0 ? value : std::min(smallest, value);
    largest = std::max(largest, value);
  }
  if (largest == 0) return {-1, 0};
  LogAxis axis;
  // One decade below the smallest value's own: its bar is at least a decade long.
  axis.min_exp = static_cast<int>(std::floor(std::log10(smallest))) - 1;
  axis.max_exp = std::max(static_cast<int>(std::ceil(std::log10(largest))), axis.min_exp + 2);
  return axis;
}

std::string LatencyChart(const std::vector<LatencyRow>& rows, std::string_view title) {
  std::vector<double> values;
  for (const LatencyRow& row : rows) values.insert(values.end(), {row.p50, row.p90});
  const LogAxis axis = LogAxisFor(values);
  const int rows_height = static_cast<int>(std::max<std::size_t>(rows.size(), 1)) * kRow;
  const int height = kTop + rows_height + 56;
  std::string svg = Open(height, title, Id(title));
  svg += Text(10, 40, "log scale, ms; solid bar: p50, light bar and red tick: p90", "fill=\"#444\"");
  const int grid_bottom = kTop + 8 + rows_height;
  for (int exp = axis.min_exp; exp <= axis.max_exp; ++exp) {
    const double x = kLabel + axis.Position(std::pow(10.0, exp), kPlot);
    svg += Line(x, kTop + 6, x, grid_bottom, "#ddd");
    svg += Text(x - 12, grid_bottom + 16, Number(std::pow(10.0, exp)), "font-size=\"11\" fill=\"#444\"");
  }
  svg += Text(kLabel + kPlot / 2.0 - 10, grid_bottom + 34, "ms (log)", "font-size=\"11\" fill=\"#444\"");
  if (rows.empty()) svg += Text(10, kTop + 24, "no timings");
  int y = kTop + 8;
  for (const LatencyRow& row : rows) {
    // A zero keeps a sliver so that the row is never mistaken for a missing one.
    const double p50 = std::max(axis.Position(row.p50, kPlot), 2.0);
    const double p90 = std::max(axis.Position(row.p90, kPlot), p50);
    const std::string data = "data-label=\"" + Escape(row.label) + "\"";
    svg += Text(10, y + 15, row.label);
    svg += Rect(kLabel, y + 4, p50, 14, "#1f5fa8", "class=\"bar-p50\" " + data);
    svg += Rect(kLabel + p50, y + 4, p90 - p50, 14, "#9dbbe0", "class=\"bar-p90\" " + data);
    svg += Line(kLabel + p90, y + 1, kLabel + p90, y + 21, "#c0392b", 2);
    svg += Text(kLabel + p90 + 8, y + 15, "p50 " + Number(row.p50) + " · p90 " + Number(row.p90));
    y += kRow;
  }
  return svg + "</svg>\n";
}

std::string BarChart(const std::vector<Bar>& bars, std::string_view title, double maximum, std::string_view empty) {
  for (const Bar& bar : bars) maximum = std::max(maximum, bar.value);
  const int height = kTop + static_cast<int>(std::max<std::size_t>(bars.size(), 1)) * kRow + 12;
  std::string svg = Open(height, title, Id(title));
  if (bars.empty()) svg += Text(10, kTop + 18, empty);
  int y = kTop;
  for (const Bar& bar : bars) {
    const double width = maximum <= 0 ? 0 : bar.value / maximum * kPlot;
    // A label longer than its column is drawn condensed to fit, never over the bar.
    const std::string fit =
        "textLength=\"" + std::to_string(kLabel - 16) + "\" lengthAdjust=\"spacingAndGlyphs\"";
    svg += Text(10, y + 15, bar.label, bar.label.size() > kLabelChars ? fit : "");
    svg += Rect(kLabel, y + 4, std::max(width, bar.value > 0 ? 2.0 : 0.0), 14, bar.alert ? "#c0392b" : "#d68910",
                "class=\"bar\" data-label=\"" + Escape(bar.label) + "\"");
    svg += Text(kLabel + width + 8, y + 15, bar.text);
    y += kRow;
  }
  return svg + "</svg>\n";
}

std::vector<std::string> SeriesByTotal(const std::vector<Column>& columns) {
  std::map<std::string, int> totals;
  for (const Column& column : columns) {
    for (const auto& [name, count] : column.parts) totals[name] += count;
  }
  std::vector<std::string> series;
  for (const auto& [name, total] : totals) series.push_back(name);
  std::stable_sort(series.begin(), series.end(),
                   [&totals](const std::string& a, const std::string& b) { return totals[a] > totals[b]; });
  return series;
}

std::string StackedColumns(const std::vector<Column>& columns, const std::vector<std::string>& series,
                           std::string_view title) {
  constexpr int kChartHeight = 180, kLeft = 50;
  const int legend_rows = static_cast<int>((series.size() + 2) / 3);
  const int height = kTop + kChartHeight + 70 + legend_rows * 20;
  std::string svg = Open(height, title, Id(title));
  int most = 0;
  for (const Column& column : columns) {
    int total = 0;
    for (const auto& [name, count] : column.parts) total += count;
    most = std::max(most, total);
  }
  const auto color = [&series](const std::string& name) {
    if (name == "ok") return "#148f77";
    const auto at = std::find(series.begin(), series.end(), name) - series.begin();
    return kPalette[static_cast<std::size_t>(at) % kPalette.size()];
  };
  const int bottom = kTop + kChartHeight;
  svg += Line(kLeft, bottom, kWidth - 10, bottom, "#444");
  svg += Text(4, kTop + 10, std::to_string(most), "font-size=\"11\" fill=\"#444\"");
  svg += Text(4, bottom, "0", "font-size=\"11\" fill=\"#444\"");
  if (columns.empty()) svg += Text(kLeft + 10, kTop + 30, "no timed records");
  const double slot = columns.empty() ? 0 : static_cast<double>(kWidth - 10 - kLeft) / columns.size();
  const std::size_t label_every = std::max<std::size_t>(1, columns.size() / 8);
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const double x = kLeft + i * slot + slot * 0.15;
    double y = bottom;
    for (const std::string& name : series) {
      for (const auto& [part, count] : columns[i].parts) {
        if (part != name || count == 0 || most == 0) continue;
        const double h = static_cast<double>(count) / most * kChartHeight;
        y -= h;
        // The rect holds its own title: hovering (or a screen reader) names bucket, code and count.
        std::string rect = Rect(x, y, slot * 0.7, h, color(name), "class=\"segment\" data-label=\"" + Escape(name) + "\"");
        rect.replace(rect.size() - 3, 3, "><title>" + Escape(columns[i].label) + " " + Escape(name) + ": " +
                                             std::to_string(count) + "</title></rect>\n");
        svg += rect;
      }
    }
    if (i % label_every == 0) svg += Text(x, bottom + 16, columns[i].label, "font-size=\"10\" fill=\"#444\"");
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double x = 10 + static_cast<double>(i % 3) * 250, y = bottom + 40 + static_cast<double>(i / 3) * 20;
    svg += Rect(x, y - 10, 12, 12, color(series[i]));
    svg += Text(x + 18, y, series[i]);
  }
  return svg + "</svg>\n";
}

}  // namespace udon::evidence::charts
