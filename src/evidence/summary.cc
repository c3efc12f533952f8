#include "evidence/summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "evidence/charts.h"
#include "evidence/internal/report_format.h"
#include "evidence/percentile.h"
#include "json/access.h"
#include "base/file.h"
#include "manifest/instant.h"

namespace udon::evidence {
namespace {

using internal::Cell;
using internal::Header;
using internal::HtmlTable;
using internal::Row;

constexpr const char* kUnrecognized = "(unrecognized)";
constexpr std::size_t kMaxEvidenceBytes = std::size_t{1} << 30;

// The gate's steps in order; anything else a record names is reported after them.
const std::vector<std::string> kSteps = {"digest", "static", "connect", "list", "compare", "arguments", "recheck", "dispatch"};

// The four reasons the gate records for a list_changed invalidation.
const std::vector<std::string> kInvalidations = {"list_changed_before_dispatch", "list_changed_during_call",
                                                 "list_changed_between_calls", "strict_notification"};

// Codes, names, areas and reasons are short tokens; anything else (a value that reached a
// record some other way) never reaches the report.
bool IsToken(std::string_view text) {
  if (text.empty() || text.size() > 128) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-' || c == '/';
  });
}

// A member of a sub-object the record carries as JSON (a drift pointer).
std::string Token(const json::Value& object, const char* member) {
  const json::Value* value = json::Member(object, member);
  if (value == nullptr || !value->is_string()) return kUnrecognized;
  const std::string& text = value->get_ref<const std::string&>();
  return IsToken(text) ? text : kUnrecognized;
}

// A string member of the record: absent or not a token is unrecognized.
std::string Token(const std::optional<std::string>& text) {
  return text && IsToken(*text) ? *text : kUnrecognized;
}

