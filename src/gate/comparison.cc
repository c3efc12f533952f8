#include "gate/comparison.h"

#include <utility>

#include "gate/internal/details.h"
#include "json/canonical.h"
#include "json/diff.h"

namespace udon::gate {

Status CompareNegotiated(std::string_view recorded_version, const json::Value& recorded_info,
                         std::string_view negotiated_version, const json::Value& observed_info) {
  if (negotiated_version != recorded_version) {
    Error error = MakeError("server.protocol_version_mismatch",
                            "the negotiated protocol version differs from the manifest's");
    error.details = {{"recorded", std::string(recorded_version)}, {"negotiated", std::string(negotiated_version)}};
    return error;
  }
  if (!json::CanonicallyEqual(observed_info, recorded_info)) {
    Error error = MakeError("server.server_info_mismatch", "the observed serverInfo differs from the reviewed one");
    error.details["pointers"] = internal::DriftDetails(json::Diff(recorded_info, observed_info));
    return error;
  }
  return OkStatus();
}

Result<SelectedTool> SelectListedTool(const std::vector<ListedTool>& listing, std::string_view name,
                                      const SelectedTool* known) {
  std::size_t occurrences = 0;
  const ListedTool* found = nullptr;
  for (const ListedTool& tool : listing) {
    if (!tool.name || *tool.name != name) continue;
    if (occurrences++ == 0) found = &tool;
  }
  if (occurrences == 0) return MakeError("catalog.tool_missing", "the selected tool is absent from the live catalog");
  if (occurrences > 1) {
    return MakeError("catalog.tool_duplicate", "the selected tool name occurs more than once in the live catalog");
  }
  if (known != nullptr && found->bytes == known->bytes) return SelectedTool{found->bytes, known->canonical};
  json::ParseOptions options;
  options.max_depth = found->max_depth;
  auto canonical = json::CanonicalizeText(found->bytes, options);
  // Bytes the listing already accepted cannot fail here; if they did, nothing is forwarded.
  if (!canonical.ok()) return MakeError("catalog.tool_drift", "the live Tool object cannot be canonicalized");
  return SelectedTool{found->bytes, std::move(canonical).value()};
}

Status CompareReviewedTool(const SelectedTool& live, std::string_view reviewed_canonical) {
  if (live.canonical == reviewed_canonical) return OkStatus();
  return MakeError("catalog.tool_drift", "the live Tool object differs from the reviewed one");
}

}  // namespace udon::gate
