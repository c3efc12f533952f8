// Reviewer assertions (the proposal's "Reviewer assertions define the qualifying subset")
// and input-channel classes: what a review must say, and what this installation accepts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "json/display.h"
#include "json/json.h"
#include "base/result.h"
#include "manifest/manifest.h"
#include "manifest/policy.h"

namespace udon::manifest {

enum class ChannelClass { kData, kInstruction, kAuthority };
enum class Concurrency { kSafe, kSerialize };
enum class SerializeScope { kTool, kServer };

// A review that passed ValidateReview, in typed form.
struct Review {
  std::string reviewer;
  Seconds reviewed_at = 0;
  bool model_backed = false;
  std::vector<std::string> side_effects;
  Concurrency concurrency = Concurrency::kSafe;
  SerializeScope serialize_scope = SerializeScope::kTool;
  std::vector<std::pair<std::string, ChannelClass>> input_channels;  // pointer, class
};

const char* ChannelClassName(ChannelClass channel);

// The Stage 1 rules, then local policy. Errors:
//   review.incomplete  a required field or assertion is absent or malformed
//   review.rejected    present but unacceptable (headless/independentCalls/
//                      referenceBasedIO not true, concurrency not safe|serialize, a
//                      channel class outside data|instruction|authority, model-backed or
//                      side effects refused by policy)
// Pointers are relative to the review object.
Result<Review> ValidateReview(const json::Value& review, const Policy& policy);

// Rules that need the reviewed Tool object: execution.taskSupport "required" is
// catalog.task_required; every channel pointer must resolve in the inputSchema
// (properties, items, prefixItems, additionalProperties, $ref to local $defs/definitions)
// or the review is review.rejected.
Status ValidateReviewAgainstTool(const Review& review, const json::Value& tool);

// Records one review in the manifest, as `udon-mcp review` and the workbench both do:
// SelectTool, ValidateReview (Stage 1 and policy), ValidateReviewAgainstTool,
// Manifest::SetReview, then Manifest::CheckInstants at `now`. On any error the manifest is
// left unchanged. The validated review on success. Errors: those of the functions named,
// in that order (manifest.server_unknown, catalog.tool_missing, catalog.tool_duplicate,
// review.incomplete, review.rejected, catalog.task_required, manifest.invalid_instant).
Result<Review> ApplyReview(Manifest& manifest, std::string_view server, std::string_view tool,
                           const json::Value& review_json, const Policy& policy, Seconds now);

// Pointers a reviewer classifies: "/name" for every property of the inputSchema's root
// object (after a local $ref), then, under object-typed properties, their properties,
// depth first (at most `max_depth` levels). Each resolves in the inputSchema
// (ValidateReviewAgainstTool accepts it as a channel key).
std::vector<std::string> ArgumentPointers(const json::Value& tool, int max_depth = 3);

// The selected tool, exactly once (catalog.tool_missing, catalog.tool_duplicate,
// manifest.server_unknown).
Result<ToolLocation> SelectTool(const Manifest& manifest, std::string_view server,
                                std::string_view tool);

// Top-level argument properties of the inputSchema that no channel covers (a channel
// "" covers all of them).
std::vector<std::string> UnclassifiedTopLevelArguments(const Review& review,
                                                       const json::Value& tool);

// True when the channel pointers cover `path` (the path itself or an ancestor).
bool ChannelCovers(const Review& review, std::string_view argument_pointer);

// The text a reviewer reads before approving: name, title, description, annotations,
// execution, schemas (pretty JSON) and any other member, with every code point a reader
// could not see shown as a marker by json::ForDisplay (the one escaper of every text
// output); `hidden` says what the markers stand for.
json::DisplayText RenderToolForReview(const json::Value& tool);

}  // namespace udon::manifest
