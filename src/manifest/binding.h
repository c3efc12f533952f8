// The MCP binding (x-openudon-mcp, contract 1.2) and its one resolver: decode the block,
// resolve its manifest reference, read and hash the manifest, compare it with the pin,
// select the server and tool, and validate the tool's review. The static UWS checks, the
// content-trust resolver, the gate and the probe all resolve through here, sharing one
// ManifestCache per run so a run reads each manifest once; only the gate reads it again,
// before every call (the proposal's "Freshness and drift" requires it).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"
#include "manifest/manifest.h"
#include "manifest/policy.h"
#include "manifest/review.h"

namespace udon::manifest {

// The four binding fields of x-openudon-mcp (manifest already resolved to a path).
struct Binding {
  std::string manifest_path;
  std::string manifest_sha256;
  std::string server;
  std::string tool;
};

// The manifest path of a binding: relative to the UWS document's folder, or a file: URI.
// Errors: manifest.unreadable for any other URI scheme.
Result<std::string> ResolveManifestPath(std::string_view reference, const std::string& directory);

// Decodes an x-openudon-mcp block, in this order, stopping after the first stage that
// fails:
//   1 shape    an object with non-empty string members manifest, manifestSha256, server
//              and tool, and no other members but x-* (uws.invalid, details.rule
//              mcp_binding; one error per problem)
//   2 pin      manifestSha256 is 64 lowercase hex digits (uws.invalid, rule mcp_binding)
//   3 manifest the reference resolves (ResolveManifestPath: manifest.unreadable)
// Pointers are relative to the block. Returns the binding or the first problem; `problems`,
// when given, receives every problem of the failing stage.
Result<Binding> ParseBinding(const json::Value& block, const std::string& directory,
                             std::vector<Error>* problems = nullptr);

// Manifests by path, each kept with the bytes it was parsed from. Get reads a path once and
// answers every later call from memory (failures included); Reread reads the bytes every
// time, compares every one of them with the kept bytes, and parses, canonicalizes and
// hashes them again only when they differ. Safe to share between threads.
class ManifestCache {
 public:
  // How bytes are read; a test seam (counting reads). Default: base::ReadFile.
  using Reader = std::function<Result<std::string>(const std::string& path)>;

  ManifestCache();
  explicit ManifestCache(Reader reader);
  ManifestCache(const ManifestCache&) = delete;
  ManifestCache& operator=(const ManifestCache&) = delete;

  // Errors: manifest.unreadable, manifest.invalid (as Manifest::Load).
  Result<std::shared_ptr<const Manifest>> Get(const std::string& path);
  Result<std::shared_ptr<const Manifest>> Reread(const std::string& path);

 private:
  struct Entry {
    // The bytes the manifest was parsed from; none when they could not be read. Equal
    // bytes have the same canonical digest, so comparing them is the digest check for
    // bytes already hashed (and stricter than comparing a hash of them).
    std::optional<std::string> bytes;
    Result<std::shared_ptr<const Manifest>> loaded;
  };

  Result<std::shared_ptr<const Manifest>> Read(const std::string& path);

  Reader read_;
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

// The one pin check. Errors: manifest.digest_mismatch (details: pinned, actual).
Status CheckPin(const Manifest& manifest, const Binding& binding);

// A binding resolved against its manifest: what every user of the binding needs.
struct BoundTool {
  std::shared_ptr<const Manifest> manifest;  // immutable, shared with the cache
  ToolLocation location;                     // location.tool points into *manifest
  Review review;                             // validated against policy and the Tool

  const json::Value& tool() const { return *location.tool; }
};

// Selects the bound tool and validates its review. Errors, pointers into the manifest:
// manifest.server_unknown, catalog.tool_missing, catalog.tool_duplicate (SelectTool);
// review.missing (at /servers/<server>/reviews/<tool>); review.incomplete, review.rejected
// (ValidateReview, under that pointer); catalog.task_required, review.rejected
// (ValidateReviewAgainstTool, pointers relative to the review).
Result<BoundTool> SelectBoundTool(std::shared_ptr<const Manifest> manifest, const Binding& binding,
                                  const Policy& policy);

// Get, CheckPin, then SelectBoundTool. The codes of the first two (manifest.unreadable,
// manifest.invalid, manifest.digest_mismatch) and of the last never overlap, so a caller
// can tell the stage that refused by the code alone.
Result<BoundTool> ResolveBinding(const Binding& binding, const Policy& policy, ManifestCache& cache);

}  // namespace udon::manifest
