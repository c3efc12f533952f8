#include "gate/gate.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "gate/evidence_key.h"
#include "gate/state_store.h"
#include "json/canonical.h"
#include "json/diff.h"
#include "json/pointer.h"
#include "json/sha256.h"
#include "manifest/diff.h"
#include "manifest/manifest.h"
#include "manifest/review.h"
#include "catalog/catalog.h"
#include "mcp/client/least_privilege.h"
#include "mcp/protocol/param_headers.h"
#include "schema/schema.h"

namespace udon::gate {
namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Error Refuse(const char* code, const char* message, std::string pointer = {}) {
  return MakeError(code, message, std::move(pointer));
}

// Where a gate's warnings go: GateEnvironment::warn, else stderr.
void WarnTo(const std::function<void(const std::string&)>& warn, const std::string& text) {
  if (warn) {
    warn(text);
  } else {
    std::fprintf(stderr, "udon-mcp: warning: %s\n", text.c_str());
  }
}

// Digest of a value for evidence; never the value itself.
std::string DigestOrEmpty(const json::Value& value) {
  auto digest = json::CanonicalSha256(value);
  return digest.ok() ? *digest : std::string();
}

json::Value DriftDetails(const std::vector<json::Difference>& differences) {
  json::Value pointers = json::Value::array();
  for (const auto& d : differences) {
    pointers.push_back({{"pointer", d.pointer},
                        {"change", json::DifferenceKindName(d.kind)},
                        {"area", manifest::ToolChangeArea(d.pointer)}});
  }
  return pointers;
}

// Whose instance a validation looked at: the caller's own arguments, or a result the
// server chose. Object keys in a result are server data (a map keyed by account number,
// say), so a result's errors name schema locations only.
enum class Instance { kArguments, kResult };

// The property a failed `required` unit misses, named from the schema's own required list
// (never from the instance): the validator fails once per missing name, in list order, so
// the n-th unit at one location is the n-th name the instance lacks. Empty when the
// keyword location does not resolve plainly in the schema (a $ref on the way).
std::string MissingProperty(const json::Value& schema_document, const json::Value& instance_document,
                            const schema::OutputUnit& unit, std::map<std::string, std::size_t>& seen) {
  constexpr std::string_view kRequired = "/required";
  const std::string& location = unit.keyword_location;
  if (location.size() < kRequired.size() || location.compare(location.size() - kRequired.size(), kRequired.size(), kRequired) != 0) {
    return {};
  }
  auto keyword = json::Pointer::Parse(location);
  auto at = json::Pointer::Parse(unit.instance_location);
  if (!keyword.ok() || !at.ok()) return {};
  const json::Value* required = keyword->Resolve(schema_document);
  const json::Value* object = at->Resolve(instance_document);
  if (required == nullptr || !required->is_array() || object == nullptr || !object->is_object()) return {};
  std::vector<std::string> missing;
  for (const json::Value& name : *required) {
    if (name.is_string() && !object->contains(name.get<std::string>())) missing.push_back(name.get<std::string>());
  }
  const std::size_t index = seen[location + "\n" + unit.instance_location]++;
  return index < missing.size() ? missing[index] : std::string();
}

// Basic-output units without anything from the instance but (for arguments) its locations
// and, for `required`, the missing property's schema-given name.
json::Value SchemaErrors(const schema::ValidationResult& result, Instance instance,
                         const json::Value* schema_document = nullptr, const json::Value* arguments = nullptr) {
  json::Value errors = json::Value::array();
  std::map<std::string, std::size_t> seen;
  for (const auto& unit : result.errors) {
    json::Value entry = {{"keywordLocation", unit.keyword_location}, {"error", unit.error}};
    if (instance == Instance::kArguments) {
      entry["instanceLocation"] = unit.instance_location;
      if (schema_document != nullptr && arguments != nullptr) {
        if (std::string name = MissingProperty(*schema_document, *arguments, unit, seen); !name.empty()) {
          entry["property"] = std::move(name);
        }
      }
    }
    errors.push_back(std::move(entry));
    if (errors.size() >= 50) break;
  }
  return errors;
}

// serverInfo is public (the manifest holds it): a mismatch says what each differing member
// was reviewed as and is live, so a person sees the upgrade without a second tool.
json::Value ServerInfoDifferences(const json::Value& reviewed, const json::Value& live) {
  json::Value out = json::Value::array();
  for (const auto& d : json::Diff(reviewed, live)) {
    json::Value entry = {{"pointer", d.pointer}, {"change", json::DifferenceKindName(d.kind)}};
    if (auto pointer = json::Pointer::Parse(d.pointer); pointer.ok()) {
      if (const json::Value* was = pointer->Resolve(reviewed)) entry["reviewed"] = *was;
      if (const json::Value* is = pointer->Resolve(live)) entry["live"] = *is;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

using catalog::EndsSubscription;
using catalog::IsListChanged;

// The shape MCP gives a CallToolResult: content an array of content blocks (objects with
// a string type), isError a boolean when present, structuredContent an object when
// present. Anything else is not a result this gate can judge, so it cannot be success.
const char* CallResultShapeProblem(const json::Value& result) {
  if (!result.is_object()) return "the tools/call result is not an object";
  auto content = result.find("content");
  if (content == result.end() || !content->is_array()) return "the tools/call result has no content array";
  for (const json::Value& block : *content) {
    if (!block.is_object() || !block.contains("type") || !block["type"].is_string()) {
      return "a content block of the tools/call result is malformed";
    }
  }
  if (auto is_error = result.find("isError"); is_error != result.end() && !is_error->is_boolean()) {
    return "isError of the tools/call result is not a boolean";
  }
  if (auto structured = result.find("structuredContent"); structured != result.end() && !structured->is_object()) {
    return "structuredContent of the tools/call result is not an object";
  }
  return nullptr;
}

// --diagnostics: the text blocks of an isError result, joined, cut to a sane length;
// other block types are only counted.
std::string ToolErrorText(const json::Value& content) {
  std::string text;
  std::size_t other = 0;
  for (const json::Value& block : content) {
    if (block["type"] == "text" && block.contains("text") && block["text"].is_string()) {
      if (!text.empty()) text += '\n';
      text += block["text"].get<std::string>();
    } else {
      ++other;
    }
  }
  text = mcp::TruncateHead(text);
  if (other > 0) text += (text.empty() ? "" : "\n") + std::string("(") + std::to_string(other) + " non-text block(s))";
  return text;
}

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

struct Gate::CompiledTool {
  schema::CompiledSchema input;
  std::optional<schema::CompiledSchema> output;
  std::string canonical;  // the reviewed Tool's RFC 8785 bytes, what the live one must equal
};

// What the manifest recorded for the bound server: a connection must speak exactly this.
struct Gate::RecordedServer {
  std::string protocol_version;
  const json::Value* server_info = nullptr;
  std::string server_info_sha256;
};

struct Gate::Run {
  manifest::Binding binding;
  const json::Value* arguments = nullptr;
  CallOptions options;
  GateResult* result = nullptr;
  Reach reach = Reach::kCall;

  std::shared_ptr<const manifest::Manifest> manifest;
  manifest::ToolLocation location;
  manifest::Review review;
  std::optional<schema::CompiledSchema> input_schema;
  std::optional<schema::CompiledSchema> output_schema;

  std::unique_ptr<PooledConnection> connection;
  bool reused = false;
  std::string reuse_refused;  // why a pooled connection was not reused
  mcp::NotificationStream connection_stream = mcp::NotificationStream::kNone;
  bool barrier = false;       // a ping round trip ordered the events before dispatch
  std::uint64_t checked_through = 0;  // events up to here were examined before binding
  std::uint64_t bound_sequence = 0;
  std::unique_ptr<StateLock> lock;
  std::shared_ptr<const CompiledTool> compiled;
  // The live Tool as listed: its canonical bytes, and its bytes as sent for a drift report.
  std::string live_tool_canonical;
  std::string live_tool_bytes;

  // Evidence facts.
  int listings = 0;
  int disturbed_listings = 0;
  int list_changed_before_binding = 0;
  std::string invalidation;  // reason, when recorded
  std::string invalidation_write_failure;  // the state code, when recording it failed
  json::Value drift = json::Value::array();
  json::Value server_info_drift = json::Value::array();
  std::vector<std::string> server_requests;
  std::string live_tool_sha256;
  std::string arguments_digest;  // keyed (EvidenceKey)
  std::string result_digest;     // keyed (EvidenceKey)
  std::string subscription;  // modern era: the tool-list subscription's state
  std::string tool_error_text;  // --diagnostics only: the failed call's own text
  double call_milliseconds = 0;
};

// Errors: input.schema_invalid, input.unsupported_dialect (pointers into the Tool). A schema
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
  auto compiled = std::make_shared<const CompiledTool>(
      CompiledTool{std::move(input), std::move(output), std::move(canonical).value()});
  std::lock_guard<std::mutex> guard(schemas_mutex_);
  if (schemas_.size() >= kMaxCompiledTools) schemas_.clear();
  schemas_.emplace(key, compiled);
  return compiled;
}

Gate::Gate(GateEnvironment environment)
    : env_(std::move(environment)), pool_(env_.max_idle_per_server) {
  if (!env_.manifests) env_.manifests = std::make_shared<manifest::ManifestCache>();
  if (!env_.connect) {
    env_.connect = [](const mcp::ServerConfig& server, const mcp::ClientOptions& options) {
      return mcp::Client::Connect(server, options);
    };
  }
  if (!env_.state) env_.state = std::make_shared<FileStateStore>(env_.state_dir);
}

Gate::~Gate() {
  for (auto& [server, pooled] : pool_.TakeAll()) {
    if (!ClosePooled(server, *pooled, "list_changed_while_idle").ok()) {
      Warn("the invalidation seen on an idle connection could not be recorded");
    }
  }
}

// A list_changed that reached a bound connection while it sat idle is still a change of
// the bound catalog: recorded when the pool lets the connection go, so the next process
// refuses too. Errors: state.write_failed.
Status Gate::ClosePooled(const std::string& server, PooledConnection& pooled, const char* reason) {
  Status recorded = OkStatus();
  if (pooled.idle_watch) pooled.client->connection().RemoveEventObserver(*pooled.idle_watch);
  if (ListChangedSinceBinding(pooled)) {
    recorded = env_.state->Record(pooled.manifest_sha256, server, reason, env_.clock());
    if (env_.on_invalidated) env_.on_invalidated(server, reason);
  }
  pooled.client->Close();
  return recorded;
}

void Gate::Warn(const std::string& text) const { WarnTo(env_.warn, text); }

// Records the run's invalidation durably. The verdict that led here stands whether or not
// the record could be written (a refusal stays a refusal, an indeterminate outcome stays
// indeterminate); a failed write is said in details (stateWriteFailed) and on stderr.
void Gate::RecordInvalidation(Run& run, const char* reason) {
  run.invalidation = reason;
  NoteUnrecorded(run, env_.state->Record(run.manifest->sha256(), run.binding.server, reason, env_.clock()));
  if (env_.on_invalidated) env_.on_invalidated(run.binding.server, reason);
}

void Gate::WatchWhileIdle(const std::string& server, PooledConnection& pooled) {
  if (!pooled.bound_since) return;
  struct Watch {
    std::shared_ptr<StateStore> state;
    std::function<manifest::Seconds()> clock;
    std::function<void(const std::string&, const std::string&)> on_invalidated;
    std::function<void(const std::string&)> warn;
    std::string manifest_sha256;
    std::string server;
    std::once_flag once;
  };
  auto watch = std::make_shared<Watch>();
  watch->state = env_.state;
  watch->clock = env_.clock;
  watch->on_invalidated = env_.on_invalidated;
  watch->warn = env_.warn;
  watch->manifest_sha256 = pooled.manifest_sha256;
  watch->server = server;
  // Captures only shared state: the observer may outlive this gate by a moment.
  pooled.idle_watch = pooled.client->connection().AddEventObserver([watch](const mcp::Event& event) {
    if (!catalog::IsListChanged(event)) return;
    std::call_once(watch->once, [&watch] {
      const char* reason = "list_changed_while_idle";
      if (!watch->state->Record(watch->manifest_sha256, watch->server, reason, watch->clock()).ok()) {
        WarnTo(watch->warn, "the invalidation seen on an idle connection could not be recorded");
      }
      if (watch->on_invalidated) watch->on_invalidated(watch->server, reason);
    });
  });
}

void Gate::NoteUnrecorded(Run& run, const Status& recorded) {
  if (recorded.ok()) return;
  run.invalidation_write_failure = recorded.error().code;
  Warn("the invalidation could not be recorded in the state directory; later processes will not know of it");
}

GateResult Gate::CheckStatic(const manifest::Binding& binding) {
  return Execute(binding, nullptr, CallOptions{}, Reach::kStatic);
}

GateResult Gate::Verify(const manifest::Binding& binding) {
  return Execute(binding, nullptr, CallOptions{}, Reach::kVerify);
}

GateResult Gate::Call(const manifest::Binding& binding, const json::Value& arguments,
                      const CallOptions& options) {
  return Execute(binding, &arguments, options, Reach::kCall);
}

GateResult Gate::Execute(const manifest::Binding& binding, const json::Value* arguments,
                         const CallOptions& options, Reach reach) {
  GateResult result;
  Run run;
  run.binding = binding;
  run.arguments = arguments;
  run.options = options;
  run.result = &result;
  run.reach = reach;

  using StepFn = Status (Gate::*)(Run&);
  std::vector<std::pair<const char*, StepFn>> steps = {
      {"digest", &Gate::StepDigest}, {"static", &Gate::StepStatic}};
  if (reach != Reach::kStatic) {
    steps.insert(steps.end(), {{"connect", &Gate::StepConnect},
                               {"list", &Gate::StepList},
                               {"compare", &Gate::StepCompare},
                               {"arguments", &Gate::StepArguments}});
  }
  if (reach == Reach::kCall) steps.emplace_back("dispatch", &Gate::Dispatch);

  for (const auto& [name, step] : steps) {
    const auto start = Clock::now();
    Status status = (this->*step)(run);
    result.steps.push_back({name, status.ok() ? "ok" : status.error().code, MillisecondsSince(start)});
    if (!status.ok()) {
      result.error = std::move(status).error();
      break;
    }
    if (env_.after_step && run.connection) env_.after_step(name, run.connection->client->connection());
  }
  Finish(run, result);
  return result;
}

Status Gate::StepDigest(Run& run) {
  if (!json::IsSha256Hex(run.binding.manifest_sha256)) {
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

Status Gate::StepStatic(Run& run) {
  const manifest::Manifest& m = *run.manifest;
  UDON_RETURN_IF_ERROR(m.CheckFreshness(env_.clock(), env_.policy));
  auto captured_at = manifest::ParseInstant(m.document().value("capturedAt", ""));
  if (!captured_at.ok()) return Refuse("manifest.incomplete", "capturedAt is missing or malformed", "/capturedAt");
  UDON_ASSIGN_OR_RETURN(bool invalidated,
                        env_.state->IsInvalidated(m.sha256(), run.binding.server, *captured_at));
  if (invalidated) {
    return Refuse("manifest.invalidated",
                  "list_changed was seen for this server at or after this manifest's capture; capture and review again");
  }
  UDON_ASSIGN_OR_RETURN(manifest::BoundTool bound, manifest::SelectBoundTool(run.manifest, run.binding, env_.policy));
  run.location = bound.location;
  run.review = std::move(bound.review);
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

// Errors: input.schema_violation (details.errors: keyword and instance locations only).
Status Gate::ValidateArguments(Run& run) {
  if (run.arguments == nullptr) return OkStatus();
  if (!run.arguments->is_object()) {
    return Refuse("input.schema_violation", "tools/call arguments must be a JSON object");
  }
  schema::ValidationResult validation = run.input_schema->Validate(*run.arguments);
  if (!validation.valid) {
    Error error = Refuse("input.schema_violation", "the arguments do not validate against the reviewed inputSchema");
    error.details["errors"] =
        SchemaErrors(validation, Instance::kArguments, &(*run.location.tool)["inputSchema"], run.arguments);
    if (validation.limit_error) error.details["limit"] = validation.limit_error->code;
    return error;
  }
  return OkStatus();
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

// Contract 6: a pooled connection is reused only while it speaks the manifest's version
// with its serverInfo, is alive, and nothing changed the bound catalog since its binding
// began (JudgeReuse). A list_changed in that time invalidates (the binding began at its
// first comparison, so the proposal's rule applies even while it sat idle between calls).
// Not reused: run.connection stays empty and run.reuse_refused says why.
Status Gate::ReuseFromPool(Run& run, const RecordedServer& recorded) {
  std::unique_ptr<PooledConnection> pooled = pool_.Take(run.binding.server);
  if (!pooled) return OkStatus();
  if (pooled->idle_watch) {
    // In use again: this run's own checks see every event from here on.
    pooled->client->connection().RemoveEventObserver(*pooled->idle_watch);
    pooled->idle_watch.reset();
  }
  const ReuseVerdict verdict =
      JudgeReuse(*pooled, {recorded.protocol_version, recorded.server_info_sha256, run.manifest->sha256()});
  if (verdict.list_changed) {
    // Recorded for the manifest the connection was bound for; this run's refusal follows
    // from it when that is the same manifest, and the run goes on fresh otherwise.
    NoteUnrecorded(run, ClosePooled(run.binding.server, *pooled, "list_changed_between_calls"));
    if (pooled->manifest_sha256 == run.manifest->sha256()) {
      run.reuse_refused = "list_changed";
      run.invalidation = "list_changed_between_calls";
      return Refuse("binding.invalidated", "list_changed arrived on the reused connection after its binding");
    }
    run.reuse_refused = "other_manifest";
    return OkStatus();
  }
  if (!verdict.reusable()) {
    run.reuse_refused = verdict.refused;
    pooled->client->Close();
    return OkStatus();
  }
  run.connection = std::move(pooled);
  run.reused = true;
  run.checked_through = run.connection->client->connection().LastSequence();
  return OkStatus();
}

// Starts or reaches the server (env_.connect). Errors: server.connect_failed (the client's
// own, or details.cause naming the client's code).
Status Gate::OpenFresh(Run& run, const mcp::ServerConfig& server) {
  auto client = env_.connect(server, catalog::ClientOptionsFor(env_.policy, CallTimeout(run.binding.server)));
  if (!client.ok()) {
    // The client's server.connect_failed already says why (a missing command, its OS error).
    if (client.error().code == "server.connect_failed") return std::move(client).error();
    Error error = Refuse("server.connect_failed", "the server could not be started or reached");
    error.details["cause"] = client.error().code;
    return error;
  }
  run.connection = std::make_unique<PooledConnection>();
  run.connection->client = std::move(client).value();
  return OkStatus();
}

// The manifest's revision decides the wire: initialize (legacy) or server/discover
// (modern), at exactly the recorded version. Errors: server.protocol_version_mismatch and
// server.connect_failed (details.recorded, and the server's exit), server.server_info_mismatch
// (discovery named no serverInfo), server.connect_failed (details.cause).
Result<mcp::InitializeResult> Gate::Handshake(Run& run, const RecordedServer& recorded) {
  auto init = run.connection->client->Open(recorded.protocol_version);
  if (init.ok()) return init;
  // The client's contract codes carry the engine's cause (and transportCause) already.
  if (init.error().code == "server.protocol_version_mismatch" || init.error().code == "server.connect_failed") {
    Error error = std::move(init).error();
    error.details["recorded"] = recorded.protocol_version;
    mcp::AddServerExit(error, *run.connection->client);
    return error;
  }
  if (init.error().code == "mcp.server_info_missing") {
    run.server_info_drift = DriftDetails(json::Diff(*recorded.server_info, json::Value()));
    Error error = Refuse("server.server_info_mismatch", "discovery named no serverInfo; the reviewed one is required");
    error.details["pointers"] = run.server_info_drift;
    return error;
  }
  Error error = Refuse("server.connect_failed", mcp::IsModernProtocolVersion(recorded.protocol_version)
                                                    ? "server/discover failed"
                                                    : "initialize failed");
  error.details["cause"] = init.error().code;
  mcp::AddServerExit(error, *run.connection->client);
  return error;
}

// Gate 3: exactly the recorded version and serverInfo. Errors:
// server.protocol_version_mismatch (details.recorded, negotiated), server.server_info_mismatch
// (details.pointers; the values only in for_people).
Status Gate::CheckNegotiated(Run& run, const RecordedServer& recorded, const mcp::InitializeResult& init) {
  if (init.protocol_version != recorded.protocol_version) {
    Error error = Refuse("server.protocol_version_mismatch",
                         "the negotiated protocol version differs from the manifest's");
    error.details = {{"recorded", recorded.protocol_version}, {"negotiated", init.protocol_version}};
    return error;
  }
  if (!json::CanonicallyEqual(init.server_info, *recorded.server_info)) {
    run.server_info_drift = DriftDetails(json::Diff(*recorded.server_info, init.server_info));
    Error error = Refuse("server.server_info_mismatch",
                         "the observed serverInfo differs from the reviewed one");
    error.details["pointers"] = run.server_info_drift;
    // Values stay out of details (--json, evidence): only the text for people shows them.
    run.result->for_people["serverInfo"] = ServerInfoDifferences(*recorded.server_info, init.server_info);
    return error;
  }
  return OkStatus();
}

// Modern era: tool-list changes arrive only on a subscription, so it must stand before
// the listing that the comparison relies on (a no-op for legacy connections).
// Errors: server.connect_failed (details.cause, and the client's details.reason).
Status Gate::SubscribeToToolList(Run& run) {
  Status subscribed = run.connection->client->Subscribe();
  if (subscribed.ok()) return OkStatus();
  Error error = Refuse("server.connect_failed", "the tool-list subscription could not be established");
  error.details["cause"] = subscribed.error().code;
  if (subscribed.error().details.contains("reason")) error.details["reason"] = subscribed.error().details["reason"];
  return error;
}

// Step 3: a pooled connection while it stays eligible, else a fresh one at exactly the
// recorded version and serverInfo, subscribed to the tool list in the modern era.
Status Gate::StepConnect(Run& run) {
  if (env_.config == nullptr) {
    return Refuse("config.server_unknown", "no runtime configuration names this server");
  }
  auto server_config = env_.config->Find(run.binding.server);
  if (!server_config.ok()) return std::move(server_config).error();
  const json::Value& recorded_info = *run.manifest->server_info(run.binding.server);
  const RecordedServer recorded{*run.manifest->protocol_version(), &recorded_info, DigestOrEmpty(recorded_info)};

  if (env_.reuse_connections) {
    UDON_RETURN_IF_ERROR(ReuseFromPool(run, recorded));
    if (run.reused) return OkStatus();
  }
  UDON_RETURN_IF_ERROR(OpenFresh(run, *server_config));
  UDON_ASSIGN_OR_RETURN(mcp::InitializeResult init, Handshake(run, recorded));
  UDON_RETURN_IF_ERROR(CheckNegotiated(run, recorded, init));
  UDON_RETURN_IF_ERROR(SubscribeToToolList(run));
  run.connection->protocol_version = recorded.protocol_version;
  run.connection->server_info_sha256 = recorded.server_info_sha256;
  return OkStatus();
}

Status Gate::StepList(Run& run) {
  // A serialized tool's call holds its lock from before the listing through dispatch, so
  // no other caller's call falls between this call's comparison and its dispatch.
  if (run.arguments != nullptr && run.review.concurrency == manifest::Concurrency::kSerialize) {
    std::string scope = run.binding.server;
    if (run.review.serialize_scope == manifest::SerializeScope::kTool) scope += "\n" + run.binding.tool;
    UDON_ASSIGN_OR_RETURN(run.lock, env_.state->AcquireSerializeLock(
                                        scope, std::chrono::seconds(env_.policy.serialize_timeout_seconds)));
  }
  mcp::Client& client = *run.connection->client;
  catalog::ListingRules rules = catalog::ListingRulesFor(env_.policy, /*for_gate=*/true);
  rules.bound = run.connection->bound_since.has_value();
  // Every Tool's name is read and one Tool's bytes compared: none is built.
  rules.lean = true;
  catalog::ListingFacts facts;
  facts.checked_through = run.checked_through;
  auto pages = catalog::ListStable(client, rules, facts);
  run.listings += facts.listings;
  run.disturbed_listings += facts.disturbed_listings;
  run.list_changed_before_binding += facts.list_changed_before_binding;
  run.server_requests.insert(run.server_requests.end(), facts.server_requests.begin(), facts.server_requests.end());
  run.checked_through = facts.checked_through;
  if (!pages.ok()) {
    Error error = std::move(pages).error();
    if (error.code == "binding.invalidated") {
      RecordInvalidation(run, error.details.value("reason", "list_changed_after_binding").c_str());
    }
    return error;
  }
  return SelectLiveTool(run, *pages);
}

// Step 4's end: the selected tool, by name across every page, exactly once, and its
// canonical bytes for the comparison. The listing was read lean: names and bytes, no Tool
// built (every transport reads a RequestToolList answer lean, see TransportCallbacks).
Status Gate::SelectLiveTool(Run& run, const mcp::ToolPages& pages) {
  std::size_t occurrences = 0;
  std::string_view bytes;
  std::size_t max_depth = json::kDefaultMaxDepth;
  for (const auto& lean : pages.lean) {
    if (lean == nullptr) continue;
    for (const json::RawElement& tool : lean->tools) {
      if (!tool.is_object || tool.name != run.binding.tool) continue;
      if (occurrences++ == 0) {
        bytes = lean->Bytes(tool);
        max_depth = lean->max_depth;
      }
    }
  }
  if (occurrences == 0) return Refuse("catalog.tool_missing", "the selected tool is absent from the live catalog");
  if (occurrences > 1) {
    return Refuse("catalog.tool_duplicate", "the selected tool name occurs more than once in the live catalog");
  }
  json::ParseOptions options;
  options.max_depth = max_depth;
  auto canonical = json::CanonicalizeText(bytes, options);
  // Bytes the listing already accepted cannot fail here; if they did, nothing is forwarded.
  if (!canonical.ok()) return Refuse("catalog.tool_drift", "the live Tool object cannot be canonicalized");
  run.live_tool_canonical = std::move(canonical).value();
  run.live_tool_sha256 = json::Sha256Hex(run.live_tool_canonical);
  run.live_tool_bytes = std::string(bytes);
  return OkStatus();
}

Status Gate::StepCompare(Run& run) {
  if (run.live_tool_canonical != run.compiled->canonical) {
    // Only a drifted Tool is built, for the pointers of its differences.
    auto live = json::Parse(run.live_tool_bytes);
    run.drift = DriftDetails(json::Diff(*run.location.tool, live.ok() ? *live : json::Value()));
    Error error = Refuse("catalog.tool_drift", "the live Tool object differs from the reviewed one");
    error.details["pointers"] = run.drift;
    return error;
  }
  run.bound_sequence = run.checked_through;
  if (!run.connection->bound_since) {
    run.connection->bound_since = run.bound_sequence;
    run.connection->manifest_sha256 = run.manifest->sha256();
  }
  return OkStatus();
}

Status Gate::CheckBindingEvents(Run& run, std::uint64_t after, bool during_call) {
  for (const auto& event : run.connection->client->connection().EventsSince(after)) {
    if (!IsListChanged(event)) continue;
    if (during_call) {
      // Dispatched: the outcome is indeterminate whatever happens to the record. A record
      // that cannot be written is said (details, stderr), never turned into another exit.
      RecordInvalidation(run, "list_changed_during_call");
      Error error = Refuse("call.indeterminate", "list_changed arrived during the call; the result is withheld");
      error.details["reason"] = "list_changed";
      return error;
    }
    RecordInvalidation(run, "list_changed_before_dispatch");
    return Refuse("binding.invalidated", "list_changed arrived after the comparison and before dispatch");
  }
  for (const auto& event : run.connection->client->connection().EventsSince(after)) {
    if (EndsSubscription(event, *run.connection->client)) {
      // Changes can no longer be seen: nothing may be trusted from here on.
      Error error = during_call ? Refuse("call.indeterminate", "the tool-list subscription ended during the call")
                                : Refuse("server.connect_failed", "the tool-list subscription ended before dispatch");
      error.details["reason"] = "subscription_lost";
      return error;
    }
    if (event.kind == mcp::EventKind::kServerRequest) {
      run.server_requests.push_back(event.method);
      return during_call ? Refuse("call.server_request_refused",
                                  "the server asked for sampling, elicitation or roots during the call")
                         : Refuse("server.request_refused",
                                  "the server asked for sampling, elicitation or roots before dispatch");
    }
    if (!during_call && event.kind == mcp::EventKind::kDisconnected) {
      return Refuse("server.connect_failed", "the connection ended before dispatch");
    }
  }
  return OkStatus();
}

// Step 6. The arguments were validated against the reviewed inputSchema in the static
// step; the comparison has since proved the live Tool canonically equal to the reviewed
// one, so its inputSchema is the same and nothing about that verdict can differ. What can
// still change is the connection: the barrier and the event check below.
Status Gate::StepArguments(Run& run) {
  if (run.arguments != nullptr) {
    run.arguments_digest = KeyedDigest(*run.arguments);
    UDON_RETURN_IF_ERROR(Barrier(run));
  }
  Status events = CheckBindingEvents(run, run.bound_sequence, false);
  run.checked_through = run.connection->client->connection().LastSequence();
  return events;
}

// On an ordered transport a ping round trip right before dispatch makes every
// notification the server sent before it visible now, closing the window between the
// comparison and tools/call to what the protocol itself leaves open.
Status Gate::Barrier(Run& run) {
  mcp::Client& client = *run.connection->client;
  if (!client.connection().transport().ordered()) return OkStatus();
  Status pinged = client.Ping(CallTimeout(run.binding.server));
  if (!pinged.ok()) {
    Error error = Refuse("server.connect_failed", "the server did not answer the ping before dispatch");
    error.details["cause"] = pinged.error().details.value("cause", pinged.error().code);
    return error;
  }
  run.barrier = true;
  return OkStatus();
}

// --timeout (env.call_timeout), else the server entry's "timeout" (milliseconds, as MCP
// clients configure it), else the policy's callTimeoutSeconds.
std::chrono::milliseconds Gate::CallTimeout(const std::string& server) const {
  if (env_.call_timeout.count() > 0) return env_.call_timeout;
  if (env_.config != nullptr) {
    auto entry = env_.config->servers.find(server);
    if (entry != env_.config->servers.end() && entry->second.timeout_ms) {
      return std::chrono::milliseconds(*entry->second.timeout_ms);
    }
  }
  return std::chrono::milliseconds(env_.policy.call_timeout_seconds * 1000LL);
}

Status Gate::Dispatch(Run& run) {
  mcp::Client& client = *run.connection->client;
  const auto start = Clock::now();
  run.result->dispatched = true;
  auto outcome = client.CallTool(run.binding.tool, *run.arguments, CallTimeout(run.binding.server), run.location.tool,
                                 run.options.on_progress);
  run.call_milliseconds = MillisecondsSince(start);
  // Anything after the last pre-dispatch examination counts as during the call.
  UDON_RETURN_IF_ERROR(CheckBindingEvents(run, run.checked_through, true));
  if (run.lock) {
    // A lock whose database session ended during the call may have let another runner's
    // call of this serialized tool overlap it: nothing about the outcome can be said.
    Status held = run.lock->StillHeld();
    if (!held.ok()) {
      Error error = Refuse("call.indeterminate", "the serialize lock was lost during the call");
      error.details["cause"] = held.error().code;
      return error;
    }
  }
  if (!outcome.ok()) {
    // The client's verdicts on a result that did arrive stand as they are.
    const Error& failure = outcome.error();
    if (failure.code == "call.protocol_error" || failure.code == "call.server_request_refused" ||
        failure.details.value("reason", "") == "server_info_changed") {
      return std::move(outcome).error();
    }
    Error error = Refuse("call.indeterminate", "the call was dispatched and then timed out or lost its connection");
    // CallTool wraps the engine's code in call.indeterminate: report the engine's code.
    const json::Value& cause = outcome.error().details;
    error.details["cause"] = cause.value("cause", outcome.error().code);
    if (cause.contains("transportCause")) error.details["transportCause"] = cause["transportCause"];
    if (outcome.error().details.contains("reason")) error.details["reason"] = outcome.error().details["reason"];
    return error;
  }
  if (outcome->error) {
    Error error = Refuse("call.protocol_error", "the server answered tools/call with a JSON-RPC error");
    if (outcome->error->contains("code")) error.details["rpcCode"] = (*outcome->error)["code"];
    if (env_.diagnostics && outcome->error->contains("message") && (*outcome->error)["message"].is_string()) {
      run.tool_error_text = mcp::TruncateHead((*outcome->error)["message"].get<std::string>());
    }
    return error;
  }
  const json::Value& result = *outcome->result;
  if (const char* problem = CallResultShapeProblem(result)) return Refuse("call.protocol_error", problem);
  run.result->content_blocks = result["content"].size();
  if (run.options.keep_result) {
    run.result->forwarded = result;
    // Only validated structuredContent is ever handed on (set below, once validated).
    if (run.result->forwarded.is_object()) run.result->forwarded.erase("structuredContent");
  }
  if (auto is_error = result.find("isError"); is_error != result.end() && *is_error == true) {
    Error error = Refuse("call.tool_error", "the tool reported an error; its content is diagnostic only");
    error.details["contentBlocks"] = result["content"].size();
    if (env_.diagnostics) run.tool_error_text = ToolErrorText(result["content"]);
    return error;
  }
  auto structured = result.find("structuredContent");
  if (structured == result.end()) {
    if (run.options.expect_output) {
      return Refuse("call.structured_content_missing", "outputs are expected but the result has no structuredContent");
    }
    return OkStatus();
  }
  run.result_digest = KeyedDigest(*structured);
  if (!run.output_schema) return OkStatus();  // nothing reviewed to validate it against: not exposed
  schema::ValidationResult validation = run.output_schema->Validate(*structured);
  if (!structured->is_object() || !validation.valid) {
    run.result->forwarded = nullptr;
    Error error = Refuse("call.output_schema_violation",
                         "structuredContent does not validate against the reviewed outputSchema");
    error.details["errors"] = SchemaErrors(validation, Instance::kResult);
    return error;
  }
  run.result->output = *structured;
  if (run.options.keep_result) run.result->forwarded["structuredContent"] = *structured;
  return OkStatus();
}

// Before Release: the stderr tail lives with the connection.
void Gate::CollectDiagnostics(Run& run, GateResult& result) {
  if (!env_.diagnostics || !result.error) return;
  mcp::Client* client = run.connection ? run.connection->client.get() : nullptr;
  result.diagnostics = mcp::ConnectionDiagnostics(*result.error, client);
  if (!run.tool_error_text.empty()) {
    result.diagnostics.insert(result.diagnostics.begin(), {"tool error", run.tool_error_text});
  }
  if (!result.diagnostics.empty()) env_.diagnostics(result.diagnostics);
}

void Gate::Release(Run& run, bool keep) {
  run.lock.reset();
  if (!run.connection) return;
  run.connection_stream = run.connection->client->notification_stream();
  if (run.connection->client->initialized() && run.connection->client->initialized()->era == mcp::Era::kModern) {
    run.subscription = mcp::SubscriptionName(run.connection->client->subscription());
  }
  if (keep && env_.reuse_connections && run.connection->client->connection().connected()) {
    // Null once kept; handed back when the server already has a connection kept.
    WatchWhileIdle(run.binding.server, *run.connection);
    PooledConnection* kept = run.connection.get();
    run.connection = pool_.Keep(run.binding.server, std::move(run.connection));
    if (!run.connection) return;
    if (kept->idle_watch) run.connection->client->connection().RemoveEventObserver(*kept->idle_watch);
  }
  run.connection->client->Close();
  run.connection.reset();
}

// Keyed digest for evidence; empty when no key could be had (no digest is then recorded).
// The key is loaded once per gate; the digest itself runs outside the lock, so concurrent
// calls (probe) do not queue behind one another's canonicalization.
std::string Gate::KeyedDigest(const json::Value& value) {
  {
    std::lock_guard<std::mutex> guard(key_mutex_);
    if (!key_loaded_) {
      key_loaded_ = true;
      auto key = EvidenceKey::LoadOrCreate(env_.state_dir);
      if (key.ok()) {
        key_.emplace(std::move(key).value());
      } else {
        Warn("no evidence key in the state directory; argument and result digests are not recorded");
      }
    }
  }
  // key_ is written once, above, under the lock and before any reader gets past it.
  return key_ ? key_->Digest(value) : std::string();
}

std::string Gate::KeyId() {
  std::lock_guard<std::mutex> guard(key_mutex_);
  return key_ ? key_->id() : std::string();
}

EvidenceRecord Gate::MakeRecord(const Run& run, const GateResult& result, const std::string& code) {
  EvidenceRecord record;
  record.steps.emplace();
  double gate_ms = 0;
  for (const auto& step : result.steps) {
    record.steps->push_back({step.step, step.outcome, step.milliseconds});
    if (step.step != "dispatch") gate_ms += step.milliseconds;
  }
  record.time = EvidenceTimestamp();
  record.command = env_.command;
  record.manifest_sha256 = run.manifest ? run.manifest->sha256() : run.binding.manifest_sha256;
  record.pinned_sha256 = run.binding.manifest_sha256;
  record.server = run.binding.server;
  record.tool = run.binding.tool;
  if (!run.options.client.empty()) record.client = run.options.client;
  record.code = code;
  record.exit = DecisionExit(result.error);
  record.dispatched = result.dispatched;
  record.connection = run.reused ? "reused" : "fresh";
  record.barrier = run.barrier;
  record.listings = run.listings;
  record.disturbed_listings = run.disturbed_listings;
  record.list_changed_before_binding = run.list_changed_before_binding;
  record.gate_ms = gate_ms;
  record.call_ms = run.call_milliseconds;
  if (run.manifest && run.manifest->protocol_version()) {
    record.protocol_version = *run.manifest->protocol_version();
    record.era = mcp::EraName(mcp::EraOf(*run.manifest->protocol_version()));
  }
  if (!run.subscription.empty()) record.subscription = run.subscription;
  // Whether (and how) the stdio server runs sandboxed: a refused sandbox never starts one.
  record.sandbox = mcp::SandboxEvidence(env_.config, run.binding.server);
  if (run.review.reviewer.size() > 0) record.model_backed = run.review.model_backed;
  if (!run.invalidation.empty()) record.invalidation = run.invalidation;
  if (!run.drift.empty()) record.drift = run.drift;
  if (!run.server_info_drift.empty()) record.server_info_drift = run.server_info_drift;
  if (!run.server_requests.empty()) record.server_requests = run.server_requests;
  if (!run.live_tool_sha256.empty()) record.live_tool_sha256 = run.live_tool_sha256;
  if (!run.reuse_refused.empty()) record.reuse_refused = run.reuse_refused;
  if (!run.invalidation_write_failure.empty()) record.invalidation_write_failed = run.invalidation_write_failure;
  if (run.connection_stream != mcp::NotificationStream::kNone) {
    record.notification_stream = mcp::NotificationStreamName(run.connection_stream);
  }
  if (!run.arguments_digest.empty()) record.arguments_hmac_sha256 = run.arguments_digest;
  if (!run.result_digest.empty()) record.result_hmac_sha256 = run.result_digest;
  if (!run.arguments_digest.empty() || !run.result_digest.empty()) record.digest_key_id = KeyId();
  if (result.error && result.error->details.contains("cause")) record.cause = result.error->details["cause"];
  if (result.error && result.error->details.contains("reason")) record.reason = result.error->details["reason"];
  return record;
}

void Gate::Finish(Run& run, GateResult& result) {
  if (result.dispatched && result.error && !IsCallFailure(result.error->code) &&
      !IsIndeterminate(result.error->code)) {
    // After dispatch only a failed call (call.*) or an indeterminate outcome is true; anything else
    // (a state or internal error) leaves the outcome unknown, and it must not be retried.
    Error indeterminate = Refuse("call.indeterminate", "the call was dispatched and its outcome cannot be established");
    indeterminate.details["cause"] = result.error->code;
    result.error = std::move(indeterminate);
  }
  if (result.error && !run.invalidation_write_failure.empty()) {
    result.error->details["stateWriteFailed"] = run.invalidation_write_failure;
  }
  std::string code = result.error ? result.error->code : "ok";
  // Keep a connection only if nothing about it is in doubt.
  const bool keep = !result.error || code == "input.schema_violation" || code == "call.tool_error" ||
                    code == "call.output_schema_violation" || code == "call.structured_content_missing";
  CollectDiagnostics(run, result);
  Release(run, keep);

  result.evidence = MakeRecord(run, result, code);
  if (env_.evidence != nullptr && (run.reach != Reach::kStatic || result.error)) {
    (void)env_.evidence->Append(result.evidence.ToJson());  // evidence loss never changes the outcome
  }
}

}  // namespace udon::gate