bool IsDigest(const std::optional<std::string>& text) {
  return text && text->size() == 64 &&
         std::all_of(text->begin(), text->end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

const char* ExitClass(int exit_code) {
  switch (exit_code) {
    case 0: return "ok";
    case 2: return "invalid_input";
    case 3: return "refused";
    case 4: return "failed";
    case 5: return "indeterminate";
    default: return "internal";
  }
}

struct ChangeCounts {
  int incidents = 0;
  std::map<std::string, int> changes;  // added / removed / changed pointers
};

void CountPointers(const json::Value& pointers, std::map<std::string, ChangeCounts>& kinds,
                   const std::string* fixed_kind) {
  std::set<std::string> seen;
  for (const json::Value& pointer : pointers) {
    if (!pointer.is_object()) continue;
    const std::string kind = fixed_kind ? *fixed_kind : Token(pointer, "area");
    ++kinds[kind].changes[Token(pointer, "change")];
    if (seen.insert(kind).second) ++kinds[kind].incidents;
  }
}

// What changed, for a record the gate refused because the live server drifted. False for
// every other record.
bool ClassifyDrift(const gate::EvidenceRecord& record, std::map<std::string, ChangeCounts>& kinds) {
  const std::string code = Token(record.code);
  const std::string step = gate::FailedStep(record);
  const auto whole = [&kinds](const std::string& kind) {
    ++kinds[kind].incidents;
    return true;
  };
  if (code == "catalog.tool_drift") {
    if (!record.drift.is_array() || record.drift.empty()) return whole("unspecified");
    CountPointers(record.drift, kinds, nullptr);
    return true;
  }
  if (code == "server.server_info_mismatch") {
    static const std::string kServerInfo = "serverInfo";
    if (!record.server_info_drift.is_array() || record.server_info_drift.empty()) return whole(kServerInfo);
    CountPointers(record.server_info_drift, kinds, &kServerInfo);
    return true;
  }
  if (code == "server.protocol_version_mismatch") return whole("protocolVersion");
  // At the list step these describe the live catalog; at the static step, the manifest.
  if (code == "catalog.tool_missing" && step == "list") return whole("toolRemoved");
  if (code == "catalog.tool_duplicate" && step == "list") return whole("toolDuplicated");
  return false;
}

json::Value Percentiles(const std::vector<double>& values) {
  return {{"samples", values.size()},
          {"p50", NearestRank(values, 50)},
          {"p90", NearestRank(values, 90)},
          {"p99", NearestRank(values, 99)},
          {"max", NearestRank(values, 100)}};
}

// Result digests of one tool, by the arguments digest (identical calls) and by group.
struct ToolResults {
  int calls = 0;
  int results = 0;
  std::set<std::string> model_backed;  // "true" / "false" as recorded
  std::map<std::string, std::set<std::string>> by_arguments;
  std::map<std::string, std::map<std::string, std::set<std::string>>> by_connection;   // args -> group -> digests
  std::map<std::string, std::map<std::string, std::set<std::string>>> by_concurrency;  // args -> group -> digests
};

std::size_t MaxDistinct(const std::map<std::string, std::map<std::string, std::set<std::string>>>& groups,
                        const std::string& group) {
  std::size_t most = 0;
  for (const auto& [arguments, by_group] : groups) {
    if (auto it = by_group.find(group); it != by_group.end()) most = std::max(most, it->second.size());
  }
  return most;
}

json::Value ToolSummary(const std::string& server, const std::string& tool, const ToolResults& t) {
  std::size_t max_distinct = 0;
  std::set<std::string> distinct;
  for (const auto& [arguments, digests] : t.by_arguments) {
    max_distinct = std::max(max_distinct, digests.size());
    distinct.insert(digests.begin(), digests.end());
  }
  const bool nondeterministic = max_distinct > 1;
  json::Value model_backed = nullptr;
  if (t.model_backed.size() == 1) model_backed = *t.model_backed.begin() == "true";
  if (t.model_backed.size() > 1) model_backed = "mixed";
  json::Value summary = {{"server", server},
                         {"tool", tool},
                         {"calls", t.calls},
                         {"results", t.results},
                         {"argumentSets", t.by_arguments.size()},
                         {"distinctResults", distinct.size()},
                         {"maxDistinctResults", max_distinct},
                         {"nondeterministic", nondeterministic},
                         {"modelBacked", model_backed},
                         {"contradictsReview", nondeterministic && t.model_backed.count("false") > 0}};
  json::Value by_connection = json::Value::object();
  for (const char* group : {"fresh", "reused"}) by_connection[group] = MaxDistinct(t.by_connection, group);
  json::Value by_concurrency = json::Value::object();
  for (const char* group : {"alone", "overlapped"}) by_concurrency[group] = MaxDistinct(t.by_concurrency, group);
  summary["maxDistinctByConnection"] = std::move(by_connection);
  summary["maxDistinctByConcurrency"] = std::move(by_concurrency);
  return summary;
}

// What one pass over the records counts; each Count* below reads one concern of a record
// and each *Section turns its counts into a part of the report.
struct RecordTally {
  std::map<std::string, int> commands;
  std::map<std::string, std::pair<int, int>> codes;  // code -> (exit, count)
  std::map<int, int> exits;
  std::map<std::string, ChangeCounts> drift_kinds;
  std::map<std::pair<std::string, std::string>, int> drift_tools;  // (server, tool) -> incidents
  int drift_incidents = 0;
  std::vector<std::pair<manifest::Seconds, std::string>> timed_codes;  // (time, code)
  int untimed = 0;
  std::map<std::string, int> invalidations;
  int absorbed = 0;
  int disturbed = 0;
  std::map<std::string, int> indeterminate;  // reason -> count
  int indeterminate_count = 0;
  std::map<std::string, std::vector<double>> step_ms;
  std::vector<double> gate_ms;
  std::vector<double> call_ms;
  std::map<std::pair<std::string, std::string>, ToolResults> tools;
  std::set<std::string> digest_keys;  // evidence key ids whose digests were compared

  RecordTally() {
    for (const std::string& reason : kInvalidations) invalidations[reason] = 0;
  }
};

// A record without a readable exit counts as internal (1): it says nothing better.
void CountOutcome(const gate::EvidenceRecord& record, RecordTally& t) {
  const int exit_code = record.exit.value_or(1);
  ++t.commands[Token(record.command)];
  auto& code_entry = t.codes[Token(record.code)];
  code_entry.first = exit_code;
  ++code_entry.second;
  ++t.exits[exit_code];
  if (ClassifyDrift(record, t.drift_kinds)) {
    ++t.drift_incidents;
    ++t.drift_tools[{Token(record.server), Token(record.tool)}];
  }
  // Evidence times are UTC instants with milliseconds; the second is enough to bucket.
  const std::string time = record.time.value_or("");
  auto at = time.size() >= 20 && time.back() == 'Z' ? manifest::ParseInstant(time.substr(0, 19) + "Z")
                                                     : manifest::ParseInstant(time);
  if (at.ok()) {
    t.timed_codes.push_back({*at, Token(record.code)});
  } else {
    ++t.untimed;
  }
}

void CountListChanged(const gate::EvidenceRecord& record, RecordTally& t) {
  if (record.invalidation) {
    const std::string reason = Token(record.invalidation);
    ++t.invalidations[t.invalidations.count(reason) ? reason : std::string("other")];
  }
  if (record.list_changed_before_binding.value_or(0) > 0 && !record.invalidation) ++t.absorbed;
  t.disturbed += record.disturbed_listings.value_or(0);
  if (Token(record.code) == "call.indeterminate") {
    ++t.indeterminate_count;
    const auto token = [](const json::Value& value) {
      return value.is_string() ? Token(value.get<std::string>()) : std::string(kUnrecognized);
    };
    ++t.indeterminate[!record.reason.is_null()  ? token(record.reason)
                      : !record.cause.is_null() ? token(record.cause)
                                                : std::string("unspecified")];
  }
}

void CountLatency(const gate::EvidenceRecord& record, RecordTally& t) {
  if (record.steps) {
    for (const gate::EvidenceStep& step : *record.steps) {
      if (step.ms) t.step_ms[Token(step.step)].push_back(*step.ms);
    }
  }
  if (record.gate_ms) t.gate_ms.push_back(*record.gate_ms);
  if (record.dispatched.value_or(false)) t.call_ms.push_back(record.call_ms.value_or(0.0));
}

// Result digests per tool. capture's records (how each server was opened) are no tool's.
void CountResults(const gate::EvidenceRecord& record, RecordTally& t) {
  if (Token(record.command) == "capture") return;
  ToolResults& tool = t.tools[{Token(record.server), Token(record.tool)}];
  ++tool.calls;
  if (record.model_backed) tool.model_backed.insert(*record.model_backed ? "true" : "false");
  // Keyed digests (HMAC under the deployment's evidence key) compare only under the same
  // key: the key id is part of the argument set's identity. Records from before keyed
  // digests carry plain SHA-256 members and form their own group.
  const bool keyed = IsDigest(record.result_hmac_sha256);
  const std::optional<std::string>& result = keyed ? record.result_hmac_sha256 : record.result_sha256;
  const std::optional<std::string>& arguments = keyed ? record.arguments_hmac_sha256 : record.arguments_sha256;
  if (!IsDigest(result)) return;
  ++tool.results;
  const std::string key = keyed ? Token(record.digest_key_id) : std::string("sha256");
  t.digest_keys.insert(key);
  const std::string identity = key + "|" + (IsDigest(arguments) ? *arguments : std::string());
  tool.by_arguments[identity].insert(*result);
  tool.by_connection[identity][Token(record.connection)].insert(*result);
  if (record.probe) tool.by_concurrency[identity][record.probe->overlapped ? "overlapped" : "alone"].insert(*result);
}

void OutcomeSections(const RecordTally& t, json::Value& summary) {
  json::Value code_list = json::Value::array();
  for (const auto& [code, entry] : t.codes) {
    code_list.push_back({{"code", code}, {"exit", entry.first}, {"count", entry.second}});
  }
  summary["codes"] = std::move(code_list);
  json::Value exit_list = json::Value::array();
  for (const auto& [exit_code, count] : t.exits) {
    exit_list.push_back({{"exit", exit_code}, {"class", ExitClass(exit_code)}, {"count", count}});
  }
  summary["exitClasses"] = std::move(exit_list);
}

json::Value DriftSection(const RecordTally& t) {
  json::Value kinds = json::Value::array();
  for (const auto& [kind, counts] : t.drift_kinds) {
    json::Value changes = {{"added", 0}, {"removed", 0}, {"changed", 0}};
    for (const auto& [change, count] : counts.changes) changes[change] = count;
    kinds.push_back({{"kind", kind}, {"incidents", counts.incidents}, {"pointers", changes}});
  }
  json::Value tools = json::Value::array();
  for (const auto& [key, incidents] : t.drift_tools) {
    tools.push_back({{"server", key.first}, {"tool", key.second}, {"incidents", incidents}});
  }
  return {{"incidents", t.drift_incidents}, {"kinds", std::move(kinds)}, {"byTool", std::move(tools)}};
}

// Outcomes by code in time buckets: the smallest bucket of kBucketSeconds that covers the
// records' span in at most kMaxBuckets, empty buckets included so that time reads evenly.
constexpr std::size_t kMaxBuckets = 24;
constexpr manifest::Seconds kBucketSeconds[] = {60, 300, 900, 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400};

json::Value OverTimeSection(const RecordTally& t) {
  json::Value out = {{"bucketSeconds", nullptr}, {"buckets", json::Value::array()}, {"untimed", t.untimed}};
  if (t.timed_codes.empty()) return out;
  manifest::Seconds first = t.timed_codes.front().first, last = first;
  for (const auto& [at, code] : t.timed_codes) {
    first = std::min(first, at);
    last = std::max(last, at);
  }
  manifest::Seconds size = kBucketSeconds[std::size(kBucketSeconds) - 1];
  for (manifest::Seconds candidate : kBucketSeconds) {
    if ((last / candidate - first / candidate) + 1 <= static_cast<manifest::Seconds>(kMaxBuckets)) {
      size = candidate;
      break;
    }
  }
  std::map<manifest::Seconds, std::map<std::string, int>> buckets;
  for (manifest::Seconds start = first / size * size; start <= last; start += size) buckets[start];
  for (const auto& [at, code] : t.timed_codes) ++buckets[at / size * size][code];
  out["bucketSeconds"] = size;
  for (const auto& [start, codes] : buckets) {
    out["buckets"].push_back({{"start", manifest::FormatInstant(start)}, {"codes", codes}});
  }
  return out;
}

json::Value IndeterminateSection(const RecordTally& t) {
  json::Value reasons = json::Value::array();
  for (const auto& [reason, count] : t.indeterminate) reasons.push_back({{"reason", reason}, {"count", count}});
  return {{"count", t.indeterminate_count}, {"byReason", std::move(reasons)}};
}

// The gate's steps in their order, then any other step a record names.
json::Value LatencySection(const RecordTally& t) {
  std::vector<std::string> step_names;
  for (const std::string& step : kSteps) {
    if (t.step_ms.count(step)) step_names.push_back(step);
  }
  for (const auto& [step, values] : t.step_ms) {
    if (std::find(kSteps.begin(), kSteps.end(), step) == kSteps.end()) step_names.push_back(step);
  }
  json::Value latency = json::Value::array();
  for (const std::string& step : step_names) {
    json::Value row = Percentiles(t.step_ms.at(step));
    row["step"] = step;
    latency.push_back(std::move(row));
  }
  return {{"steps", std::move(latency)}, {"gateMs", Percentiles(t.gate_ms)}, {"callMs", Percentiles(t.call_ms)}};
}

}  // namespace

void AddEvidenceText(std::string_view text, EvidenceSet& set) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto record = json::Parse(line);
    if (!record.ok() || !record->is_object() || !record->contains("code") || !(*record)["code"].is_string()) {
      ++set.unreadable_lines;
      continue;
    }
    set.records.push_back(gate::EvidenceRecord::FromJson(*record));
  }
}

