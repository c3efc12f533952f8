#include "evidence/summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "evidence/percentile.h"
#include "json/access.h"
#include "json/file.h"

namespace udon::evidence {
namespace {

constexpr const char* kUnrecognized = "(unrecognized)";
constexpr std::size_t kMaxEvidenceBytes = std::size_t{1} << 30;

// The gate's steps in order; anything else a record names is reported after them.
const std::vector<std::string> kSteps = {"digest", "static", "connect", "list", "compare", "arguments", "dispatch"};

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
  for (const auto& [arguments, digests] : t.by_arguments) max_distinct = std::max(max_distinct, digests.size());
  const bool nondeterministic = max_distinct > 1;
  json::Value model_backed = nullptr;
  if (t.model_backed.size() == 1) model_backed = *t.model_backed.begin() == "true";
  if (t.model_backed.size() > 1) model_backed = "mixed";
  json::Value summary = {{"server", server},
                         {"tool", tool},
                         {"calls", t.calls},
                         {"results", t.results},
                         {"argumentSets", t.by_arguments.size()},
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

std::string Format(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f", value);
  return buffer;
}

std::string Cell(const json::Value& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "unknown";
  if (value.is_number_float()) return Format(value.get<double>());
  return value.dump();
}

std::string Row(const std::vector<std::string>& cells) {
  std::string row = "|";
  for (const std::string& cell : cells) row += " " + cell + " |";
  return row + "\n";
}

std::string Header(const std::vector<std::string>& cells) {
  std::string separator = "|";
  for (std::size_t i = 0; i < cells.size(); ++i) separator += " --- |";
  return Row(cells) + separator + "\n";
}

std::string XmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// What one pass over the records counts; each Count* below reads one concern of a record
// and each *Section turns its counts into a part of the report.
struct Tally {
  std::map<std::string, int> commands;
  std::map<std::string, std::pair<int, int>> codes;  // code -> (exit, count)
  std::map<int, int> exits;
  std::map<std::string, ChangeCounts> drift_kinds;
  int drift_incidents = 0;
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

  Tally() {
    for (const std::string& reason : kInvalidations) invalidations[reason] = 0;
  }
};

// A record without a readable exit counts as internal (1): it says nothing better.
void CountOutcome(const gate::EvidenceRecord& record, Tally& t) {
  const int exit_code = record.exit.value_or(1);
  ++t.commands[Token(record.command)];
  auto& code_entry = t.codes[Token(record.code)];
  code_entry.first = exit_code;
  ++code_entry.second;
  ++t.exits[exit_code];
  if (ClassifyDrift(record, t.drift_kinds)) ++t.drift_incidents;
}

void CountListChanged(const gate::EvidenceRecord& record, Tally& t) {
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

void CountLatency(const gate::EvidenceRecord& record, Tally& t) {
  if (record.steps) {
    for (const gate::EvidenceStep& step : *record.steps) {
      if (step.ms) t.step_ms[Token(step.step)].push_back(*step.ms);
    }
  }
  if (record.gate_ms) t.gate_ms.push_back(*record.gate_ms);
  if (record.dispatched.value_or(false)) t.call_ms.push_back(record.call_ms.value_or(0.0));
}

// Result digests per tool. capture's records (how each server was opened) are no tool's.
void CountResults(const gate::EvidenceRecord& record, Tally& t) {
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

void OutcomeSections(const Tally& t, json::Value& summary) {
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

json::Value DriftSection(const Tally& t) {
  json::Value kinds = json::Value::array();
  for (const auto& [kind, counts] : t.drift_kinds) {
    json::Value changes = {{"added", 0}, {"removed", 0}, {"changed", 0}};
    for (const auto& [change, count] : counts.changes) changes[change] = count;
    kinds.push_back({{"kind", kind}, {"incidents", counts.incidents}, {"pointers", changes}});
  }
  return {{"incidents", t.drift_incidents}, {"kinds", std::move(kinds)}};
}

json::Value IndeterminateSection(const Tally& t) {
  json::Value reasons = json::Value::array();
  for (const auto& [reason, count] : t.indeterminate) reasons.push_back({{"reason", reason}, {"count", count}});
  return {{"count", t.indeterminate_count}, {"byReason", std::move(reasons)}};
}

// The gate's steps in their order, then any other step a record names.
json::Value LatencySection(const Tally& t) {
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
  UDON_ASSIGN_OR_RETURN(std::string text, json::ReadFile(path, kMaxEvidenceBytes));
  ++set.files;
  AddEvidenceText(text, set);
  return OkStatus();
}

json::Value Summarize(const EvidenceSet& set) {
  Tally t;
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

std::string SummarySvg(const json::Value& s) {
  constexpr int kWidth = 720, kLabel = 150, kBarMax = 420, kRow = 22;
  std::vector<std::pair<std::string, std::pair<double, double>>> steps;  // step -> (p50, p90)
  double slowest = 0;
  for (const json::Value& step : s["latency"]["steps"]) {
    steps.push_back({step["step"].get<std::string>(), {step["p50"].get<double>(), step["p90"].get<double>()}});
    slowest = std::max(slowest, step["p90"].get<double>());
  }
  std::vector<std::pair<std::string, int>> kinds;
  int most = 0;
  for (const json::Value& kind : s["drift"]["kinds"]) {
    kinds.push_back({kind["kind"].get<std::string>(), kind["incidents"].get<int>()});
    most = std::max(most, kinds.back().second);
  }
  const int latency_top = 50;
  const int drift_title = latency_top + static_cast<int>(std::max<std::size_t>(steps.size(), 1)) * kRow + 40;
  const int drift_top = drift_title + 20;
  const int height = drift_top + static_cast<int>(std::max<std::size_t>(kinds.size(), 1)) * kRow + 20;

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
                    std::to_string(height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<title>udon-mcp evidence: gate-step latency and drift incidents</title>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"10\" y=\"24\" font-size=\"15\" font-weight=\"bold\">Gate-step latency, ms (bar: p50, "
         "tick: p90)</text>\n";
  const auto scale = [](double value, double maximum) {
    return maximum <= 0 ? 0 : static_cast<int>(value / maximum * kBarMax + 0.5);
  };
  int y = latency_top;
  if (steps.empty()) svg += "<text x=\"10\" y=\"" + std::to_string(y + 14) + "\">no timings</text>\n";
  for (const auto& [step, p] : steps) {
    const int bar = scale(p.first, slowest), tick = scale(p.second, slowest);
    svg += "<text x=\"10\" y=\"" + std::to_string(y + 14) + "\">" + XmlEscape(step) + "</text>\n";
    svg += "<rect x=\"" + std::to_string(kLabel) + "\" y=\"" + std::to_string(y + 3) + "\" width=\"" +
           std::to_string(bar) + "\" height=\"14\" fill=\"#4a7ab5\"/>\n";
    svg += "<line x1=\"" + std::to_string(kLabel + tick) + "\" y1=\"" + std::to_string(y + 1) + "\" x2=\"" +
           std::to_string(kLabel + tick) + "\" y2=\"" + std::to_string(y + 19) +
           "\" stroke=\"#c0392b\" stroke-width=\"2\"/>\n";
    svg += "<text x=\"" + std::to_string(kLabel + std::max(bar, tick) + 8) + "\" y=\"" + std::to_string(y + 14) +
           "\">" + Format(p.first) + " / " + Format(p.second) + "</text>\n";
    y += kRow;
  }
  svg += "<text x=\"10\" y=\"" + std::to_string(drift_title) +
         "\" font-size=\"15\" font-weight=\"bold\">Drift incidents by kind</text>\n";
  y = drift_top;
  if (kinds.empty()) svg += "<text x=\"10\" y=\"" + std::to_string(y + 14) + "\">no drift observed</text>\n";
  for (const auto& [kind, count] : kinds) {
    const int bar = scale(count, most);
    svg += "<text x=\"10\" y=\"" + std::to_string(y + 14) + "\">" + XmlEscape(kind) + "</text>\n";
    svg += "<rect x=\"" + std::to_string(kLabel) + "\" y=\"" + std::to_string(y + 3) + "\" width=\"" +
           std::to_string(bar) + "\" height=\"14\" fill=\"#d68910\"/>\n";
    svg += "<text x=\"" + std::to_string(kLabel + bar + 8) + "\" y=\"" + std::to_string(y + 14) + "\">" +
           std::to_string(count) + "</text>\n";
    y += kRow;
  }
  return svg + "</svg>\n";
}

}  // namespace udon::evidence
