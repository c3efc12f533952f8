// The gate's comparisons of what a server shows with what was reviewed (steps 3 to 5), as
// functions of values alone: the gate calls them on a live connection's answers, and
// `evidence drift` calls the very same ones on a later release's capture, so the drift
// study's figures about "the gate" are computed by the gate's code, not a second copy.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"

namespace udon::gate {

// Step 3: exactly the recorded protocol version, then a canonically equal serverInfo.
// Errors: server.protocol_version_mismatch (details.recorded, negotiated),
// server.server_info_mismatch (details.pointers: each differing location, no value).
Status CompareNegotiated(std::string_view recorded_version, const json::Value& recorded_info,
                         std::string_view negotiated_version, const json::Value& observed_info);

// One Tool of a live listing: its name (absent when it is not an object or has no string
// name) and its bytes as the listing delivered them.
struct ListedTool {
  std::optional<std::string_view> name;
  std::string_view bytes;
  std::size_t max_depth = json::kDefaultMaxDepth;
};

// Step 4's selection: the Tool named `name`, exactly once across every page, and its
// RFC 8785 bytes. Errors: catalog.tool_missing, catalog.tool_duplicate, catalog.tool_drift
// (the bytes cannot be canonicalized).
struct SelectedTool {
  std::string_view bytes;
  std::string canonical;
};
// `known` (optional): bytes a listing delivered before and their canonical form; the same
// bytes again have that form, without being parsed again.
Result<SelectedTool> SelectListedTool(const std::vector<ListedTool>& listing, std::string_view name,
                                      const SelectedTool* known = nullptr);

// Step 5: the live Tool's canonical bytes equal the reviewed Tool's.
// Errors: catalog.tool_drift (no details: the gate adds the pointers).
Status CompareReviewedTool(const SelectedTool& live, std::string_view reviewed_canonical);

}  // namespace udon::gate