Status AddEvidenceFile(const std::string& path, EvidenceSet& set) {
  UDON_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path, kMaxEvidenceBytes));
  ++set.files;
  AddEvidenceText(text, set);
  return OkStatus();
}

json::Value Summarize(const EvidenceSet& set) {
  RecordTally t;
  for (const gate::EvidenceRecord& record : set.records) {
    CountOutcome(record, t);
    CountListChanged(record, t);
    CountLatency(record, t);
    CountResults(record, t);
  }
  json::Value summary = {{"files", set.files},
                         {"records", set.records.size()},
                         {"unreadableLines", set.unreadable_lines},
                         {"commands", t.commands},
                         {"digestKeys", t.digest_keys}};
  OutcomeSections(t, summary);
  summary["drift"] = DriftSection(t);
  summary["outcomesOverTime"] = OverTimeSection(t);
  summary["listChanged"] = {{"invalidations", t.invalidations},
                            {"absorbedBeforeBinding", t.absorbed},
                            {"disturbedListings", t.disturbed}};
  summary["indeterminate"] = IndeterminateSection(t);
  summary["latency"] = LatencySection(t);
  json::Value tool_list = json::Value::array();
  for (const auto& [key, results] : t.tools) tool_list.push_back(ToolSummary(key.first, key.second, results));
  summary["tools"] = std::move(tool_list);
  return summary;
}

