// `udon-mcp evidence drift`: what drifts in one server's catalog, release by release, and
// what each candidate relaxation of an exact whole-catalog comparison would have let through,
// and what the gate itself refuses (drift_gate.h)
// (docs/contract.md 7.20; the JSON shape is profile udon-mcp.drift-report.0.1).
//
// Every consecutive pair of manifests goes through manifest::DiffManifests, and every
// difference keeps the kind it gives (manifest/drift_kind.h): this file counts kinds, it
// never compares or classifies anything itself. The report model is JSON; Markdown and a
// self-contained HTML page are renderings of it. Tool names, kinds, pointers, counts,
// digests and the serverInfo name and version reach the report; descriptions and other
// values only with `show`, escaped as `review --show` escapes them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"
#include "manifest/manifest.h"

namespace udon::evidence {

inline constexpr std::string_view kDriftReportProfile = "udon-mcp.drift-report.0.1";

// One entry of the series: a manifest file and its release label.
struct SeriesFile {
  std::string path;
  std::string label;
};

// FILE's release label when none is given: its name without the directory and without a
// ".tools.json" or ".json" ending.
std::string LabelForFile(const std::string& path);

// DIR/index.json: {"series": [{"file": "<name>", "label": "<release>"}, ...]} in release
// order ("label" optional: LabelForFile; other members ignored). Files are relative to DIR
// and stay inside it (no absolute path, no ".." segment). Errors: io.unreadable,
// io.too_large, json.* (the index is not JSON), evidence.index_invalid (another shape; the
// pointer names the member).
Result<std::vector<SeriesFile>> ReadSeriesIndex(const std::string& directory);

// A candidate rule: the kinds it ignores (a kind matches a name equal to it or starting
// with it and a dot). "exact" ignores nothing: whole catalogs compared exactly (the gate
// compares the called tool, after serverInfo and the protocol version: drift_gate.h).
struct DriftRule {
  std::string name;
  std::vector<std::string> ignored;
};
// exact, ignore_documentation, ignore_annotations, ignore_meta_icons, ignore_order,
// accept_widened_input, all_relaxations: in that order.
const std::vector<DriftRule>& DriftRules();

// Whether a difference of this kind makes the gate refuse: a Tool object differs (tool.*,
// input_schema.*, output_schema.*) or the catalog does (catalog.*). serverInfo, the
// protocol version, the capture instants and reviews are recorded apart.
bool IsCatalogKind(std::string_view kind);
// Whether `rule` ignores a difference of `kind`.
bool RuleIgnores(const DriftRule& rule, std::string_view kind);

struct SeriesManifest {
  std::string label;
  manifest::Manifest manifest;
};

struct DriftReportOptions {
  std::string server;  // the server key; empty: each manifest's only server
  bool show = false;   // description changes, escaped (json::ForDisplay), in each pair
};

// The report model (profile kDriftReportProfile). Each manifest's server is taken by
// options.server, or as its only server, so a server key that changed between releases
// is no drift. Errors: usage.invalid (fewer than two manifests; a manifest with several
// servers and no options.server), manifest.server_unknown (the server is not in a
// manifest, or a manifest has none; details.index names it).
Result<json::Value> BuildDriftReport(const std::vector<SeriesManifest>& series, const DriftReportOptions& options);

// Warnings about the series itself: one when consecutive releases name different servers
// (serverInfo.name), since a drift report compares releases of one server (a renamed
// server is the one case where that is expected). Names are public catalog data.
std::vector<std::string> SeriesWarnings(const json::Value& report);

// Markdown for people: the rule table first, then the version question, the pairs, the
// tools' histories and, when the model has them, the description changes.
std::string DriftReportMarkdown(const json::Value& report);
// One self-contained HTML file in the style of `evidence summarize --html` (charts.h):
// refused pairs per rule and differences by kind as bar charts, differences per pair as
// stacked columns, each followed by its numbers as a table.
std::string DriftReportHtml(const json::Value& report);

}  // namespace udon::evidence
