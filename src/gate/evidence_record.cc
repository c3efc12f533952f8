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

// Every member of a record, once: ToJson and FromJson are two visitors of this list.
template <typename Record, typename Visit>
void ForEachMember(Record& r, Visit&& visit) {
  visit("time", r.time);
  visit("command", r.command);
  visit("manifestSha256", r.manifest_sha256);
  visit("pinnedSha256", r.pinned_sha256);
  visit("server", r.server);
  visit("tool", r.tool);
  visit("client", r.client);
  visit("callerHmacSha256", r.caller_hmac_sha256);
  visit("steps", r.steps);
  visit("code", r.code);
  visit("exit", r.exit);
  visit("dispatched", r.dispatched);
  visit("connection", r.connection);
  visit("barrier", r.barrier);
  visit("listings", r.listings);
  visit("disturbedListings", r.disturbed_listings);
  visit("listChangedBeforeBinding", r.list_changed_before_binding);
  visit("gateMs", r.gate_ms);
  visit("callMs", r.call_ms);
  visit("protocolVersion", r.protocol_version);
  visit("era", r.era);
  visit("subscription", r.subscription);
  visit("sandbox", r.sandbox);
  visit("modelBacked", r.model_backed);
  visit("invalidation", r.invalidation);
  visit("drift", r.drift);
  visit("serverInfoDrift", r.server_info_drift);
  visit("serverRequests", r.server_requests);
  visit("liveToolSha256", r.live_tool_sha256);
  visit("reuseRefused", r.reuse_refused);
  visit("invalidationWriteFailed", r.invalidation_write_failed);
  visit("notificationStream", r.notification_stream);
  visit("argumentsHmacSha256", r.arguments_hmac_sha256);
  visit("resultHmacSha256", r.result_hmac_sha256);
  visit("contentTypes", r.content_types);
  visit("hasStructuredContent", r.has_structured_content);
  visit("digestKeyId", r.digest_key_id);
  visit("storeTls", r.store_tls);
  visit("cause", r.cause);
  visit("reason", r.reason);
  visit("argumentsSha256", r.arguments_sha256);
  visit("resultSha256", r.result_sha256);
  visit("negotiation", r.negotiation);
  visit("probe", r.probe);
}

json::Value AsJson(const std::vector<EvidenceStep>& steps) { return StepsToJson(steps); }
json::Value AsJson(const ProbeFacts& probe) { return ProbeToJson(probe); }
template <typename T>
json::Value AsJson(const T& value) {
  return value;
}

struct Writer {
  json::Value& out;
  template <typename T>
  void operator()(const char* name, const std::optional<T>& value) const {
    if (value) out[name] = AsJson(*value);
  }
  void operator()(const char* name, const json::Value& value) const { Put(out, name, value); }
};

struct Reader {
  const json::Value& in;
  void operator()(const char* name, std::optional<std::string>& value) const { value = ReadString(in, name); }
  void operator()(const char* name, std::optional<int>& value) const { value = ReadInt(in, name); }
  void operator()(const char* name, std::optional<double>& value) const { value = ReadDouble(in, name); }
  void operator()(const char* name, std::optional<bool>& value) const { value = ReadBool(in, name); }
  void operator()(const char* name, std::optional<std::vector<std::string>>& value) const {
    value = ReadStrings(in, name);
  }
  void operator()(const char*, std::optional<std::vector<EvidenceStep>>& value) const { value = ReadSteps(in); }
  void operator()(const char*, std::optional<ProbeFacts>& value) const { value = ReadProbe(in); }
  void operator()(const char* name, json::Value& value) const { value = ReadValue(in, name); }
};

}  // namespace

json::Value EvidenceRecord::ToJson() const {
  json::Value out = json::Value::object();
  ForEachMember(*this, Writer{out});
  return out;
}

EvidenceRecord EvidenceRecord::FromJson(const json::Value& in) {
  EvidenceRecord record;
  if (in.is_object()) ForEachMember(record, Reader{in});
  return record;
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
  if (code == "manifest.unreadable") return true;
  for (std::string_view prefix : {"config.", "usage.", "io.", "json.", "yaml.", "policy."}) {
    if (code.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

bool IsRefusal(std::string_view code) {
  // The gate consults the state store before dispatch: unreachable, it fails closed.
  if (code == "state.lock_timeout" || code == "state.unavailable") return true;
  // The gateway's withdrawal, asked again by the gate's last step before dispatch.
  if (code == "serve.tool_withdrawn") return true;
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
