// What the evidence reports (`evidence summarize`, `evidence drift`) share to write their
// Markdown tables and their self-contained HTML pages: one look, one escaper per format.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"

namespace udon::evidence::internal {

// A report value as table text: strings as they are, null as "unknown", doubles with three
// decimals, everything else as JSON.
std::string Cell(const json::Value& value);

// Markdown table rows: "| a | b |" and the header with its "| --- |" separator.
std::string Row(const std::vector<std::string>& cells);
std::string Header(const std::vector<std::string>& cells);

// Text from outside (tool names, pointers, serverInfo members) for Markdown, on one line:
// hidden code points as <U+XXXX> markers (json::ForDisplay), then every character Markdown
// or inline HTML could read as markup backslash-escaped or as an entity, so a name can
// neither format, link nor break a table.
std::string MarkdownText(std::string_view text);

// <table> with a header row; every cell is escaped (charts::Escape).
std::string HtmlTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// The start of a self-contained page (no script, nothing fetched; its Content-Security-Policy
// allows only its inline style) up to and including <body> and the <h1> title.
std::string HtmlPageStart(std::string_view title);
// "</body></html>".
std::string HtmlPageEnd();

}  // namespace udon::evidence::internal
