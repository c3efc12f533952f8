#include "manifest/binding.h"

#include <filesystem>
#include <utility>

#include "base/file.h"
#include "json/pointer.h"
#include "base/sha256.h"

namespace udon::manifest {
namespace {

constexpr const char* kFields[] = {"manifest", "manifestSha256", "server", "tool"};

Error Shape(const char* message, std::string pointer = {}) {
  Error error = MakeError("uws.invalid", message, std::move(pointer));
  error.details["rule"] = "mcp_binding";
  return error;
}

// As the UWS rules read "x-*" (a bare "x-" is no extension), since the block sits in a
// UWS document.
bool IsExtensionKey(std::string_view key) { return key.size() > 2 && key.substr(0, 2) == "x-"; }

bool IsField(const std::string& key) {
  for (const char* field : kFields) {
    if (key == field) return true;
  }
  return false;
}

// Stage 1 of ParseBinding: every shape problem, in member order.
std::vector<Error> ShapeProblems(const json::Value& block) {
  if (!block.is_object()) return {Shape("an MCP operation needs an x-openudon-mcp object")};
  std::vector<Error> problems;
  for (const char* field : kFields) {
    auto it = block.find(field);
    if (it == block.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
      problems.push_back(Shape("x-openudon-mcp needs manifest, manifestSha256, server and tool strings",
                               "/" + std::string(field)));
    }
  }
  for (const auto& [key, unused] : block.items()) {
    if (!IsField(key) && !IsExtensionKey(key)) {
      problems.push_back(Shape("x-openudon-mcp has an unknown member", "/" + json::Pointer::EscapeToken(key)));
    }
  }
  return problems;
}

Error Reported(std::vector<Error> found, std::vector<Error>* problems) {
  Error first = found.front();
  if (problems != nullptr) *problems = std::move(found);
  return first;
}

}  // namespace

Result<std::string> ResolveManifestPath(std::string_view reference, const std::string& directory) {
  std::string path(reference);
  if (path.rfind("file://", 0) == 0) {
    path = path.substr(7);
    if (path.rfind("localhost/", 0) == 0) path = path.substr(9);
    if (path.empty() || path[0] != '/') {
      return MakeError("manifest.unreadable", "a file: URI must name an absolute local path");
    }
    return path;
  }
  if (path.rfind("file:", 0) == 0) path = path.substr(5);
  const auto colon = path.find(':');
  const auto slash = path.find('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon < slash)) {
    return MakeError("manifest.unreadable", "a manifest is a local path or a file: URI");
  }
  std::filesystem::path resolved(path);
  if (resolved.is_relative()) resolved = std::filesystem::path(directory) / resolved;
  return resolved.lexically_normal().string();
}

Result<Binding> ParseBinding(const json::Value& block, const std::string& directory, std::vector<Error>* problems) {
  if (std::vector<Error> shape = ShapeProblems(block); !shape.empty()) return Reported(std::move(shape), problems);
  Binding binding;
  binding.manifest_sha256 = block["manifestSha256"].get<std::string>();
  binding.server = block["server"].get<std::string>();
  binding.tool = block["tool"].get<std::string>();
  if (!base::IsSha256Hex(binding.manifest_sha256)) {
    return Reported({Shape("manifestSha256 must be 64 lowercase hex digits", "/manifestSha256")}, problems);
  }
  auto path = ResolveManifestPath(block["manifest"].get<std::string>(), directory);
  if (!path.ok()) {
    Error error = path.error();
    error.pointer = "/manifest";
    return Reported({std::move(error)}, problems);
  }
  binding.manifest_path = std::move(path).value();
  return binding;
}

ManifestCache::ManifestCache() : ManifestCache([](const std::string& path) { return base::ReadFile(path); }) {}

ManifestCache::ManifestCache(Reader reader) : read_(std::move(reader)) {}

Result<std::shared_ptr<const Manifest>> ManifestCache::Get(const std::string& path) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (auto it = entries_.find(path); it != entries_.end()) return it->second.loaded;
  }
  return Read(path);
}

Result<std::shared_ptr<const Manifest>> ManifestCache::Reread(const std::string& path) { return Read(path); }

// Reads the bytes; the same bytes as last time reuse that parse and its canonical digest,
// so a re-read of an unchanged manifest costs one file read and one comparison.
Result<std::shared_ptr<const Manifest>> ManifestCache::Read(const std::string& path) {
  auto text = read_(path);
  if (!text.ok()) {
    Error error = text.error().WithCode("manifest.unreadable");
    std::lock_guard<std::mutex> guard(mutex_);
    entries_.insert_or_assign(path, Entry{std::nullopt, error});
    return error;
  }
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = entries_.find(path);
    if (it != entries_.end() && it->second.bytes == *text) return it->second.loaded;
  }
  // Parsed outside the lock: concurrent gated calls of other manifests do not wait for it.
  auto parsed = Manifest::FromText(*text);
  Result<std::shared_ptr<const Manifest>> loaded =
      parsed.ok() ? Result<std::shared_ptr<const Manifest>>(std::make_shared<const Manifest>(std::move(parsed).value()))
                  : Result<std::shared_ptr<const Manifest>>(std::move(parsed).error());
  std::lock_guard<std::mutex> guard(mutex_);
  entries_.insert_or_assign(path, Entry{std::move(text).value(), loaded});
  return loaded;
}

Status CheckPin(const Manifest& manifest, const Binding& binding) {
  if (manifest.sha256() == binding.manifest_sha256) return OkStatus();
  Error error = MakeError("manifest.digest_mismatch", "the manifest's canonical SHA-256 differs from the pinned one");
  error.details = {{"pinned", binding.manifest_sha256}, {"actual", manifest.sha256()}};
  return error;
}

Result<BoundTool> SelectBoundTool(std::shared_ptr<const Manifest> manifest, const Binding& binding,
                                  const Policy& policy) {
  BoundTool bound;
  UDON_ASSIGN_OR_RETURN(bound.location, SelectTool(*manifest, binding.server, binding.tool));
  const std::string review_pointer = "/servers/" + json::Pointer::EscapeToken(binding.server) + "/reviews/" +
                                     json::Pointer::EscapeToken(binding.tool);
  const json::Value* review_json = manifest->review(binding.server, binding.tool);
  if (review_json == nullptr) return MakeError("review.missing", "the selected tool has no review", review_pointer);
  auto review = ValidateReview(*review_json, policy);
  if (!review.ok()) return std::move(review).error().AtPrefix(review_pointer);
  bound.review = std::move(review).value();
  UDON_RETURN_IF_ERROR(ValidateReviewAgainstTool(bound.review, bound.tool()));
  bound.manifest = std::move(manifest);
  return bound;
}

Result<BoundTool> ResolveBinding(const Binding& binding, const Policy& policy, ManifestCache& cache) {
  UDON_ASSIGN_OR_RETURN(std::shared_ptr<const Manifest> manifest, cache.Get(binding.manifest_path));
  UDON_RETURN_IF_ERROR(CheckPin(*manifest, binding));
  return SelectBoundTool(std::move(manifest), binding, policy);
}

}  // namespace udon::manifest
