#include "evidence/probe.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "evidence/percentile.h"
#include "base/random.h"
#include "manifest/binding.h"
#include "manifest/review.h"

namespace udon::evidence {
namespace {

// What the probe needs from the review before calling anything. Unknown when the binding
// does not resolve (manifest unreadable, pin differs, tool not selectable, review missing
// or unacceptable): the gate then refuses every call with the precise code.
struct ReviewFacts {
  bool known = false;
  bool model_backed = false;
  std::vector<std::string> side_effects;
  bool serialize = false;
};

ReviewFacts ReadReview(const manifest::Binding& binding, const manifest::Policy& policy,
                       manifest::ManifestCache& manifests) {
  ReviewFacts facts;
  auto bound = manifest::ResolveBinding(binding, policy, manifests);
  if (!bound.ok()) return facts;
  facts.known = true;
  facts.model_backed = bound->review.model_backed;
  facts.side_effects = bound->review.side_effects;
  facts.serialize = bound->review.concurrency == manifest::Concurrency::kSerialize;
  return facts;
}

// 64 random bits as 16 hex digits: a name, not a secret, so a failed random source falls
// back to the process id and the time.
std::string RandomRunId() {
  if (auto hex = base::RandomHex(8); hex.ok()) return *hex;
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%08x%08x", static_cast<unsigned>(::getpid()),
                static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count()));
  return buffer;
}

// Which calls of this run were in flight together. A call overlaps when another was in
// flight as it started, or another started before it finished; both are seen before it
// finishes, so its record can be written at once.
class OverlapTracker {
 public:
  explicit OverlapTracker(int calls) : overlapped_(static_cast<std::size_t>(calls), false) {}

  void Start(int call) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!in_flight_.empty()) {
      overlapped_[static_cast<std::size_t>(call)] = true;
      for (int other : in_flight_) overlapped_[static_cast<std::size_t>(other)] = true;
    }
    in_flight_.insert(call);
  }

  bool Finish(int call) {
    std::lock_guard<std::mutex> guard(mutex_);
    in_flight_.erase(call);
    return overlapped_[static_cast<std::size_t>(call)];
  }

 private:
  std::mutex mutex_;
  std::set<int> in_flight_;
  std::vector<bool> overlapped_;
};

// Digest -> count within one group of calls.
using DigestCounts = std::map<std::string, int>;

json::Value GroupSide(const DigestCounts& counts) {
  int calls = 0;
  for (const auto& [digest, count] : counts) calls += count;
  return {{"calls", calls}, {"distinct", counts.size()}};
}

// Two groups differ when their sets of result digests are not the same.
json::Value CompareGroups(const std::map<std::string, DigestCounts>& groups, const std::string& a,
                          const std::string& b) {
  static const DigestCounts kEmpty;
  const auto find = [&](const std::string& name) -> const DigestCounts& {
    auto it = groups.find(name);
    return it == groups.end() ? kEmpty : it->second;
  };
  const DigestCounts& left = find(a);
  const DigestCounts& right = find(b);
  const bool compared = !left.empty() && !right.empty();
  bool differ = false;
  if (compared) {
    std::set<std::string> left_set, right_set;
    for (const auto& [digest, count] : left) left_set.insert(digest);
    for (const auto& [digest, count] : right) right_set.insert(digest);
    differ = left_set != right_set;
  }
  return {{a, GroupSide(left)}, {b, GroupSide(right)}, {"compared", compared}, {"differ", differ}};
}

json::Value LatencySummary(const std::vector<double>& values) {
  return {{"p50", NearestRank(values, 50)}, {"p90", NearestRank(values, 90)}, {"max", NearestRank(values, 100)}};
}

