// The review workbench's model (`udon-mcp workbench`, docs/contract.md 7.15): what the
// browser shows and what a save does, as JSON, with no HTTP in sight (server.h serves it).
//
// Every string that came from a server (names, titles, descriptions, schema members and
// values, pointers) reaches the page as display segments made by json::DisplaySegments,
// the same decisions `review --show`, `diff` and every printed refusal make: the page
// draws a marker for each hidden segment and never decides what is hidden itself.
// Segments are [{"t": "text"} | {"h": "U+202E"}].
//
// The manifest is read from its file for every request, so a review recorded with
// `udon-mcp review` in a terminal meanwhile is what the page shows next; a save names
// the manifestSha256 it was made against and is refused when the file moved on.
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include "json/display.h"
#include "json/json.h"
#include "base/result.h"
#include "manifest/instant.h"
#include "manifest/manifest.h"
#include "manifest/policy.h"

namespace udon::workbench {

struct WorkbenchOptions {
  std::string manifest_path;
  // A previous manifest to show drift against (--against): older than the manifest,
  // whose reviews a carry-over brings onto the manifest.
  std::string against_path;
  // Or a fresh capture of the manifest's servers (--live): newer than the manifest; a
  // carry-over replaces the manifest with it plus the reviews of unchanged tools, as
  // `capture --update` does.
  std::optional<manifest::Manifest> live;
  // How the page names the drift baseline ("old.tools.json", "a live capture").
  std::string against_label;
  manifest::Policy policy;
};

// Segments of one string (json::DisplaySegments).
json::Value Segments(std::string_view text, json::LineBreaks breaks = json::LineBreaks::kEscape);

// A JSON value as a tree a page can draw and collapse: {"t": type, "k": key segments
// (members of an object), "v": value segments (scalars; numbers, booleans and null as
// their JSON text), "c": children (objects and arrays, in document order)}.
json::Value DisplayTree(const json::Value& value);

// A word diff of two texts: [{"op": "=" | "-" | "+", "s": segments}], whitespace kept with
// the word before it. Texts of more than kMaxDiffWords words each become one removal and
// one addition.
inline constexpr std::size_t kMaxDiffWords = 4000;
json::Value WordDiff(std::string_view before, std::string_view after);

class Workbench {
 public:
  explicit Workbench(WorkbenchOptions options) : options_(std::move(options)) {}

  // Servers, tools and their status (reviewed / unreviewed / expired), counts, capture
  // and expiry instants, the policy's review window, the manifest's digest.
  // Errors: those of Manifest::Load.
  Result<json::Value> Overview(manifest::Seconds now) const;

  // One tool for reading and reviewing: name, title, description (line breaks kept),
  // schemas, annotations and execution as trees, the Tool's canonical SHA-256, the
  // argument pointers a review classifies, the review it has. Errors: those of
  // Manifest::Load and manifest::SelectTool.
  Result<json::Value> Tool(const std::string& server, const std::string& tool) const;

  // The drift from the older to the newer manifest (manifest::DiffManifests), changed tools
  // by pointer with old and new values as trees and changed descriptions as a word diff;
  // plus which reviews a carry-over would keep. Errors: workbench.no_baseline, those of
  // Manifest::Load.
  Result<json::Value> Drift() const;

  // {"server", "tool", "baseSha256", "review": {...}}: the review as `udon-mcp review
  // --from` takes it (reviewedAt defaults to now), recorded by manifest::ApplyReview and
  // written atomically. {"sha256": new manifestSha256}. Errors: usage.invalid (a request
  // of another shape), workbench.stale (the file's digest is not baseSha256), those of
  // manifest::ApplyReview (nothing written), io.write_failed.
  Result<json::Value> SaveReview(const json::Value& request, manifest::Seconds now);

  // {"baseSha256"}: the reviews of the older manifest whose Tool is unchanged carried onto
  // the newer (manifest::CarryOverReviews, the rule of `capture --update`), the result
  // written atomically over the manifest. {"sha256", "report": manifest::CarryOverToJson}. Errors: as SaveReview,
  // workbench.no_baseline.
  Result<json::Value> CarryOver(const json::Value& request);

  const WorkbenchOptions& options() const { return options_; }

 private:
  Result<manifest::Manifest> LoadAt(const json::Value& request) const;
  bool has_baseline() const { return !options_.against_path.empty() || options_.live.has_value(); }

  WorkbenchOptions options_;
  std::mutex write_mutex_;  // one save at a time: each reads, checks and writes the file
};

}  // namespace udon::workbench