std::string SummaryMarkdown(const json::Value& s, const std::string& chart_file) {
  std::string md = "# udon-mcp evidence report\n\n";
  md += s["records"].dump() + " record(s) from " + s["files"].dump() + " file(s); " + s["unreadableLines"].dump() +
        " unreadable line(s).";
  std::string commands;
  for (const auto& [command, count] : s["commands"].items()) {
    commands += (commands.empty() ? " Commands: " : ", ") + command + " " + count.dump();
  }
  md += commands + (commands.empty() ? "\n\n" : ".\n\n");
  if (!chart_file.empty()) md += "![Gate-step latency and drift incidents by kind](" + chart_file + ")\n\n";

  md += "## Outcomes by code\n\n" + Header({"code", "exit", "count"});
  for (const json::Value& c : s["codes"]) md += Row({"`" + Cell(c["code"]) + "`", Cell(c["exit"]), Cell(c["count"])});
  md += "\n## Outcomes by exit class\n\n" + Header({"exit", "class", "count"});
  for (const json::Value& c : s["exitClasses"]) md += Row({Cell(c["exit"]), Cell(c["class"]), Cell(c["count"])});

  md += "\n## Drift incidents\n\n" + s["drift"]["incidents"].dump() +
        " call(s) refused because the live server differed from the review. An incident counts "
        "once under every kind it touched.\n\n";
  if (!s["drift"]["kinds"].empty()) {
    md += Header({"kind", "incidents", "pointers added", "removed", "changed"});
    for (const json::Value& k : s["drift"]["kinds"]) {
      md += Row({Cell(k["kind"]), Cell(k["incidents"]), Cell(k["pointers"]["added"]), Cell(k["pointers"]["removed"]),
                 Cell(k["pointers"]["changed"])});
    }
  }

  const json::Value& lc = s["listChanged"];
  md += "\n## list_changed\n\n" + Header({"invalidation", "count"});
  for (const auto& [reason, count] : lc["invalidations"].items()) md += Row({"`" + reason + "`", count.dump()});
  md += "\nAbsorbed before binding (the gate listed again and went on): " + lc["absorbedBeforeBinding"].dump() +
        " call(s); disturbed listings: " + lc["disturbedListings"].dump() + ".\n";

  md += "\n## Indeterminate outcomes\n\n" + s["indeterminate"]["count"].dump() +
        " call(s) dispatched with an unknown outcome.\n\n";
  if (!s["indeterminate"]["byReason"].empty()) {
    md += Header({"reason", "count"});
    for (const json::Value& r : s["indeterminate"]["byReason"]) md += Row({"`" + Cell(r["reason"]) + "`", Cell(r["count"])});
  }

  md += "\n## Gate latency (milliseconds, nearest-rank percentiles)\n\n" +
        Header({"step", "samples", "p50", "p90", "p99", "max"});
  const auto latency_row = [&md](const std::string& name, const json::Value& p) {
    md += Row({name, Cell(p["samples"]), Cell(p["p50"]), Cell(p["p90"]), Cell(p["p99"]), Cell(p["max"])});
  };
  for (const json::Value& step : s["latency"]["steps"]) latency_row(Cell(step["step"]), step);
  latency_row("**gate total**", s["latency"]["gateMs"]);
  latency_row("**call**", s["latency"]["callMs"]);

  md += "\n## Nondeterminism per tool\n\nIdentical calls share an arguments digest; a tool is nondeterministic "
        "when one such set returned more than one structuredContent digest.\n\n" +
        Header({"server", "tool", "calls", "results", "argument sets", "max distinct", "fresh / reused",
                "alone / overlapped", "modelBacked", "verdict"});
  for (const json::Value& t : s["tools"]) {
    std::string verdict = t["contradictsReview"].get<bool>() ? "**contradicts the review**"
                          : t["nondeterministic"].get<bool>() ? "nondeterministic"
                          : t["results"].get<int>() > 0       ? "deterministic so far"
                                                              : "no results";
    md += Row({Cell(t["server"]), Cell(t["tool"]), Cell(t["calls"]), Cell(t["results"]), Cell(t["argumentSets"]),
               Cell(t["maxDistinctResults"]),
               Cell(t["maxDistinctByConnection"]["fresh"]) + " / " + Cell(t["maxDistinctByConnection"]["reused"]),
               Cell(t["maxDistinctByConcurrency"]["alone"]) + " / " + Cell(t["maxDistinctByConcurrency"]["overlapped"]),
               Cell(t["modelBacked"]), verdict});
  }
  return md;
}

