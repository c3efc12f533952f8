// The reviewed tool-manifest snapshot, profile openudon.mcp-tool-manifest.0.1 (contract
// 1.1). A Manifest keeps the document exactly as read (x-* members included): the digest
// is over all of it, and nothing is normalized away.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "json/json.h"
#include "base/result.h"
#include "manifest/instant.h"
#include "manifest/policy.h"

namespace udon::manifest {

inline constexpr std::string_view kManifestProfile = "openudon.mcp-tool-manifest.0.1";

// The review member that marks a review carried over onto a later capture of an unchanged
// Tool (CarryOverReviews, contract 7.11): {"fromCapturedAt": "<capturedAt of the capture
// the reviewer actually read>"}. Its reviewedAt stays the reviewer's; CheckInstants
// accepts it being earlier than capturedAt only with this mark, and only when it is not
// earlier than fromCapturedAt (the review still came after what it reviewed).
inline constexpr const char* kCarriedOverMember = "x-udon-carriedOver";

// One occurrence of a tool in the captured pages.
struct ToolLocation {
  std::size_t page = 0;
  std::size_t index = 0;
  const json::Value* tool = nullptr;
  std::string Pointer(std::string_view server) const;  // /servers/<s>/toolPages/<p>/tools/<i>
};

class Manifest {
 public:
  // Strict parse, then the shape rules. Errors: manifest.invalid (not JSON, duplicate
  // names, invalid UTF-8, unknown member, wrong profile or types) with a pointer.
  static Result<Manifest> FromText(std::string_view text);
  static Result<Manifest> FromValue(json::Value document);
  // Reads FILE. Errors: manifest.unreadable, then as FromText.
  static Result<Manifest> Load(const std::string& path);

  const json::Value& document() const { return document_; }
  // Lowercase hex SHA-256 of the RFC 8785 form: the manifestSha256 that pins it.
  const std::string& sha256() const { return sha256_; }

  std::optional<std::string> protocol_version() const;
  std::vector<std::string> server_keys() const;
  bool has_server(std::string_view server) const;
  const json::Value* server(std::string_view server) const;
  const json::Value* server_info(std::string_view server) const;
  const json::Value* tool_pages(std::string_view server) const;
  // Every occurrence of name across the server's pages, in page order.
  std::vector<ToolLocation> FindTool(std::string_view server, std::string_view name) const;
  // Every tool name of the server with its count of occurrences, in first-seen order.
  std::vector<std::pair<std::string, std::size_t>> ToolNames(std::string_view server) const;
  const json::Value* review(std::string_view server, std::string_view tool) const;

  // Capture data completeness (contract: manifest.incomplete): protocolVersion, instants,
  // serverInfo, pages (non-empty, every page but the last with nextCursor, the last
  // without). Instants are checked for shape here too.
  Status CheckCaptureComplete() const;
  // Completeness, the review window, the instants (CheckInstants) and expiry
  // (manifest.incomplete, manifest.invalid, manifest.window_exceeds_policy,
  // manifest.invalid_instant, manifest.expired).
  Status CheckFreshness(Seconds now, const Policy& policy) const;
  // capturedAt and every parseable reviewedAt at most now + policy.clock_skew_seconds, and
  // no reviewedAt earlier than capturedAt unless carried over (kCarriedOverMember). Errors: manifest.invalid_instant (pointer names
  // the instant). Missing or malformed instants are left to the other checks.
  Status CheckInstants(Seconds now, const Policy& policy) const;

  // Pretty-printed JSON with a stable member order, for files people review.
  std::string ToPrettyJson() const;

  // Replaces the review of one tool; the digest follows. The caller validated it.
  Status SetReview(std::string_view server, std::string_view tool, json::Value review);

 private:
  explicit Manifest(json::Value document) : document_(std::move(document)) {}
  Status Rehash();
  void IndexTools();

  json::Value document_;
  std::string sha256_;
  // Where each tool name occurs: server -> name -> (page, index) in page order. Positions,
  // not pointers, so copies stay right; the tool pages never change after FromValue. The
  // gate looks its tool up on every call, and a scan of a large catalog's Tool objects
  // costs cache misses on each of them.
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  using NameIndex = std::unordered_map<std::string, std::vector<std::pair<std::size_t, std::size_t>>, StringHash,
                                       std::equal_to<>>;
  std::map<std::string, NameIndex, std::less<>> tool_index_;
};

// Server keys: ^[A-Za-z0-9_.-]{1,64}$.
bool IsValidServerKey(std::string_view key);
bool IsExtensionMember(std::string_view name);  // "x-..."

}  // namespace udon::manifest