json::Value BuildReport(const std::vector<gate::EvidenceRecord>& records, const ReviewFacts& facts,
                        const ProbeOptions& options, const manifest::Binding& binding, const std::string& run_id,
                        std::optional<int> stopped_at) {
  json::Value report = {{"run", run_id},
                        {"server", binding.server},
                        {"tool", binding.tool},
                        {"pinnedSha256", binding.manifest_sha256},
                        {"repeat", options.repeat},
                        {"concurrency", options.concurrency},
                        {"connections", options.fresh_connections ? "fresh" : "reuse"}};
  if (facts.known) {
    report["review"] = {{"modelBacked", facts.model_backed},
                        {"sideEffects", facts.side_effects},
                        {"concurrency", facts.serialize ? "serialize" : "safe"}};
  }
  std::map<std::string, int> outcomes;
  DigestCounts all;
  std::map<std::string, DigestCounts> by_connection, by_concurrency;
  std::vector<double> gate_ms, call_ms;
  json::Value calls = json::Value::array();
  int without_result = 0;
  int first_failure_exit = 0;
  int indeterminate_exit = 0;
  std::optional<bool> model_backed;
  for (const gate::EvidenceRecord& record : records) {
    const std::string code = record.code.value_or("");
    const int exit = record.exit.value_or(1);
    const std::string connection = record.connection.value_or("");
    ++outcomes[code];
    if (code != "ok" && first_failure_exit == 0) first_failure_exit = exit;
    if (gate::IsIndeterminate(code) && indeterminate_exit == 0) indeterminate_exit = exit;
    if (record.model_backed && !model_backed) model_backed = record.model_backed;
    if (record.arguments_hmac_sha256) report["argumentsHmacSha256"] = *record.arguments_hmac_sha256;
    if (record.digest_key_id) report["digestKeyId"] = *record.digest_key_id;
    gate_ms.push_back(record.gate_ms.value_or(0.0));
    if (record.dispatched.value_or(false)) call_ms.push_back(record.call_ms.value_or(0.0));
    const bool overlapped = record.probe && record.probe->overlapped;
    json::Value call = {{"repetition", record.probe ? json::Value(record.probe->repetition.value_or(0)) : json::Value()},
                        {"code", code},
                        {"exit", exit},
                        {"connection", connection},
                        {"overlapped", overlapped},
                        {"gateMs", record.gate_ms.value_or(0.0)},
                        {"callMs", record.call_ms.value_or(0.0)}};
    if (record.result_hmac_sha256) {
      const std::string& digest = *record.result_hmac_sha256;
      call["resultHmacSha256"] = digest;
      ++all[digest];
      ++by_connection[connection][digest];
      ++by_concurrency[overlapped ? "overlapped" : "alone"][digest];
    } else if (code == "ok") {
      ++without_result;
    }
    calls.push_back(std::move(call));
  }
  if (model_backed && !report.contains("review")) report["review"] = {{"modelBacked", *model_backed}};

  std::vector<std::pair<std::string, int>> digests(all.begin(), all.end());
  std::stable_sort(digests.begin(), digests.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  json::Value digest_list = json::Value::array();
  for (const auto& [digest, count] : digests) digest_list.push_back({{"hmacSha256", digest}, {"count", count}});
  report["outcomes"] = outcomes;
  report["calls"] = std::move(calls);
  report["latency"] = {{"gateMs", LatencySummary(gate_ms)}, {"callMs", LatencySummary(call_ms)}};
  report["results"] = {{"distinct", all.size()},
                       {"digests", std::move(digest_list)},
                       {"okWithoutStructuredContent", without_result},
                       {"differAcrossRepetitions", all.size() > 1},
                       {"acrossConcurrency", CompareGroups(by_concurrency, "alone", "overlapped")},
                       {"acrossConnections", CompareGroups(by_connection, "fresh", "reused")}};

  json::Value findings = json::Value::array();
  const bool declared_deterministic = facts.known ? !facts.model_backed : (model_backed && !*model_backed);
  if (declared_deterministic && all.size() > 1) {
    findings.push_back({{"code", kNondeterministicNotModelBacked},
                        {"message", "identical calls returned different structuredContent digests, "
                                    "but the review says modelBacked: false"},
                        {"distinct", all.size()}});
  }
  // An indeterminate outcome ends the probe: its exit outranks any finding.
  const int exit_code = stopped_at ? indeterminate_exit : !findings.empty() ? kExitFinding : first_failure_exit;
  const char* verdict = stopped_at              ? "stopped_indeterminate"
                        : !findings.empty()      ? "contradicts_review"
                        : exit_code == 0         ? "consistent"
                                                 : "failed";
  if (stopped_at) {
    report["stopped"] = {{"afterRepetition", *stopped_at},
                         {"reason", "call.indeterminate"},
                         {"notRun", options.repeat - static_cast<int>(records.size())}};
  }
  report["findings"] = std::move(findings);
  report["verdict"] = verdict;
  report["exit"] = exit_code;
  return report;
}

}  // namespace

