#include "gate/evidence_record.h"

#include "json/access.h"

namespace udon::gate {
namespace {

// Writing: a member only when it is set.
template <typename T>
void Put(json::Value& out, const char* name, const std::optional<T>& value) {
  if (value) out[name] = *value;
}

void Put(json::Value& out, const char* name, const json::Value& value) {
  if (!value.is_null()) out[name] = value;
}

// Reading (see the header): strings of the wrong type are present and empty; numbers and
// booleans of the wrong type are absent.
std::optional<std::string> ReadString(const json::Value& in, const char* name) {
  const json::Value* value = json::Member(in, name);
  if (value == nullptr) return std::nullopt;
  return value->is_string() ? value->get<std::string>() : std::string();
}

std::optional<int> ReadInt(const json::Value& in, const char* name) {
  const json::Value* value = json::Member(in, name);
  if (value == nullptr || !value->is_number_integer()) return std::nullopt;
  return value->get<int>();
}

std::optional<double> ReadDouble(const json::Value& in, const char* name) {
  const json::Value* value = json::Member(in, name);
  if (value == nullptr || !value->is_number()) return std::nullopt;
  return value->get<double>();
}

std::optional<bool> ReadBool(const json::Value& in, const char* name) {
  const json::Value* value = json::Member(in, name);
  if (value == nullptr || !value->is_boolean()) return std::nullopt;
  return value->get<bool>();
}

json::Value ReadValue(const json::Value& in, const char* name) {
  const json::Value* value = json::Member(in, name);
  return value == nullptr ? json::Value() : *value;
}

json::Value StepsToJson(const std::vector<EvidenceStep>& steps) {
  json::Value out = json::Value::array();
  for (const EvidenceStep& step : steps) {
    json::Value entry = {{"step", step.step}};
    Put(entry, "outcome", step.outcome);
    Put(entry, "ms", step.ms);
    out.push_back(std::move(entry));
  }
  return out;
}

// Entries that are not objects are skipped: they name no step.
std::optional<std::vector<EvidenceStep>> ReadSteps(const json::Value& in) {
  const json::Value* steps = json::Member(in, "steps");
  if (steps == nullptr) return std::nullopt;
  std::vector<EvidenceStep> out;
  if (!steps->is_array()) return out;
  for (const json::Value& entry : *steps) {
    if (!entry.is_object()) continue;
    out.push_back({ReadString(entry, "step").value_or(""), ReadString(entry, "outcome"), ReadDouble(entry, "ms")});
  }
  return out;
}

json::Value ProbeToJson(const ProbeFacts& probe) {
  json::Value out = {{"run", probe.run}, {"connections", probe.connections}, {"overlapped", probe.overlapped}};
  Put(out, "repetition", probe.repetition);
  Put(out, "repeat", probe.repeat);
  Put(out, "concurrency", probe.concurrency);
  return out;
}

std::optional<ProbeFacts> ReadProbe(const json::Value& in) {
  const json::Value* probe = json::ObjectMember(in, "probe");
  if (probe == nullptr) return std::nullopt;
  ProbeFacts facts;
  facts.run = json::StringMember(*probe, "run");
  facts.repetition = ReadInt(*probe, "repetition");
  facts.repeat = ReadInt(*probe, "repeat");
  facts.concurrency = ReadInt(*probe, "concurrency");
  facts.connections = json::StringMember(*probe, "connections");
  facts.overlapped = ReadBool(*probe, "overlapped").value_or(false);
  return facts;
}

std::optional<std::vector<std::string>> ReadStrings(const json::Value& in, const char* name) {
  const json::Value* list = json::ArrayMember(in, name);
  if (list == nullptr) return std::nullopt;
  std::vector<std::string> out;
  for (const json::Value& entry : *list) out.push_back(entry.is_string() ? entry.get<std::string>() : std::string());
  return out;
}

}  // namespace

json::Value EvidenceRecord::ToJson() const {
  json::Value out = json::Value::object();
  Put(out, "time", time);
  Put(out, "command", command);
  Put(out, "manifestSha256", manifest_sha256);
  Put(out, "pinnedSha256", pinned_sha256);
  Put(out, "server", server);
  Put(out, "tool", tool);
  if (steps) out["steps"] = StepsToJson(*steps);
  Put(out, "code", code);
  Put(out, "exit", exit);
  Put(out, "dispatched", dispatched);
  Put(out, "connection", connection);
  Put(out, "barrier", barrier);
  Put(out, "listings", listings);
  Put(out, "disturbedListings", disturbed_listings);
  Put(out, "listChangedBeforeBinding", list_changed_before_binding);
  Put(out, "gateMs", gate_ms);
  Put(out, "callMs", call_ms);
  Put(out, "protocolVersion", protocol_version);
  Put(out, "era", era);
  Put(out, "subscription", subscription);
  Put(out, "sandbox", sandbox);
  Put(out, "modelBacked", model_backed);
  Put(out, "invalidation", invalidation);
  Put(out, "drift", drift);
  Put(out, "serverInfoDrift", server_info_drift);
  Put(out, "serverRequests", server_requests);
  Put(out, "liveToolSha256", live_tool_sha256);
  Put(out, "reuseRefused", reuse_refused);
  Put(out, "invalidationWriteFailed", invalidation_write_failed);
  Put(out, "notificationStream", notification_stream);
  Put(out, "argumentsHmacSha256", arguments_hmac_sha256);
  Put(out, "resultHmacSha256", result_hmac_sha256);
  Put(out, "digestKeyId", digest_key_id);
  Put(out, "cause", cause);
  Put(out, "reason", reason);
  Put(out, "argumentsSha256", arguments_sha256);
  Put(out, "resultSha256", result_sha256);
  Put(out, "negotiation", negotiation);
  if (probe) out["probe"] = ProbeToJson(*probe);
  return out;
}

EvidenceRecord EvidenceRecord::FromJson(const json::Value& in) {
  EvidenceRecord r;
  if (!in.is_object()) return r;
  r.time = ReadString(in, "time");
  r.command = ReadString(in, "command");
  r.manifest_sha256 = ReadString(in, "manifestSha256");
  r.pinned_sha256 = ReadString(in, "pinnedSha256");
  r.server = ReadString(in, "server");
  r.tool = ReadString(in, "tool");
  r.steps = ReadSteps(in);
  r.code = ReadString(in, "code");
  r.exit = ReadInt(in, "exit");
  r.dispatched = ReadBool(in, "dispatched");
  r.connection = ReadString(in, "connection");
  r.barrier = ReadBool(in, "barrier");
  r.listings = ReadInt(in, "listings");
  r.disturbed_listings = ReadInt(in, "disturbedListings");
  r.list_changed_before_binding = ReadInt(in, "listChangedBeforeBinding");
  r.gate_ms = ReadDouble(in, "gateMs");
  r.call_ms = ReadDouble(in, "callMs");
  r.protocol_version = ReadString(in, "protocolVersion");
  r.era = ReadString(in, "era");
  r.subscription = ReadString(in, "subscription");
  r.sandbox = ReadValue(in, "sandbox");
  r.model_backed = ReadBool(in, "modelBacked");
  r.invalidation = ReadString(in, "invalidation");
  r.drift = ReadValue(in, "drift");
  r.server_info_drift = ReadValue(in, "serverInfoDrift");
  r.server_requests = ReadStrings(in, "serverRequests");
  r.live_tool_sha256 = ReadString(in, "liveToolSha256");
  r.reuse_refused = ReadString(in, "reuseRefused");
  r.invalidation_write_failed = ReadString(in, "invalidationWriteFailed");
  r.notification_stream = ReadString(in, "notificationStream");
  r.arguments_hmac_sha256 = ReadString(in, "argumentsHmacSha256");
  r.result_hmac_sha256 = ReadString(in, "resultHmacSha256");
  r.digest_key_id = ReadString(in, "digestKeyId");
  r.cause = ReadValue(in, "cause");
  r.reason = ReadValue(in, "reason");
  r.arguments_sha256 = ReadString(in, "argumentsSha256");
  r.result_sha256 = ReadString(in, "resultSha256");
  r.negotiation = ReadString(in, "negotiation");
  r.probe = ReadProbe(in);
  return r;
}

std::string FailedStep(const EvidenceRecord& record) {
  if (!record.steps) return {};
  for (const EvidenceStep& step : *record.steps) {
    if (step.outcome && *step.outcome != "ok") return step.step;
  }
  return {};
}

bool IsIndeterminate(std::string_view code) { return code == "call.indeterminate"; }

bool IsCallFailure(std::string_view code) { return code.substr(0, 5) == "call." && !IsIndeterminate(code); }

bool IsUnusableInput(std::string_view code) {
  if (code == "manifest.unreadable" || code == "state.unavailable") return true;
  for (std::string_view prefix : {"config.", "usage.", "io.", "json.", "yaml.", "policy."}) {
    if (code.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

bool IsRefusal(std::string_view code) {
  if (code == "state.lock_timeout") return true;
  if (IsUnusableInput(code)) return false;
  for (std::string_view prefix : {"manifest.", "review.", "server.", "catalog.", "binding.", "input."}) {
    if (code.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

int DecisionExit(const std::optional<Error>& error) {
  if (!error) return 0;
  if (IsIndeterminate(error->code)) return 5;
  if (IsCallFailure(error->code)) return 4;
  if (IsRefusal(error->code)) return 3;
  if (IsUnusableInput(error->code)) return 2;
  return 1;
}

}  // namespace udon::gate
