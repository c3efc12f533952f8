// Dispatch and finish: tools/call and the judgement of its result (contract 4, call
// semantics), then the connection kept or closed and the value-free evidence record.
#include "gate/gate.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <string_view>
#include <utility>

#include "gate/evidence_key.h"
#include "gate/internal/details.h"
#include "gate/internal/run.h"
#include "gate/state_store.h"
#include "mcp/client/least_privilege.h"
#include "mcp/client/www_authenticate.h"

namespace udon::gate {

using internal::Clock;
using internal::Instance;
using internal::MillisecondsSince;
using internal::Refuse;
using internal::SchemaErrors;

namespace {

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

// A result's content block types by count, for evidence. Only the protocol's own type
// names are kept: any other `type` string is the server's choice and could carry a value.
json::Value ContentTypeCounts(const json::Value& content) {
  static constexpr std::array<std::string_view, 5> kKnown = {"text", "image", "audio", "resource_link", "resource"};
  json::Value counts = json::Value::object();
  for (const json::Value& block : content) {
    const std::string& type = block["type"].get_ref<const std::string&>();
    const bool known = std::find(kKnown.begin(), kKnown.end(), type) != kKnown.end();
    const std::string key = known ? type : "other";
    counts[key] = counts.value(key, 0) + 1;
  }
  return counts;
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

}  // namespace

Status Gate::Dispatch(Run& run) {
  mcp::Client& client = *run.connection->client;
  // The last look, with nothing between it and the send: what arrived since step 6 (on a
  // shared connection, a notice another call's dispatch drew) refuses this call.
  UDON_RETURN_IF_ERROR(CheckBindingEvents(run, run.checked_through, false));
  const auto start = Clock::now();
  run.result->dispatched = true;
  auto outcome = client.CallTool(run.binding.tool, *run.arguments, CallTimeout(run.binding.server), run.location.tool,
                                 run.options.on_progress, &run.options.trace);
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
  if (!outcome.ok() && mcp::RefusedCredentialStatus(outcome.error())) {
    // A 401 or 403 answered before the server processed the call: no dispatch, known not
    // to have run (contract 7.23), so the run may start again from the re-list.
    run.result->dispatched = false;
    return std::move(outcome).error();
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
  run.content_types = ContentTypeCounts(result["content"]);
  run.has_structured_content = result.contains("structuredContent");
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
  if (run.lane && !LeaveLane(run, keep)) return;  // other calls still use the shared connection
  if (keep && env_.reuse_connections && run.connection->client->connection().connected()) {
    // Null once kept; handed back when the server already has a connection kept.
    WatchWhileIdle(run.binding.server, *run.connection);
    PooledConnection* kept = run.connection.get();
    run.connection = pool_.Keep(run.binding.server, std::move(run.connection));
    if (!run.connection) {
      CloseIdle(pool_.TakeExpired());  // after a burst, the connections no call took since
      return;
    }
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
  if (!run.options.caller.empty()) {
    // The subject keyed like a value: a shared evidence file names no one outright.
    std::string caller = KeyedDigest(json::Value(run.options.caller));
    if (!caller.empty()) record.caller_hmac_sha256 = std::move(caller);
  }
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
  record.content_types = run.content_types;
  record.has_structured_content = run.has_structured_content;
  if (!run.arguments_digest.empty() || !run.result_digest.empty() || record.caller_hmac_sha256) {
    record.digest_key_id = KeyId();
  }
  record.store_tls = env_.state->WeakenedTls();
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