ProbeOutcome RunProbe(gate::GateEnvironment env, gate::EvidenceWriter* evidence, const manifest::Binding& binding,
                      const json::Value& arguments, const ProbeOptions& options) {
  ProbeOutcome outcome;
  // One cache for the review read here and the gate's calls: the gate re-reads the bytes
  // before each call but reuses this parse while they are unchanged.
  if (!env.manifests) env.manifests = std::make_shared<manifest::ManifestCache>();
  const ReviewFacts facts = ReadReview(binding, env.policy, *env.manifests);
  if (facts.known && !facts.side_effects.empty() && !options.allow_side_effects) {
    Error error = MakeError(kSideEffectsRefused,
                            "the review lists side effects; repeating the call would repeat them "
                            "(pass --allow-side-effects to probe anyway)");
    error.details["sideEffects"] = facts.side_effects;
    outcome.refusal = std::move(error);
    return outcome;
  }
  env.command = "probe";
  env.evidence = nullptr;  // the probe writes each record itself, with its probe object
  env.reuse_connections = !options.fresh_connections;
  const std::string run_id = options.run_id.empty() ? RandomRunId() : options.run_id;
  const int calls = std::max(options.repeat, 1);
  const int workers = std::clamp(options.concurrency, 1, calls);

  gate::Gate gate(env);
  OverlapTracker overlap(calls);
  std::vector<std::optional<gate::EvidenceRecord>> records(static_cast<std::size_t>(calls));
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  // The first indeterminate outcome stops the probe: the server may have acted, and
  // repeating the call (side effects included) on top of an unknown outcome is what the
  // proposal's "never retried" forbids. Calls already in flight finish.
  std::atomic<bool> stop{false};
  std::mutex stopped_mutex;
  std::optional<int> stopped_at;
  const auto work = [&] {
    for (int call = next++; call < calls && !stop; call = next++) {
      overlap.Start(call);
      gate::GateResult result = gate.Call(binding, arguments, gate::CallOptions{});
      if (result.error && gate::IsIndeterminate(result.error->code)) {
        stop = true;
        std::lock_guard<std::mutex> guard(stopped_mutex);
        if (!stopped_at || call + 1 < *stopped_at) stopped_at = call + 1;
      }
      const bool overlapped = overlap.Finish(call);
      gate::EvidenceRecord record = std::move(result.evidence);
      record.probe = gate::ProbeFacts{run_id, call + 1, calls, workers,
                                      options.fresh_connections ? "fresh" : "reuse", overlapped};
      if (evidence != nullptr) (void)evidence->Append(record.ToJson());  // evidence loss never changes the outcome
      records[static_cast<std::size_t>(call)] = std::move(record);
      if (options.on_progress) options.on_progress(++done, calls);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < workers; ++i) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();

  // Repetitions never started leave empty slots.
  std::vector<gate::EvidenceRecord> finished;
  for (auto& record : records) {
    if (record) finished.push_back(std::move(*record));
  }
  ProbeOptions effective = options;
  effective.repeat = calls;
  effective.concurrency = workers;
  outcome.report = BuildReport(finished, facts, effective, binding, run_id, stopped_at);
  return outcome;
}

std::string ProbeReportText(const json::Value& report) {
  std::string out;
  const auto line = [&out](const std::string& text) { out += text + "\n"; };
  line("probe " + report["server"].get<std::string>() + "/" + report["tool"].get<std::string>() + ": " +
       std::to_string(report["repeat"].get<int>()) + " calls, " + std::to_string(report["concurrency"].get<int>()) +
       " at a time, " + (report["connections"] == "fresh" ? "a fresh connection per call" : "connections reused") +
       " (run " + report["run"].get<std::string>() + ")");
  if (report.contains("review")) {
    const json::Value& review = report["review"];
    std::string text = std::string("review: modelBacked ") + (review["modelBacked"].get<bool>() ? "true" : "false");
    if (review.contains("sideEffects")) {
      text += ", sideEffects " + (review["sideEffects"].empty() ? std::string("none") : review["sideEffects"].dump());
    }
    if (review.contains("concurrency")) text += ", concurrency " + review["concurrency"].get<std::string>();
    line(text);
  }
  std::string outcomes = "outcomes:";
  for (const auto& [code, count] : report["outcomes"].items()) outcomes += " " + code + " " + count.dump();
  line(outcomes);
  const json::Value& results = report["results"];
  line("results: " + results["distinct"].dump() + " distinct structuredContent digest(s)");
  for (const json::Value& digest : results["digests"]) {
    line("  " + digest["hmacSha256"].get<std::string>() + " x" + digest["count"].dump());
  }
  if (results["okWithoutStructuredContent"].get<int>() > 0) {
    line("  " + results["okWithoutStructuredContent"].dump() + " successful call(s) without structuredContent");
  }
  line(std::string("across repetitions: ") + (results["differAcrossRepetitions"].get<bool>() ? "differ" : "identical"));
  const auto comparison = [&](const char* title, const json::Value& c, const char* a, const char* b) {
    std::string text = std::string(title) + ": " + a + " " + c[a]["calls"].dump() + " call(s), " +
                       c[a]["distinct"].dump() + " distinct; " + b + " " + c[b]["calls"].dump() + " call(s), " +
                       c[b]["distinct"].dump() + " distinct: ";
    if (!c["compared"].get<bool>()) text += "not compared (one side has no results)";
    else text += c["differ"].get<bool>() ? "differ" : "same digests";
    line(text);
  };
  comparison("across concurrency", results["acrossConcurrency"], "alone", "overlapped");
  comparison("across connections", results["acrossConnections"], "fresh", "reused");
  char latency[160];
  std::snprintf(latency, sizeof latency, "latency ms: gate p50 %.2f p90 %.2f max %.2f; call p50 %.2f p90 %.2f max %.2f",
                report["latency"]["gateMs"]["p50"].get<double>(), report["latency"]["gateMs"]["p90"].get<double>(),
                report["latency"]["gateMs"]["max"].get<double>(), report["latency"]["callMs"]["p50"].get<double>(),
                report["latency"]["callMs"]["p90"].get<double>(), report["latency"]["callMs"]["max"].get<double>());
  line(latency);
  for (const json::Value& finding : report["findings"]) {
    line("finding: " + finding["message"].get<std::string>() + " [" + finding["code"].get<std::string>() + "]");
  }
  if (report.contains("stopped")) {
    line("stopped: repetition " + report["stopped"]["afterRepetition"].dump() +
         " was indeterminate (dispatched, outcome unknown); " + report["stopped"]["notRun"].dump() +
         " repetition(s) not run");
  }
  if (report.contains("digestKeyId")) {
    line("digests: HMAC-SHA-256 under evidence key " + report["digestKeyId"].get<std::string>() +
         " (compare only with reports under the same key)");
  }
  line("verdict: " + report["verdict"].get<std::string>() + " (exit " + report["exit"].dump() + ")");
  return out;
}

}  // namespace udon::evidence