namespace {

std::vector<charts::LatencyRow> LatencyRows(const json::Value& s) {
  std::vector<charts::LatencyRow> rows;
  for (const json::Value& step : s["latency"]["steps"]) {
    rows.push_back({step["step"].get<std::string>(), step["p50"].get<double>(), step["p90"].get<double>()});
  }
  return rows;
}

std::vector<charts::Bar> DriftKindBars(const json::Value& s) {
  std::vector<charts::Bar> bars;
  for (const json::Value& kind : s["drift"]["kinds"]) {
    const int incidents = kind["incidents"].get<int>();
    bars.push_back({kind["kind"].get<std::string>(), static_cast<double>(incidents), std::to_string(incidents)});
  }
  return bars;
}

std::vector<charts::Bar> DriftToolBars(const json::Value& s) {
  std::vector<charts::Bar> bars;
  for (const json::Value& tool : s["drift"]["byTool"]) {
    const int incidents = tool["incidents"].get<int>();
    bars.push_back({tool["server"].get<std::string>() + " / " + tool["tool"].get<std::string>(),
                    static_cast<double>(incidents), std::to_string(incidents)});
  }
  return bars;
}

// Determinism per tool: distinct result digests over calls (1 / n: one answer to every
// call; n / n: a different answer each time); red when identical calls differed.
std::vector<charts::Bar> DeterminismBars(const json::Value& s) {
  std::vector<charts::Bar> bars;
  for (const json::Value& tool : s["tools"]) {
    const int calls = tool["calls"].get<int>();
    const auto distinct = tool["distinctResults"].get<std::size_t>();
    bars.push_back({tool["server"].get<std::string>() + " / " + tool["tool"].get<std::string>(),
                    calls == 0 ? 0.0 : static_cast<double>(distinct) / calls,
                    std::to_string(distinct) + " distinct / " + std::to_string(calls) + " calls",
                    tool["nondeterministic"].get<bool>()});
  }
  return bars;
}

std::string OutcomesChart(const json::Value& s) {
  std::vector<charts::Column> columns;
  // Buckets under a day are labelled by their time of day, the rest by their date; the
  // report's text says the first and last bucket in full.
  const json::Value& size = s["outcomesOverTime"]["bucketSeconds"];
  const bool by_day = size.is_number() && size.get<int>() >= 86400;
  for (const json::Value& bucket : s["outcomesOverTime"]["buckets"]) {
    const std::string start = bucket["start"].get<std::string>();
    charts::Column column{by_day ? start.substr(0, 10) : start.substr(11, 5), {}};
    for (const auto& [code, count] : bucket["codes"].items()) column.parts.push_back({code, count.get<int>()});
    columns.push_back(std::move(column));
  }
  // Series from the most frequent code down, so the common outcome sits at the base.
  return charts::StackedColumns(columns, charts::SeriesByTotal(columns), "Outcomes by code over time (UTC)");
}

}  // namespace

