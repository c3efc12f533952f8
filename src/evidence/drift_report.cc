#include "evidence/drift_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "evidence/drift_gate.h"
#include "json/display.h"
#include "base/file.h"
#include "manifest/diff.h"
#include "manifest/drift_kind.h"

namespace udon::evidence {
namespace {

constexpr std::size_t kMaxIndexBytes = std::size_t{16} << 20;
// Every manifest's one server goes under this key, so that DiffManifests compares the
// servers of two releases whatever key each capture gave them.
constexpr const char* kViewKey = "server";

bool EndsWith(const std::string& text, std::string_view end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// A file named by an index: relative, without a ".." segment.
bool StaysInside(const std::string& file) {
  if (file.empty() || file[0] == '/') return false;
  std::size_t start = 0;
  while (start <= file.size()) {
    const std::size_t end = std::min(file.find('/', start), file.size());
    if (file.compare(start, end - start, "..") == 0) return false;
    start = end + 1;
  }
  return true;
}

Error IndexError(const std::string& message, const std::string& pointer) {
  return MakeError("evidence.index_invalid", message, pointer);
}

// One difference of a pair: the tool it concerns ("" for the server and the catalog) and
// its kind.
struct Difference {
  std::string tool;
  std::string kind;
};

// Every difference DiffManifests found, one per pointer (an added, removed or renamed tool,
// a reordering and a changed review count once each), except the capture instants, in
// which any two captures differ.
std::vector<Difference> DifferencesOf(const manifest::ManifestDiff& diff) {
  std::vector<Difference> out;
  for (const json::Difference& d : diff.top_level) {
    if (!manifest::IsInstantPointer(d.pointer)) out.push_back({"", manifest::TopLevelKind(d.pointer)});
  }
  for (const manifest::ServerDiff& server : diff.servers) {
    for (const json::Difference& d : server.server_info) out.push_back({"", manifest::ServerInfoKind(d.pointer)});
    if (server.reordered) {
      const bool order = std::count(server.kinds.begin(), server.kinds.end(), "catalog.order") > 0;
      out.push_back({"", order ? "catalog.order" : "catalog.pages"});
    }
    for (const std::string& tool : server.reviews_changed) out.push_back({tool, "review.changed"});
    for (const manifest::ToolDiff& tool : server.tools) {
      if (tool.status == manifest::ChangeStatus::kAdded || tool.status == manifest::ChangeStatus::kRemoved) {
        out.push_back({tool.name, tool.kinds.front()});
        continue;
      }
      for (const std::string& kind : tool.difference_kinds) out.push_back({tool.name, kind});
    }
  }
  return out;
}

Result<std::string> ServerKeyOf(const manifest::Manifest& m, const std::string& wanted, std::size_t index) {
  const std::vector<std::string> keys = m.server_keys();
  if (!wanted.empty() && m.has_server(wanted)) return wanted;
  if (wanted.empty() && keys.size() == 1) return keys.front();
  Error error = wanted.empty() && keys.size() > 1
                    ? MakeError("usage.invalid", "the manifest holds several servers: choose one with --server")
                    : MakeError("manifest.server_unknown", "the server is not in the manifest");
  error.details["index"] = index;
  return error;
}

// The manifest with only its selected server, under kViewKey.
Result<manifest::Manifest> ServerView(const manifest::Manifest& m, const std::string& wanted, std::size_t index) {
  UDON_ASSIGN_OR_RETURN(const std::string key, ServerKeyOf(m, wanted, index));
  json::Value document = m.document();
  json::Value server = std::move(document["servers"][key]);
  document["servers"] = {{kViewKey, std::move(server)}};
  return manifest::Manifest::FromValue(std::move(document));
}

json::Value InfoMember(const manifest::Manifest& view, const char* member) {
  const json::Value* info = view.server_info(kViewKey);
  if (info == nullptr || !info->is_object() || !info->contains(member)) return nullptr;
  return (*info)[member];
}

json::Value SeriesEntry(const SeriesManifest& entry, const manifest::Manifest& view) {
  std::size_t tools = 0;
  for (const auto& [name, count] : view.ToolNames(kViewKey)) tools += count;
  const std::optional<std::string> protocol = view.protocol_version();
  return {{"label", entry.label},
          {"manifestSha256", entry.manifest.sha256()},
          {"serverName", InfoMember(view, "name")},
          {"serverVersion", InfoMember(view, "version")},
          {"protocolVersion", protocol ? json::Value(*protocol) : json::Value(nullptr)},
          {"toolCount", tools}};
}

// The first occurrence's description, escaped for display (null when absent), and what
// the escaping hid.
json::Value ShownDescription(const manifest::Manifest& view, const std::string& tool, std::size_t& hidden) {
  const std::vector<manifest::ToolLocation> found = view.FindTool(kViewKey, tool);
  if (found.empty() || !found.front().tool->contains("description")) return nullptr;
  const json::Value& description = (*found.front().tool)["description"];
  const std::string text = description.is_string() ? description.get<std::string>() : description.dump();
  json::DisplayText shown = json::ForDisplay(text, json::LineBreaks::kKeep);
  hidden += shown.hidden.code_points.size() + shown.hidden.invalid_bytes;
  return shown.text;
}

// With --show: each changed tool's description, before and after, escaped.
json::Value DescriptionChanges(const manifest::ManifestDiff& diff, const manifest::Manifest& before,
                               const manifest::Manifest& after) {
  json::Value out = json::Value::array();
  for (const manifest::ServerDiff& server : diff.servers) {
    for (const manifest::ToolDiff& tool : server.tools) {
      bool described = false;
      for (const json::Difference& d : tool.differences) described = described || d.pointer == "/description";
      if (!described) continue;
      std::size_t hidden = 0;
      json::Value old_text = ShownDescription(before, tool.name, hidden);
      json::Value new_text = ShownDescription(after, tool.name, hidden);
      out.push_back({{"tool", tool.name},
                     {"pointer", "/description"},
                     {"before", std::move(old_text)},
                     {"after", std::move(new_text)},
                     {"hiddenCodePoints", hidden}});
    }
  }
  return out;
}

// What the whole report accumulates pair by pair.
struct DriftTally {
  std::vector<int> refused;  // per rule of DriftRules()
  std::map<std::string, json::Value> histories;
  std::map<std::string, std::map<std::string, int>> kind_totals;  // kind -> differences / pairs / tools
  int catalog_changed = 0;
  int catalog_changed_version_unchanged = 0;
  int catalog_changed_version_changed = 0;
  int version_changed_catalog_unchanged = 0;
};

void AddEvent(DriftTally& t, const std::string& tool, json::Value event) {
  auto [it, inserted] = t.histories.try_emplace(tool, json::Value::array());
  it->second.push_back(std::move(event));
}

void RecordHistories(const manifest::ManifestDiff& diff, std::size_t to, DriftTally& t) {
  for (const manifest::ServerDiff& server : diff.servers) {
    for (const manifest::ToolDiff& tool : server.tools) {
      json::Value event = {{"index", to}};
      switch (tool.status) {
        case manifest::ChangeStatus::kAdded: event["event"] = "added"; break;
        case manifest::ChangeStatus::kRemoved: event["event"] = "removed"; break;
        case manifest::ChangeStatus::kRenamed:
          event["event"] = "added";
          event["renamedFrom"] = tool.renamed_from;
          AddEvent(t, tool.renamed_from, {{"index", to}, {"event", "removed"}, {"renamedTo", tool.name}});
          break;
        case manifest::ChangeStatus::kChanged: {
          event["event"] = "changed";
          event["kinds"] = tool.kinds;
          json::Value pointers = json::Value::array();
          for (const json::Difference& d : tool.differences) pointers.push_back(d.pointer);
          event["pointers"] = std::move(pointers);
          break;
        }
      }
      AddEvent(t, tool.name, std::move(event));
    }
  }
}

json::Value CountKinds(const std::vector<Difference>& differences, DriftTally& t) {
  json::Value kinds = json::Value::object();
  std::set<std::string> seen;
  for (const Difference& d : differences) {
    kinds[d.kind] = kinds.value(d.kind, 0) + 1;
    ++t.kind_totals[d.kind]["differences"];
    if (seen.insert(d.kind).second) ++t.kind_totals[d.kind]["pairs"];
  }
  return kinds;
}

// A tool's kinds are counted per tool; a kind seen only there (not among the pair's
// differences, `pair_kinds`) still counts the pair once, so every kind's `pairs` is right.
json::Value CountToolKinds(const manifest::ManifestDiff& diff, const json::Value& pair_kinds, DriftTally& t) {
  json::Value kinds = json::Value::object();
  for (const manifest::ServerDiff& server : diff.servers) {
    for (const manifest::ToolDiff& tool : server.tools) {
      for (const std::string& kind : tool.kinds) {
        if (!kinds.contains(kind) && !pair_kinds.contains(kind)) ++t.kind_totals[kind]["pairs"];
        kinds[kind] = kinds.value(kind, 0) + 1;
        ++t.kind_totals[kind]["tools"];
      }
    }
  }
  return kinds;
}

json::Value RefusedBy(const std::vector<Difference>& differences, DriftTally& t) {
  json::Value refused = json::Value::object();
  const std::vector<DriftRule>& rules = DriftRules();
  for (std::size_t r = 0; r < rules.size(); ++r) {
    bool refuses = false;
    for (const Difference& d : differences) {
      refuses = refuses || (IsCatalogKind(d.kind) && !RuleIgnores(rules[r], d.kind));
    }
    refused[rules[r].name] = refuses;
    if (refuses) ++t.refused[r];
  }
  return refused;
}

bool HasKind(const std::vector<Difference>& differences, std::string_view prefix) {
  for (const Difference& d : differences) {
    if (d.kind.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

json::Value PairReport(std::size_t from, const manifest::Manifest& before, const manifest::Manifest& after,
                       bool show, DriftTally& t) {
  const manifest::ManifestDiff diff = manifest::DiffManifests(before, after);
  const std::vector<Difference> differences = DifferencesOf(diff);
  json::Value refused = RefusedBy(differences, t);
  const bool catalog = refused["exact"].get<bool>();
  const bool version = HasKind(differences, "server.info.version");
  t.catalog_changed += catalog;
  t.catalog_changed_version_unchanged += catalog && !version;
  t.catalog_changed_version_changed += catalog && version;
  t.version_changed_catalog_unchanged += version && !catalog;
  RecordHistories(diff, from + 1, t);
  const json::Value kinds = CountKinds(differences, t);
  json::Value pair = {{"from", from},
                      {"to", from + 1},
                      {"catalogChanged", catalog},
                      {"serverVersionChanged", version},
                      {"serverInfoChanged", HasKind(differences, "server.info.")},
                      {"protocolVersionChanged", HasKind(differences, "server.protocol_version")},
                      {"differences", differences.size()},
                      {"kinds", kinds},
                      {"toolKinds", CountToolKinds(diff, kinds, t)},
                      {"refusedBy", std::move(refused)},
                      {"gate", GateVerdict(before, after, kViewKey)}};
  if (show) pair["descriptions"] = DescriptionChanges(diff, before, after);
  return pair;
}

json::Value RuleTable(const DriftTally& t, std::size_t pairs) {
  json::Value rules = json::Value::array();
  const std::vector<DriftRule>& all = DriftRules();
  for (std::size_t r = 0; r < all.size(); ++r) {
    rules.push_back({{"rule", all[r].name},
                     {"refusedPairs", t.refused[r]},
                     {"pairs", pairs},
                     {"avoidedRefusals", t.refused[0] - t.refused[r]},
                     {"ignores", all[r].ignored}});
  }
  return rules;
}

json::Value ToolHistories(const manifest::Manifest& first, DriftTally& t) {
  // The first release's tools are added at index 0, before any pair's events.
  for (const auto& [name, count] : first.ToolNames(kViewKey)) {
    auto [it, inserted] = t.histories.try_emplace(name, json::Value::array());
    it->second.insert(it->second.begin(), json::Value{{"index", 0}, {"event", "added"}});
  }
  json::Value tools = json::Value::array();
  for (auto& [name, history] : t.histories) tools.push_back({{"name", name}, {"history", std::move(history)}});
  return tools;
}

}  // namespace

std::string LabelForFile(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  for (std::string_view end : {std::string_view(".tools.json"), std::string_view(".json")}) {
    if (EndsWith(name, end) && name.size() > end.size()) return name.substr(0, name.size() - end.size());
  }
  return name;
}

Result<std::vector<SeriesFile>> ReadSeriesIndex(const std::string& directory) {
  const std::string dir = EndsWith(directory, "/") ? directory : directory + "/";
  UDON_ASSIGN_OR_RETURN(const std::string text, base::ReadFile(dir + "index.json", kMaxIndexBytes));
  UDON_ASSIGN_OR_RETURN(const json::Value index, json::Parse(text));
  if (!index.is_object() || !index.contains("series") || !index["series"].is_array()) {
    return IndexError("the index has no \"series\" array", "/series");
  }
  std::vector<SeriesFile> files;
  for (std::size_t i = 0; i < index["series"].size(); ++i) {
    const json::Value& entry = index["series"][i];
    const std::string at = "/series/" + std::to_string(i);
    if (!entry.is_object() || !entry.contains("file") || !entry["file"].is_string()) {
      return IndexError("a series entry has no \"file\" string", at + "/file");
    }
    const std::string file = entry["file"].get<std::string>();
    if (!StaysInside(file)) return IndexError("a series file must be a relative path inside the directory", at + "/file");
    if (entry.contains("label") && !entry["label"].is_string()) {
      return IndexError("a series label must be a string", at + "/label");
    }
    files.push_back({dir + file, entry.contains("label") ? entry["label"].get<std::string>() : LabelForFile(file)});
  }
  return files;
}

std::vector<std::string> SeriesWarnings(const json::Value& report) {
  std::vector<std::string> warnings;
  const json::Value& series = report["series"];
  for (std::size_t i = 1; i < series.size(); ++i) {
    const json::Value& before = series[i - 1]["serverName"];
    const json::Value& after = series[i]["serverName"];
    if (before == after) continue;
    const auto name = [](const json::Value& v) { return v.is_string() ? v.get<std::string>() : std::string("(none)"); };
    warnings.push_back("releases " + series[i - 1]["label"].get<std::string>() + " and " +
                       series[i]["label"].get<std::string>() + " name different servers (serverInfo.name " +
                       json::ForDisplay(name(before), json::LineBreaks::kEscape).text + " -> " +
                       json::ForDisplay(name(after), json::LineBreaks::kEscape).text +
                       "): a drift report compares releases of one server");
  }
  return warnings;
}

const std::vector<DriftRule>& DriftRules() {
  static const std::vector<DriftRule> rules = [] {
    std::vector<DriftRule> list = {
        {"exact", {}},
        {"ignore_documentation", {"input_schema.documentation", "output_schema.documentation"}},
        {"ignore_annotations", {"tool.annotations"}},
        {"ignore_meta_icons", {"tool._meta", "tool.icons"}},
        {"ignore_order", {"catalog.order", "catalog.pages"}},
        {"accept_widened_input", {"input_schema.widened"}},
    };
    DriftRule all{"all_relaxations", {}};
    for (const DriftRule& rule : list) all.ignored.insert(all.ignored.end(), rule.ignored.begin(), rule.ignored.end());
    list.push_back(std::move(all));
    return list;
  }();
  return rules;
}

bool IsCatalogKind(std::string_view kind) {
  for (std::string_view prefix : {"catalog.", "tool.", "input_schema.", "output_schema."}) {
    if (kind.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

bool RuleIgnores(const DriftRule& rule, std::string_view kind) {
  for (const std::string& ignored : rule.ignored) {
    if (kind == ignored) return true;
    if (kind.size() > ignored.size() && kind.substr(0, ignored.size()) == ignored && kind[ignored.size()] == '.') {
      return true;
    }
  }
  return false;
}

Result<json::Value> BuildDriftReport(const std::vector<SeriesManifest>& series, const DriftReportOptions& options) {
  if (series.size() < 2) return MakeError("usage.invalid", "a drift report needs at least two manifests");
  std::vector<manifest::Manifest> views;
  json::Value entries = json::Value::array();
  for (std::size_t i = 0; i < series.size(); ++i) {
    UDON_ASSIGN_OR_RETURN(manifest::Manifest view, ServerView(series[i].manifest, options.server, i));
    entries.push_back(SeriesEntry(series[i], view));
    views.push_back(std::move(view));
  }
  DriftTally t;
  t.refused.assign(DriftRules().size(), 0);
  json::Value pairs = json::Value::array();
  for (std::size_t i = 0; i + 1 < views.size(); ++i) pairs.push_back(PairReport(i, views[i], views[i + 1], options.show, t));
  const std::size_t pair_count = pairs.size();
  json::Value totals = json::Value::object();
  for (const auto& [kind, counts] : t.kind_totals) {
    totals[kind] = {{"differences", 0}, {"pairs", 0}, {"tools", 0}};
    for (const auto& [what, count] : counts) totals[kind][what] = count;
  }
  json::Value gate = GateTotals(pairs);
  return json::Value{
      {"profile", kDriftReportProfile},
      {"series", std::move(entries)},
      {"pairs", std::move(pairs)},
      {"tools", ToolHistories(views.front(), t)},
      {"rules", RuleTable(t, pair_count)},
      {"kindTotals", std::move(totals)},
      {"gate", std::move(gate)},
      {"versionIdentifiesCatalog",
       {{"pairs", pair_count},
        {"catalogChanged", t.catalog_changed},
        {"catalogChangedVersionUnchanged", t.catalog_changed_version_unchanged},
        {"catalogChangedVersionChanged", t.catalog_changed_version_changed},
        {"versionChangedCatalogUnchanged", t.version_changed_catalog_unchanged}}},
      {"showsDescriptions", options.show}};
}

}  // namespace udon::evidence
