// `udon-mcp evidence chart`: a bar chart (charts.h, the renderer the evidence reports use)
// from a small JSON description, so that a report assembled elsewhere (the drift study's
// docs/drift-study/*.svg) draws its figures with the same code (docs/contract.md 7.20).
//
// The description: {"title": string, "bars": [{"label": string, "value": number >= 0,
// "text": string (optional), "alert": bool (optional)}], "maximum": number (optional),
// "empty": string (optional)}.
#pragma once

#include <string>

#include "base/result.h"
#include "json/json.h"

namespace udon::evidence {

// The SVG text of the described chart.
// Errors: evidence.chart_invalid (pointer names the member).
Result<std::string> BarChartFromSpec(const json::Value& spec);

}  // namespace udon::evidence
