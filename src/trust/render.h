// Human renderings of a content-trust report: plain text, and a Graphviz dot data-flow
// graph a reviewer can look at instead of read.
#pragma once

#include <string>

#include "json/json.h"
#include "trust/analyzer.h"

namespace udon::trust {

// Findings first (severity, code, path, message), then edges (from -> to, provenance,
// capability), then a one-line summary.
std::string RenderText(const Report& report);

// digraph: one node per operation, step, workflow (for its inputs and outputs), variable
// and external source ($trigger, unresolved references); report edges between the nodes
// that own their paths, coloured by provenance (untrusted red, unknown orange, trusted
// grey) and labelled with the use and its capability. Nodes with findings are drawn
// doubled, red for high and orange for warning, listing the finding codes. `document` is
// the analyzed document's root, for node names.
std::string RenderDot(const Report& report, const json::Value& document);

}  // namespace udon::trust