std::string SummarySvg(const json::Value& s) {
  const std::string latency = charts::LatencyChart(LatencyRows(s), "Gate-step latency");
  const std::string drift = charts::BarChart(DriftKindBars(s), "Drift incidents by kind", 0, "no drift observed");
  // The two charts stacked: nested <svg> elements, each with its own height.
  const auto height_of = [](const std::string& svg) {
    const std::size_t at = svg.find("height=\"") + 8;
    return std::stoi(svg.substr(at, svg.find('"', at) - at));
  };
  const int first = height_of(latency), total = first + height_of(drift);
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\"" + std::to_string(total) +
                    "\" viewBox=\"0 0 760 " + std::to_string(total) + "\">\n";
  out += "<title>udon-mcp evidence: gate-step latency (log scale) and drift incidents</title>\n";
  out += latency.substr(0, 4) + " y=\"0\"" + latency.substr(4);
  out += drift.substr(0, 4) + " y=\"" + std::to_string(first) + "\"" + drift.substr(4);
  return out + "</svg>\n";
}

std::string SummaryHtml(const json::Value& s) {
  std::string html = internal::HtmlPageStart("udon-mcp evidence report") + "<p>" + s["records"].dump() +
          " record(s) from " + s["files"].dump() + " file(s); " + s["unreadableLines"].dump() +
          " unreadable line(s). Only codes, names, digests, counts and timings reach this report.</p>\n";

  html += "<h2>Gate-step latency</h2>\n" + charts::LatencyChart(LatencyRows(s), "Gate-step latency");
  std::vector<std::vector<std::string>> latency;
  for (const json::Value& step : s["latency"]["steps"]) {
    latency.push_back({Cell(step["step"]), Cell(step["samples"]), Cell(step["p50"]), Cell(step["p90"]),
                       Cell(step["p99"]), Cell(step["max"])});
  }
  html += HtmlTable({"step", "samples", "p50 ms", "p90 ms", "p99 ms", "max ms"}, latency);

  html += "<h2>Outcomes by code</h2>\n";
  const json::Value& buckets = s["outcomesOverTime"]["buckets"];
  if (!buckets.empty()) {
    html += "<p>From " + charts::Escape(buckets.front()["start"].get<std::string>()) + " to the bucket starting " +
            charts::Escape(buckets.back()["start"].get<std::string>()) + ", " +
            s["outcomesOverTime"]["bucketSeconds"].dump() + " seconds per column.</p>\n";
  }
  html += OutcomesChart(s);
  std::vector<std::vector<std::string>> codes;
  for (const json::Value& c : s["codes"]) codes.push_back({Cell(c["code"]), Cell(c["exit"]), Cell(c["count"])});
  html += HtmlTable({"code", "exit", "count"}, codes);
  if (s["outcomesOverTime"]["untimed"].get<int>() > 0) {
    html += "<p>" + s["outcomesOverTime"]["untimed"].dump() + " record(s) without a readable time.</p>\n";
  }

  html += "<h2>Drift incidents</h2>\n<p>" + s["drift"]["incidents"].dump() +
          " call(s) refused because the live server differed from the review.</p>\n";
  html += charts::BarChart(DriftKindBars(s), "Drift incidents by kind", 0, "no drift observed");
  html += charts::BarChart(DriftToolBars(s), "Drift incidents by tool", 0, "no drift observed");

  html += "<h2>Determinism per tool</h2>\n<p>Distinct result digests over calls; red: identical calls "
          "returned different results.</p>\n" +
          charts::BarChart(DeterminismBars(s), "Distinct results per call, by tool", 1, "no tool results");
  std::vector<std::vector<std::string>> tools;
  for (const json::Value& t : s["tools"]) {
    tools.push_back({Cell(t["server"]), Cell(t["tool"]), Cell(t["calls"]), Cell(t["results"]),
                     Cell(t["distinctResults"]), Cell(t["maxDistinctResults"]), Cell(t["modelBacked"]),
                     t["contradictsReview"].get<bool>() ? "contradicts the review"
                     : t["nondeterministic"].get<bool>() ? "nondeterministic"
                                                         : "deterministic so far"});
  }
  html += HtmlTable({"server", "tool", "calls", "results", "distinct results", "max distinct (identical calls)",
                     "modelBacked", "verdict"},
                    tools);

  std::vector<std::vector<std::string>> indeterminate;
  for (const json::Value& r : s["indeterminate"]["byReason"]) indeterminate.push_back({Cell(r["reason"]), Cell(r["count"])});
  html += "<h2>Indeterminate outcomes</h2>\n<p>" + s["indeterminate"]["count"].dump() +
          " call(s) dispatched with an unknown outcome.</p>\n";
  if (!indeterminate.empty()) html += HtmlTable({"reason", "count"}, indeterminate);
  return html + internal::HtmlPageEnd();
}

}  // namespace udon::evidence
