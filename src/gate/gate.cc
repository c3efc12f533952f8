#include "gate/gate.h"

#include <algorithm>
#include <utility>

#include "gate/state.h"
#include "json/diff.h"
#include "json/file.h"
#include "json/pointer.h"
#include "json/sha256.h"
#include "manifest/diff.h"
#include "manifest/manifest.h"
#include "manifest/review.h"
#include "mcp/least_privilege.h"
#include "mcp/param_headers.h"
#include "schema/schema.h"

namespace udon::gate {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kListChanged = "notifications/tools/list_changed";
constexpr int kMaxDisturbedListings = 3;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Error Refuse(const char* code, const char* message, std::string pointer = {}) {
  return MakeError(code, message, std::move(pointer));
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

// Basic-output units without anything from the instance but its locations.
json::Value SchemaErrors(const schema::ValidationResult& result) {
  json::Value errors = json::Value::array();
  for (const auto& unit : result.errors) {
    errors.push_back({{"keywordLocation", unit.keyword_location},
                      {"instanceLocation", unit.instance_location},
                      {"error", unit.error}});
    if (errors.size() >= 50) break;
  }
  return errors;
}

// Whether an event ends the modern era's tool-list subscription of this connection.
bool EndsSubscription(const mcp::Event& event, const mcp::Client& client) {
  return event.kind == mcp::EventKind::kStreamEnded && client.subscription_id() &&
         event.id == json::Value(*client.subscription_id());
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

int ExitCodeFor(const std::string& code) {
  static const std::map<std::string, int, std::less<>> kExplicit = {
      {"manifest.unreadable", 2}, {"manifest.invalid", 2},  {"config.server_unknown", 2},
      {"config.invalid", 2},      {"config.unreadable", 2}, {"policy.invalid", 2},
      {"usage.invalid", 2},       {"uws.invalid", 2},       {"uws.unsupported", 2},
      {"io.unreadable", 2},       {"io.too_large", 2},      {"state.unavailable", 2},
      {"call.indeterminate", 5},  {"content_trust.blocked", 3}, {"probe.side_effects_refused", 3},
  };
  if (auto it = kExplicit.find(code); it != kExplicit.end()) return it->second;
  // Unreadable or malformed input of any kind.
  for (const char* prefix : {"io.", "json.", "yaml.", "usage.", "config.", "policy."}) {
    if (code.rfind(prefix, 0) == 0) return 2;
  }
  if (code.rfind("call.", 0) == 0) return 4;
  for (const char* prefix : {"manifest.", "review.", "server.", "catalog.", "binding.", "input."}) {
    if (code.rfind(prefix, 0) == 0) return 3;
  }
  return 1;
}

struct Gate::Pooled {
  std::unique_ptr<mcp::Client> client;
  std::string protocol_version;
  std::string server_info_sha256;
  std::uint64_t bound_since = 0;  // first successful comparison on this connection
};

struct Gate::Run {
  Binding binding;
  const json::Value* arguments = nullptr;
  CallOptions options;
  GateResult* result = nullptr;

  std::shared_ptr<const manifest::Manifest> manifest;
  manifest::ToolLocation location;
  manifest::Review review;
  std::optional<schema::CompiledSchema> input_schema;
  std::optional<schema::CompiledSchema> output_schema;

  std::unique_ptr<Pooled> connection;
  bool reused = false;
  std::uint64_t checked_through = 0;  // events up to here were examined before binding
  std::uint64_t bound_sequence = 0;
  std::unique_ptr<SerializeLock> lock;
  json::Value live_tool;

  // Evidence facts.
  int listings = 0;
  int disturbed_listings = 0;
  int list_changed_before_binding = 0;
  std::string invalidation;  // reason, when recorded
  json::Value drift = json::Value::array();
  json::Value server_info_drift = json::Value::array();
  std::vector<std::string> server_requests;
  std::string live_tool_sha256;
  std::string arguments_sha256;
  std::string result_sha256;
  std::string subscription;  // modern era: the tool-list subscription's state
  double call_milliseconds = 0;
};

Gate::Gate(GateEnvironment environment) : env_(std::move(environment)) {
  if (!env_.connect) {
    env_.connect = [](const mcp::ServerConfig& server, const mcp::ClientOptions& options) {
      return mcp::Client::Connect(server, options);
    };
  }
}

Gate::~Gate() {
  std::lock_guard<std::mutex> guard(pool_mutex_);
  for (auto& [server, pooled] : pool_) pooled->client->Close();
}

GateResult Gate::Verify(const Binding& binding) { return Execute(binding, nullptr, CallOptions{}); }

GateResult Gate::Call(const Binding& binding, const json::Value& arguments,
                      const CallOptions& options) {
  return Execute(binding, &arguments, options);
}

GateResult Gate::Execute(const Binding& binding, const json::Value* arguments,
                         const CallOptions& options) {
  GateResult result;
  Run run;
  run.binding = binding;
  run.arguments = arguments;
  run.options = options;
  run.result = &result;

  using StepFn = Status (Gate::*)(Run&);
  std::vector<std::pair<const char*, StepFn>> steps = {
      {"digest", &Gate::StepDigest},   {"static", &Gate::StepStatic},
      {"connect", &Gate::StepConnect}, {"list", &Gate::StepList},
      {"compare", &Gate::StepCompare}, {"arguments", &Gate::StepArguments}};
  if (arguments != nullptr) steps.emplace_back("dispatch", &Gate::Dispatch);

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
  // Every call reads the file and hashes its bytes; only bytes already parsed and
  // canonicalized by this gate skip that work (same bytes, same canonical digest).
  auto text = json::ReadFile(run.binding.manifest_path);
  if (!text.ok()) return text.error().WithCode("manifest.unreadable");
  const std::string raw_sha256 = json::Sha256Hex(*text);
  {
    std::lock_guard<std::mutex> guard(manifest_mutex_);
    auto cached = manifests_.find(run.binding.manifest_path);
    if (cached != manifests_.end() && cached->second.first == raw_sha256) run.manifest = cached->second.second;
  }
  if (!run.manifest) {
    auto loaded = manifest::Manifest::FromText(*text);
    if (!loaded.ok()) return std::move(loaded).error();
    run.manifest = std::make_shared<const manifest::Manifest>(std::move(loaded).value());
    std::lock_guard<std::mutex> guard(manifest_mutex_);
    manifests_[run.binding.manifest_path] = {raw_sha256, run.manifest};
  }
  if (run.manifest->sha256() != run.binding.manifest_sha256) {
    Error error = Refuse("manifest.digest_mismatch",
                         "the manifest's canonical SHA-256 differs from the pinned one");
    error.details = {{"pinned", run.binding.manifest_sha256}, {"actual", run.manifest->sha256()}};
    return error;
  }
  return OkStatus();
}

Status Gate::StepStatic(Run& run) {
  const manifest::Manifest& m = *run.manifest;
  UDON_RETURN_IF_ERROR(m.CheckFreshness(env_.clock(), env_.policy));
  if (InvalidationStore(env_.state_dir).IsInvalidated(m.sha256(), run.binding.server)) {
    return Refuse("manifest.invalidated",
                  "list_changed was seen earlier for this manifest and server; capture and review again");
  }
  UDON_ASSIGN_OR_RETURN(run.location, manifest::SelectTool(m, run.binding.server, run.binding.tool));
  const json::Value* review_json = m.review(run.binding.server, run.binding.tool);
  const std::string review_pointer = "/servers/" + json::Pointer::EscapeToken(run.binding.server) +
                                     "/reviews/" + json::Pointer::EscapeToken(run.binding.tool);
  if (review_json == nullptr) return Refuse("review.missing", "the selected tool has no review", review_pointer);
  auto review = manifest::ValidateReview(*review_json, env_.policy);
  if (!review.ok()) return std::move(review).error().AtPrefix(review_pointer);
  run.review = std::move(review).value();
  const json::Value& tool = *run.location.tool;
  Status against_tool = manifest::ValidateReviewAgainstTool(run.review, tool);
  if (!against_tool.ok()) return std::move(against_tool).error();
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
  UDON_ASSIGN_OR_RETURN(auto input_schema, CompileToolSchema(tool, "inputSchema"));
  run.input_schema.emplace(std::move(input_schema));
  if (has_output_schema) {
    UDON_ASSIGN_OR_RETURN(auto output_schema, CompileToolSchema(tool, "outputSchema"));
    run.output_schema.emplace(std::move(output_schema));
  }
  return CheckParamHeaders(run);
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

Status Gate::StepConnect(Run& run) {
  if (env_.config == nullptr) {
    return Refuse("config.server_unknown", "no runtime configuration names this server");
  }
  auto server_config = env_.config->Find(run.binding.server);
  if (!server_config.ok()) return std::move(server_config).error();
  const std::string recorded_version = *run.manifest->protocol_version();
  const json::Value& recorded_info = *run.manifest->server_info(run.binding.server);
  const std::string recorded_info_sha = DigestOrEmpty(recorded_info);

  if (env_.reuse_connections) {
    std::lock_guard<std::mutex> guard(pool_mutex_);
    auto it = pool_.find(run.binding.server);
    if (it != pool_.end()) {
      std::unique_ptr<Pooled> pooled = std::move(it->second);
      pool_.erase(it);
      // Contract 6: same version, same serverInfo, alive, and no list_changed since the
      // first successful comparison on it.
      bool eligible = pooled->protocol_version == recorded_version &&
                      pooled->server_info_sha256 == recorded_info_sha &&
                      pooled->client->connection().connected();
      bool list_changed = false;
      for (const auto& event : pooled->client->connection().EventsSince(pooled->bound_since)) {
        if (event.kind == mcp::EventKind::kNotification && event.method == kListChanged) list_changed = true;
        if (event.kind == mcp::EventKind::kDisconnected) eligible = false;
        if (EndsSubscription(event, *pooled->client)) eligible = false;
      }
      if (list_changed) {
        // The binding on this connection began at its first comparison: the proposal's
        // rule applies even while it sat idle between calls.
        pooled->client->Close();
        run.invalidation = "list_changed_between_calls";
        UDON_RETURN_IF_ERROR(InvalidationStore(env_.state_dir)
                                 .Record(run.manifest->sha256(), run.binding.server, run.invalidation));
        return Refuse("binding.invalidated", "list_changed arrived on the reused connection after its binding");
      }
      if (eligible) {
        run.connection = std::move(pooled);
        run.reused = true;
        run.checked_through = run.connection->client->connection().LastSequence();
        return OkStatus();
      }
      pooled->client->Close();
    }
  }

  mcp::ClientOptions options;
  options.request_timeout = env_.call_timeout.count() > 0
                                ? env_.call_timeout
                                : std::chrono::milliseconds(env_.policy.call_timeout_seconds * 1000LL);
  options.max_message_bytes = env_.policy.max_message_bytes;
  auto client = env_.connect(*server_config, options);
  if (!client.ok()) {
    Error error = Refuse("server.connect_failed", "the server could not be started or reached");
    error.details["cause"] = client.error().code;
    return error;
  }
  run.connection = std::make_unique<Pooled>();
  run.connection->client = std::move(client).value();
  // The manifest's revision decides the wire: initialize (legacy) or server/discover (modern).
  auto init = run.connection->client->Open(recorded_version);
  if (!init.ok()) {
    // The client's contract codes carry the engine's cause (and transportCause) already.
    if (init.error().code == "server.protocol_version_mismatch" || init.error().code == "server.connect_failed") {
      Error error = std::move(init).error();
      error.details["recorded"] = recorded_version;
      return error;
    }
    if (init.error().code == "mcp.server_info_missing") {
      run.server_info_drift = DriftDetails(json::Diff(recorded_info, json::Value()));
      Error error = Refuse("server.server_info_mismatch", "discovery named no serverInfo; the reviewed one is required");
      error.details["pointers"] = run.server_info_drift;
      return error;
    }
    Error error = Refuse("server.connect_failed",
                         mcp::IsModernProtocolVersion(recorded_version) ? "server/discover failed" : "initialize failed");
    error.details["cause"] = init.error().code;
    return error;
  }
  if (init->protocol_version != recorded_version) {
    Error error = Refuse("server.protocol_version_mismatch",
                         "the negotiated protocol version differs from the manifest's");
    error.details = {{"recorded", recorded_version}, {"negotiated", init->protocol_version}};
    return error;
  }
  if (!json::CanonicallyEqual(init->server_info, recorded_info)) {
    run.server_info_drift = DriftDetails(json::Diff(recorded_info, init->server_info));
    Error error = Refuse("server.server_info_mismatch",
                         "the observed serverInfo differs from the reviewed one");
    error.details["pointers"] = run.server_info_drift;
    return error;
  }
  // Modern era: tool-list changes arrive only on a subscription, so it must stand before
  // the listing that the comparison relies on.
  Status subscribed = run.connection->client->Subscribe();
  if (!subscribed.ok()) {
    Error error = Refuse("server.connect_failed", "the tool-list subscription could not be established");
    error.details["cause"] = subscribed.error().code;
    if (subscribed.error().details.contains("reason")) error.details["reason"] = subscribed.error().details["reason"];
    return error;
  }
  run.connection->protocol_version = recorded_version;
  run.connection->server_info_sha256 = recorded_info_sha;
  return OkStatus();
}

Status Gate::StepList(Run& run) {
  mcp::Client& client = *run.connection->client;
  for (;;) {
    const std::uint64_t before = client.connection().LastSequence();
    auto pages = client.ListAllTools(env_.policy.max_pages);
    ++run.listings;
    if (!pages.ok()) {
      // Contract codes (a malformed page, a modern result breaking the rules) stand as they are.
      const std::string& code = pages.error().code;
      if (code.rfind("catalog.", 0) == 0 || code.rfind("server.", 0) == 0) return std::move(pages).error();
      Error error = Refuse("server.connect_failed", "the live tools/list failed");
      error.details["cause"] = pages.error().code;
      if (pages.error().details.contains("cause")) error.details["transportCause"] = pages.error().details["cause"];
      return error;
    }
    // Everything that arrived since the last examination, through now: a list_changed
    // up to this point only forces a fresh listing (unless policy is strict).
    bool disturbed = false;
    const std::uint64_t through = client.connection().LastSequence();
    for (const auto& event : client.connection().EventsSince(run.checked_through)) {
      if (event.sequence > through) break;
      if (event.kind == mcp::EventKind::kServerRequest) {
        run.server_requests.push_back(event.method);
        return Refuse("server.request_refused",
                      "the server asked for sampling, elicitation or roots before dispatch");
      }
      if (EndsSubscription(event, client)) {
        Error error = Refuse("server.connect_failed", "the tool-list subscription ended during the listing");
        error.details["reason"] = "subscription_lost";
        return error;
      }
      if (event.kind == mcp::EventKind::kNotification && event.method == kListChanged) {
        ++run.list_changed_before_binding;
        if (event.sequence > before) disturbed = true;
        if (env_.policy.strict_list_changed) {
          run.invalidation = "strict_notification";
          UDON_RETURN_IF_ERROR(InvalidationStore(env_.state_dir)
                                   .Record(run.manifest->sha256(), run.binding.server, run.invalidation));
          return Refuse("binding.invalidated",
                        "list_changed arrived on this connection and policy strictListChanged is on");
        }
      }
    }
    run.checked_through = through;
    if (disturbed) {
      ++run.disturbed_listings;
      if (run.disturbed_listings >= kMaxDisturbedListings) {
        return Refuse("catalog.unstable", "list_changed kept arriving during 3 listings in a row");
      }
      continue;
    }
    std::vector<const json::Value*> found;
    for (const json::Value& page : pages->pages) {
      auto tools = page.find("tools");
      if (tools == page.end() || !tools->is_array()) continue;
      for (const json::Value& tool : *tools) {
        if (tool.is_object() && tool.contains("name") && tool["name"] == run.binding.tool) {
          found.push_back(&tool);
        }
      }
    }
    if (found.empty()) return Refuse("catalog.tool_missing", "the selected tool is absent from the live catalog");
    if (found.size() > 1) {
      return Refuse("catalog.tool_duplicate", "the selected tool name occurs more than once in the live catalog");
    }
    run.live_tool = *found.front();
    run.live_tool_sha256 = DigestOrEmpty(run.live_tool);
    return OkStatus();
  }
}

Status Gate::StepCompare(Run& run) {
  const json::Value& reviewed = *run.location.tool;
  if (!json::CanonicallyEqual(run.live_tool, reviewed)) {
    run.drift = DriftDetails(json::Diff(reviewed, run.live_tool));
    Error error = Refuse("catalog.tool_drift", "the live Tool object differs from the reviewed one");
    error.details["pointers"] = run.drift;
    return error;
  }
  run.bound_sequence = run.checked_through;
  if (run.connection->bound_since == 0) run.connection->bound_since = run.bound_sequence;
  return OkStatus();
}

Status Gate::CheckBindingEvents(Run& run, std::uint64_t after, bool during_call) {
  for (const auto& event : run.connection->client->connection().EventsSince(after)) {
    if (event.kind == mcp::EventKind::kNotification && event.method == kListChanged) {
      run.invalidation = during_call ? "list_changed_during_call" : "list_changed_before_dispatch";
      UDON_RETURN_IF_ERROR(InvalidationStore(env_.state_dir)
                               .Record(run.manifest->sha256(), run.binding.server, run.invalidation));
      if (during_call) {
        Error error = Refuse("call.indeterminate",
                             "list_changed arrived during the call; the result is withheld");
        error.details["reason"] = "list_changed";
        return error;
      }
      return Refuse("binding.invalidated", "list_changed arrived after the comparison and before dispatch");
    }
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

Status Gate::StepArguments(Run& run) {
  if (run.arguments != nullptr) {
    if (!run.arguments->is_object()) {
      return Refuse("input.schema_violation", "tools/call arguments must be a JSON object");
    }
    schema::ValidationResult validation = run.input_schema->Validate(*run.arguments);
    if (!validation.valid) {
      Error error = Refuse("input.schema_violation",
                           "the arguments do not validate against the reviewed inputSchema");
      error.details["errors"] = SchemaErrors(validation);
      if (validation.limit_error) error.details["limit"] = validation.limit_error->code;
      return error;
    }
    run.arguments_sha256 = DigestOrEmpty(*run.arguments);
    if (run.review.concurrency == manifest::Concurrency::kSerialize) {
      std::string scope = run.binding.server;
      if (run.review.serialize_scope == manifest::SerializeScope::kTool) scope += "\n" + run.binding.tool;
      UDON_ASSIGN_OR_RETURN(run.lock, SerializeLock::Acquire(env_.state_dir, scope));
    }
  }
  Status events = CheckBindingEvents(run, run.bound_sequence, false);
  run.checked_through = run.connection->client->connection().LastSequence();
  return events;
}

Status Gate::Dispatch(Run& run) {
  mcp::Client& client = *run.connection->client;
  const auto start = Clock::now();
  run.result->dispatched = true;
  auto outcome = client.CallTool(run.binding.tool, *run.arguments,
                                 env_.call_timeout.count() > 0
                                     ? env_.call_timeout
                                     : std::chrono::milliseconds(env_.policy.call_timeout_seconds * 1000LL),
                                 run.location.tool);
  run.call_milliseconds = MillisecondsSince(start);
  // Anything after the last pre-dispatch examination counts as during the call.
  UDON_RETURN_IF_ERROR(CheckBindingEvents(run, run.checked_through, true));
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
    return error;
  }
  const json::Value& result = *outcome->result;
  if (!result.is_object() || !result.contains("content") || !result["content"].is_array()) {
    return Refuse("call.protocol_error", "the tools/call result is malformed (no content array)");
  }
  if (auto is_error = result.find("isError"); is_error != result.end() && *is_error == true) {
    Error error = Refuse("call.tool_error", "the tool reported an error; its content is diagnostic only");
    error.details["contentBlocks"] = result["content"].size();
    return error;
  }
  auto structured = result.find("structuredContent");
  if (structured == result.end()) {
    if (run.options.expect_output) {
      return Refuse("call.structured_content_missing", "outputs are expected but the result has no structuredContent");
    }
    return OkStatus();
  }
  run.result_sha256 = DigestOrEmpty(*structured);
  if (!run.output_schema) return OkStatus();  // nothing reviewed to validate it against: not exposed
  schema::ValidationResult validation = run.output_schema->Validate(*structured);
  if (!structured->is_object() || !validation.valid) {
    Error error = Refuse("call.output_schema_violation",
                         "structuredContent does not validate against the reviewed outputSchema");
    error.details["errors"] = SchemaErrors(validation);
    return error;
  }
  run.result->output = *structured;
  return OkStatus();
}

void Gate::Release(Run& run, bool keep) {
  run.lock.reset();
  if (!run.connection) return;
  if (run.connection->client->initialized() && run.connection->client->initialized()->era == mcp::Era::kModern) {
    run.subscription = mcp::SubscriptionName(run.connection->client->subscription());
  }
  if (keep && env_.reuse_connections && run.connection->client->connection().connected()) {
    std::lock_guard<std::mutex> guard(pool_mutex_);
    auto& slot = pool_[run.binding.server];
    if (!slot) {
      slot = std::move(run.connection);
      return;
    }
  }
  run.connection->client->Close();
  run.connection.reset();
}

void Gate::Finish(Run& run, GateResult& result) {
  std::string code = result.error ? result.error->code : "ok";
  result.exit_code = result.error ? ExitCodeFor(code) : 0;
  // A manifest that cannot be trusted refuses the call: before dispatch that is exit 3.
  if (code == "manifest.invalid") result.exit_code = 3;
  // Keep a connection only if nothing about it is in doubt.
  const bool keep = !result.error || code == "input.schema_violation" || code == "call.tool_error" ||
                    code == "call.output_schema_violation" || code == "call.structured_content_missing";
  Release(run, keep);

  json::Value steps = json::Value::array();
  double gate_ms = 0;
  for (const auto& step : result.steps) {
    steps.push_back({{"step", step.step}, {"outcome", step.outcome}, {"ms", step.milliseconds}});
    if (step.step != "dispatch") gate_ms += step.milliseconds;
  }
  json::Value record = {{"time", EvidenceTimestamp()},
                        {"command", env_.command},
                        {"manifestSha256", run.manifest ? run.manifest->sha256() : run.binding.manifest_sha256},
                        {"pinnedSha256", run.binding.manifest_sha256},
                        {"server", run.binding.server},
                        {"tool", run.binding.tool},
                        {"steps", steps},
                        {"code", code},
                        {"exit", result.exit_code},
                        {"dispatched", result.dispatched},
                        {"connection", run.reused ? "reused" : "fresh"},
                        {"listings", run.listings},
                        {"disturbedListings", run.disturbed_listings},
                        {"listChangedBeforeBinding", run.list_changed_before_binding},
                        {"gateMs", gate_ms},
                        {"callMs", run.call_milliseconds}};
  if (run.manifest && run.manifest->protocol_version()) {
    record["protocolVersion"] = *run.manifest->protocol_version();
    record["era"] = mcp::EraName(mcp::EraOf(*run.manifest->protocol_version()));
  }
  if (!run.subscription.empty()) record["subscription"] = run.subscription;
  // Whether (and how) the stdio server runs sandboxed: a refused sandbox never starts one.
  json::Value sandbox = mcp::SandboxEvidence(env_.config, run.binding.server);
  if (!sandbox.is_null()) record["sandbox"] = std::move(sandbox);
  if (run.review.reviewer.size() > 0) record["modelBacked"] = run.review.model_backed;
  if (!run.invalidation.empty()) record["invalidation"] = run.invalidation;
  if (!run.drift.empty()) record["drift"] = run.drift;
  if (!run.server_info_drift.empty()) record["serverInfoDrift"] = run.server_info_drift;
  if (!run.server_requests.empty()) record["serverRequests"] = run.server_requests;
  if (!run.live_tool_sha256.empty()) record["liveToolSha256"] = run.live_tool_sha256;
  if (!run.arguments_sha256.empty()) record["argumentsSha256"] = run.arguments_sha256;
  if (!run.result_sha256.empty()) record["resultSha256"] = run.result_sha256;
  if (result.error && result.error->details.contains("cause")) record["cause"] = result.error->details["cause"];
  if (result.error && result.error->details.contains("reason")) record["reason"] = result.error->details["reason"];
  result.evidence = std::move(record);
  if (env_.evidence != nullptr) {
    (void)env_.evidence->Append(result.evidence);  // evidence loss never changes the outcome
  }
}

}  // namespace udon::gate
