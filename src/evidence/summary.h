// `udon-mcp evidence summarize`: reads the value-free evidence of calls, runs and probes
// (JSON Lines) and reports what the experiment observed: outcomes by code and exit class,
// drift incidents by what changed, list_changed invalidations, indeterminate outcomes,
// gate-step latency percentiles and nondeterminism per tool. The report model is JSON;
// Markdown, an SVG chart and an HTML page are renderings of it. Only codes, names, digests, counts and
// timings ever reach the report: any other string from a record is replaced.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gate/evidence_record.h"
#include "json/json.h"
#include "base/result.h"

namespace udon::evidence {

struct EvidenceSet {
  std::vector<gate::EvidenceRecord> records;  // read from JSON objects with a string "code"
  int files = 0;
  int unreadable_lines = 0;  // not JSON, or not an object with a string "code"
};

// Appends the records of JSON Lines text. Blank lines are skipped.
void AddEvidenceText(std::string_view text, EvidenceSet& set);
// Reads FILE ("-": stdin). Errors: io.unreadable, io.too_large.
Status AddEvidenceFile(const std::string& path, EvidenceSet& set);

// The report model (docs/experiment.md, "Reading the report"). Deterministic: the same
// records in any order give the same report.
json::Value Summarize(const EvidenceSet& set);

// Markdown for people; chart_file (relative to the Markdown) is linked when not empty.
std::string SummaryMarkdown(const json::Value& summary, const std::string& chart_file);
// Gate-step latency (p50 and p90 on a log axis) and drift incidents by kind as one SVG
// image (charts.h).
std::string SummarySvg(const json::Value& summary);
// One self-contained HTML file (no script, no external reference; a CSP that allows only
// its inline style): latency per step on a log axis, outcomes by code over time, drift by
// kind and by tool, determinism per tool, each chart followed by its numbers as a table.
std::string SummaryHtml(const json::Value& summary);

}  // namespace udon::evidence
