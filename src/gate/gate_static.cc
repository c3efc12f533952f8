// Steps 1 and 2: the digest of the manifest read now, and everything decided from the
// manifest alone (freshness, invalidation record, review, schemas, arguments' channels).
#include "gate/gate.h"

#include <utility>

#include "gate/internal/run.h"
#include "gate/state_store.h"
#include "json/canonical.h"
#include "base/sha256.h"
#include "mcp/protocol/param_headers.h"

namespace udon::gate {

using internal::Refuse;

namespace {

Result<schema::CompiledSchema> CompileToolSchema(const json::Value& tool, const char* member) {
  auto compiled = schema::CompiledSchema::Compile(tool[member]);
  if (compiled.ok()) return compiled;
  Error error = std::move(compiled).error();
  if (error.code == "input.unsupported_dialect") {
    return std::move(error).AtPrefix(std::string("/") + member);
  }
  Error refused = MakeError("input.schema_invalid",
                            "the reviewed Tool carries a schema the validator cannot compile",
                            std::string("/") + member + error.pointer);
  refused.details["cause"] = error.code;
  return refused;
}

}  // namespace

// that does not compile is never cached: the refusal repeats on every call.
Result<std::shared_ptr<const Gate::CompiledTool>> Gate::CompiledSchemas(Run& run) {
  // Bounded: a gate that outlives many re-pinned manifests starts the cache over.
  constexpr std::size_t kMaxCompiledTools = 4096;
  const std::string key = run.manifest->sha256() + "\n" + run.binding.server + "\n" + run.binding.tool;
  {
    std::lock_guard<std::mutex> guard(schemas_mutex_);
    if (auto it = schemas_.find(key); it != schemas_.end()) return it->second;
  }
  const json::Value& tool = *run.location.tool;
  if (env_.on_schema_compile) env_.on_schema_compile(run.binding.tool);
  UDON_ASSIGN_OR_RETURN(schema::CompiledSchema input, CompileToolSchema(tool, "inputSchema"));
  std::optional<schema::CompiledSchema> output;
  if (tool.contains("outputSchema")) {
    UDON_ASSIGN_OR_RETURN(output, CompileToolSchema(tool, "outputSchema"));
  }
  auto canonical = json::Canonicalize(tool);
  if (!canonical.ok()) return canonical.error().WithCode("manifest.invalid");
  const std::string sha256 = base::Sha256Hex(*canonical);
  auto compiled = std::make_shared<const CompiledTool>(
      CompiledTool{std::move(input), std::move(output), std::move(canonical).value(), sha256, {}});
  std::lock_guard<std::mutex> guard(schemas_mutex_);
  if (schemas_.size() >= kMaxCompiledTools) schemas_.clear();
  schemas_.emplace(key, compiled);
  return compiled;
}

// Only a selection that succeeded is kept: a refusal repeats on every call. An entry
// serves only the manifest object it was made from; any other (another digest, or the
// same bytes parsed again) is selected and validated anew and replaces it.
Result<std::shared_ptr<const Gate::BoundFacts>> Gate::BoundFactsFor(const Run& run) {
  constexpr std::size_t kMaxBoundTools = 4096;  // bounded as CompiledSchemas is
  const std::string key = run.manifest->sha256() + "\n" + run.binding.server + "\n" + run.binding.tool;
  {
    std::lock_guard<std::mutex> guard(bound_mutex_);
    auto it = bound_.find(key);
    if (it != bound_.end() && it->second->bound.manifest == run.manifest) return it->second;
  }
  UDON_ASSIGN_OR_RETURN(manifest::BoundTool bound, manifest::SelectBoundTool(run.manifest, run.binding, env_.policy));
  std::string server_info_sha256;
  if (const json::Value* info = run.manifest->server_info(run.binding.server)) {
    auto digest = json::CanonicalSha256(*info);
    if (digest.ok()) server_info_sha256 = std::move(digest).value();
  }
  auto facts = std::make_shared<const BoundFacts>(BoundFacts{std::move(bound), std::move(server_info_sha256)});
  std::lock_guard<std::mutex> guard(bound_mutex_);
  if (bound_.size() >= kMaxBoundTools) bound_.clear();
  bound_[key] = facts;
  return facts;
}

Status Gate::StepDigest(Run& run) {
  if (!base::IsSha256Hex(run.binding.manifest_sha256)) {
    return Refuse("usage.invalid", "the pinned manifestSha256 must be 64 lowercase hex digits");
  }
  // Every call reads the file and establishes the canonical digest of exactly those bytes
  // (manifest::ManifestCache::Reread): bytes identical to ones already hashed, every byte
  // compared, have that digest; any other bytes are parsed, canonicalized and hashed. The
  // manifest is kept even when the pin differs: evidence records its actual digest.
  // CheckStatic alone takes the cache's current read: a caller checking many tools of one
  // manifest (serve's start-up) reads and hashes it once, with Reread, beforehand.
  UDON_ASSIGN_OR_RETURN(run.manifest, run.reach == Reach::kStatic ? env_.manifests->Get(run.binding.manifest_path)
                                                                   : env_.manifests->Reread(run.binding.manifest_path));
  return manifest::CheckPin(*run.manifest, run.binding);
}

// This process's own records first (InvalidationMemory), then the store's.
// Errors: state.unavailable.
Result<bool> Gate::Invalidated(Run& run) {
  const std::string& digest = run.manifest->sha256();
  if (env_.invalidations->Covers(digest, run.binding.server, run.captured_at)) return true;
  return env_.state->IsInvalidated(digest, run.binding.server, run.captured_at);
}

Status Gate::StepStatic(Run& run) {
  const manifest::Manifest& m = *run.manifest;
  UDON_RETURN_IF_ERROR(m.CheckFreshness(env_.clock(), env_.policy));
  auto captured_at = manifest::ParseInstant(m.document().value("capturedAt", ""));
  if (!captured_at.ok()) return Refuse("manifest.incomplete", "capturedAt is missing or malformed", "/capturedAt");
  run.captured_at = *captured_at;
  UDON_ASSIGN_OR_RETURN(bool invalidated, Invalidated(run));
  if (invalidated) {
    return Refuse("manifest.invalidated",
                  "list_changed was seen for this server at or after this manifest's capture; capture and review again");
  }
  UDON_ASSIGN_OR_RETURN(run.bound_facts, BoundFactsFor(run));
  run.location = run.bound_facts->bound.location;
  run.review = run.bound_facts->bound.review;
  const json::Value& tool = *run.location.tool;
  for (const std::string& path : run.options.bound_paths) {
    if (!manifest::ChannelCovers(run.review, path)) {
      return Refuse("review.unclassified_channel", "a bound argument path has no reviewed input channel",
                    path);
    }
  }
  const bool has_output_schema = tool.contains("outputSchema");
  if (run.options.expect_output && !has_output_schema) {
    return Refuse("binding.output_schema_required",
                  "outputs are expected but the reviewed Tool has no outputSchema", "/outputSchema");
  }
  if (!tool.contains("inputSchema") || !tool["inputSchema"].is_object()) {
    return Refuse("input.schema_invalid", "the reviewed Tool has no inputSchema object", "/inputSchema");
  }
  UDON_ASSIGN_OR_RETURN(run.compiled, CompiledSchemas(run));
  run.input_schema = run.compiled->input;
  run.output_schema = run.compiled->output;
  UDON_RETURN_IF_ERROR(CheckParamHeaders(run));
  // The reviewed inputSchema is in the manifest: invalid arguments are refused here,
  // before any server is started or contacted.
  return ValidateArguments(run);
}

// 2026-07-28 over HTTP: a client must refuse a tool whose x-mcp-header annotations break
// the rules (it could not mirror its arguments faithfully); other wires ignore them.
Status Gate::CheckParamHeaders(Run& run) {
  const auto version = run.manifest->protocol_version();
  if (!version || !mcp::IsModernProtocolVersion(*version) || env_.config == nullptr) return OkStatus();
  auto server = env_.config->Find(run.binding.server);
  if (!server.ok() || server->type != mcp::ServerType::kHttp) return OkStatus();
  auto params = mcp::ParamHeadersOf(*run.location.tool);
  if (params.ok()) return OkStatus();
  Error error = Refuse("input.schema_invalid", "the reviewed Tool carries an invalid x-mcp-header annotation",
                       params.error().pointer);
  error.details["cause"] = params.error().code;
  return error;
}

}  // namespace udon::gate
