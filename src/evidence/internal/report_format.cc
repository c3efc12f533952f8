#include "evidence/internal/report_format.h"

#include <cstdio>

#include "evidence/charts.h"
#include "json/display.h"

namespace udon::evidence::internal {
namespace {

constexpr const char* kHtmlStyle =
    "body{font-family:system-ui,sans-serif;color:#1b1f24;margin:0 auto;padding:1rem;max-width:60rem;line-height:1.45}"
    "h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem}"
    "svg{max-width:100%;height:auto;border:1px solid #d0d7de}"
    "table{border-collapse:collapse;margin:0.5rem 0}th,td{border:1px solid #d0d7de;padding:0.2rem 0.5rem;"
    "text-align:left}th{background:#f6f8fa}.alert{color:#a40e26;font-weight:bold}"
    "pre{background:#f6f8fa;padding:0.5rem;overflow-x:auto;white-space:pre-wrap}";

std::string Format(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f", value);
  return buffer;
}

}  // namespace

std::string Cell(const json::Value& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "unknown";
  if (value.is_number_float()) return Format(value.get<double>());
  return value.dump();
}

std::string Row(const std::vector<std::string>& cells) {
  std::string row = "|";
  for (const std::string& cell : cells) row += " " + cell + " |";
  return row + "\n";
}

std::string Header(const std::vector<std::string>& cells) {
  std::string separator = "|";
  for (std::size_t i = 0; i < cells.size(); ++i) separator += " --- |";
  return Row(cells) + separator + "\n";
}

std::string MarkdownText(std::string_view text) {
  const std::string shown = json::ForDisplay(text).text;
  std::string out;
  for (char c : shown) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\\': case '`': case '*': case '_': case '[': case ']': case '|': case '#': case '~': case '!':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

std::string HtmlTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string html = "<table><thead><tr>";
  for (const std::string& cell : header) html += "<th scope=\"col\">" + charts::Escape(cell) + "</th>";
  html += "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    html += "<tr>";
    for (const std::string& cell : row) html += "<td>" + charts::Escape(cell) + "</td>";
    html += "</tr>\n";
  }
  return html + "</tbody></table>\n";
}

std::string HtmlPageStart(std::string_view title) {
  const std::string escaped = charts::Escape(title);
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
         "<title>" + escaped + "</title>\n<style>" + kHtmlStyle + "</style>\n</head>\n<body>\n<h1>" + escaped +
         "</h1>\n";
}

std::string HtmlPageEnd() { return "</body>\n</html>\n"; }

}  // namespace udon::evidence::internal
