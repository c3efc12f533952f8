#include "evidence/drift_gate.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "gate/comparison.h"
#include "json/canonical.h"

namespace udon::evidence {
namespace {

json::Value InfoOf(const manifest::Manifest& m, std::string_view server) {
  const json::Value* info = m.server_info(server);
  return info == nullptr ? json::Value() : *info;
}

json::Value Relaxed(const json::Value& info, const ServerInfoRule& rule) {
  if (rule.ignore_all) return json::Value::object();
  if (!info.is_object()) return info;
  json::Value out = json::Value::object();
  for (auto it = info.begin(); it != info.end(); ++it) {
    const std::string& key = it.key();
    const bool dropped = std::count(rule.dropped.begin(), rule.dropped.end(), key) > 0;
    const bool kept = rule.keep_only.empty() || std::count(rule.keep_only.begin(), rule.keep_only.end(), key) > 0;
    if (!dropped && kept) out[key] = it.value();
  }
  return out;
}

// The top-level serverInfo members a step-3 refusal's pointers name.
json::Value MembersOf(const Error& error) {
  std::set<std::string> members;
  for (const json::Value& d : error.details.value("pointers", json::Value::array())) {
    const std::string pointer = d.value("pointer", std::string());
    const std::size_t end = pointer.find('/', 1);
    members.insert(pointer.empty() ? std::string("(whole)") : pointer.substr(1, end == std::string::npos ? end : end - 1));
  }
  json::Value out = json::Value::array();
  for (const std::string& m : members) out.push_back(m);
  return out;
}

// The later capture's Tools as a listing: each Tool's bytes and name, as a server sends
// them; `tools` views the other two, so it is built once they are complete.
struct Listing {
  std::vector<std::string> bytes;
  std::vector<std::optional<std::string>> names;
  std::vector<gate::ListedTool> tools;
};

void FillListing(const manifest::Manifest& live, std::string_view server, Listing& listing) {
  const json::Value* pages = live.tool_pages(server);
  if (pages == nullptr || !pages->is_array()) return;
  for (const json::Value& page : *pages) {
    if (!page.is_object() || !page.contains("tools") || !page["tools"].is_array()) continue;
    for (const json::Value& tool : page["tools"]) {
      listing.bytes.push_back(tool.dump());
      const bool named = tool.is_object() && tool.contains("name") && tool["name"].is_string();
      listing.names.push_back(named ? std::optional<std::string>(tool["name"].get<std::string>()) : std::nullopt);
    }
  }
  for (std::size_t i = 0; i < listing.bytes.size(); ++i) {
    std::optional<std::string_view> name;
    if (listing.names[i]) name = *listing.names[i];
    listing.tools.push_back({name, listing.bytes[i]});
  }
}

// Steps 4 and 5 for one reviewed Tool: empty when the gate lets its call through, else the
// refusal's code.
std::string ToolRefusal(const manifest::Manifest& reviewed, std::string_view server, const std::string& name,
                        std::size_t reviewed_count, const Listing& listing) {
  if (reviewed_count != 1) return "catalog.tool_duplicate";
  const std::vector<manifest::ToolLocation> found = reviewed.FindTool(server, name);
  auto canonical = json::Canonicalize(*found.front().tool);
  if (!canonical.ok()) return "manifest.invalid";
  auto selected = gate::SelectListedTool(listing.tools, name);
  if (!selected.ok()) return selected.error().code;
  Status same = gate::CompareReviewedTool(*selected, *canonical);
  return same.ok() ? std::string() : same.error().code;
}

// Step 3 under one serverInfo rule: the step that refuses ("" when none).
std::string Step3(std::string_view reviewed_version, std::string_view negotiated, const json::Value& reviewed_info,
                  const json::Value& live_info, const ServerInfoRule& rule, Status* exact_status = nullptr) {
  Status same = gate::CompareNegotiated(reviewed_version, Relaxed(reviewed_info, rule), negotiated,
                                        Relaxed(live_info, rule));
  if (exact_status != nullptr) *exact_status = same;
  if (same.ok()) return "";
  return same.error().code == "server.protocol_version_mismatch" ? "protocol_version" : "server_info";
}

json::Value StepOrNull(const std::string& step) { return step.empty() ? json::Value(nullptr) : json::Value(step); }

}  // namespace

const std::vector<ServerInfoRule>& ServerInfoRules() {
  static const std::vector<ServerInfoRule> rules = {
      {"exact", {}, {}, false},
      {"ignore_version", {"version"}, {}, false},
      {"ignore_display", {"title", "description", "websiteUrl", "icons"}, {}, false},
      {"name_only", {}, {"name"}, false},
      {"ignore_server_info", {}, {}, true},
  };
  return rules;
}

std::string NegotiatedRevision(std::string_view reviewed, std::string_view live_newest) {
  return std::string(live_newest < reviewed ? live_newest : reviewed);
}

json::Value GateVerdict(const manifest::Manifest& reviewed, const manifest::Manifest& live, std::string_view server) {
  const std::string reviewed_version = reviewed.protocol_version().value_or("");
  const std::string live_version = live.protocol_version().value_or("");
  const std::string negotiated = NegotiatedRevision(reviewed_version, live_version);
  const json::Value reviewed_info = InfoOf(reviewed, server);
  const json::Value live_info = InfoOf(live, server);
  Listing listing;
  FillListing(live, server, listing);
  std::size_t tools = 0, refused = 0;
  json::Value codes = json::Value::object();
  for (const auto& [name, count] : reviewed.ToolNames(server)) {
    ++tools;
    const std::string code = ToolRefusal(reviewed, server, name, count, listing);
    if (code.empty()) continue;
    ++refused;
    codes[code] = codes.value(code, 0) + 1;
  }
  const std::string catalog = refused > 0 ? "catalog" : "";
  json::Value by_rule = json::Value::object();
  Status exact = OkStatus();
  json::Value members = json::Value::array();
  for (const ServerInfoRule& rule : ServerInfoRules()) {
    const bool is_exact = rule.name == "exact";
    const std::string step = Step3(reviewed_version, negotiated, reviewed_info, live_info, rule,
                                   is_exact ? &exact : nullptr);
    by_rule[rule.name] = StepOrNull(step.empty() ? catalog : step);
  }
  if (!exact.ok() && exact.error().code == "server.server_info_mismatch") members = MembersOf(exact.error());
  // Members that differ even where the protocol version refused first: compared alone.
  if (!exact.ok() && exact.error().code == "server.protocol_version_mismatch") {
    Status info = gate::CompareNegotiated(reviewed_version, reviewed_info, reviewed_version, live_info);
    if (!info.ok()) members = MembersOf(info.error());
  }
  return {{"refusedAt", by_rule["exact"]},
          {"capturedProtocolVersionsDiffer", reviewed_version != live_version},
          {"serverInfoMembers", std::move(members)},
          {"toolsReviewed", tools},
          {"toolsRefused", refused},
          {"toolRefusals", std::move(codes)},
          {"serverInfoRules", std::move(by_rule)}};
}

namespace {

void Add(json::Value& counts, const std::string& key, std::size_t by = 1) {
  counts[key] = counts.value(key, std::size_t{0}) + by;
}

}  // namespace

json::Value GateTotals(const json::Value& pairs) {
  json::Value at = {{"protocol_version", 0}, {"server_info", 0}, {"catalog", 0}};
  json::Value members = json::Value::object();
  json::Value codes = json::Value::object();
  std::vector<std::size_t> refused_by_rule(ServerInfoRules().size(), 0);
  std::size_t differ = 0, tools = 0, tools_refused = 0;
  for (const json::Value& pair : pairs) {
    const json::Value& gate = pair["gate"];
    if (!gate["refusedAt"].is_null()) Add(at, gate["refusedAt"].get<std::string>());
    differ += gate["capturedProtocolVersionsDiffer"].get<bool>();
    for (const json::Value& m : gate["serverInfoMembers"]) Add(members, m.get<std::string>());
    for (auto it = gate["toolRefusals"].begin(); it != gate["toolRefusals"].end(); ++it) {
      Add(codes, it.key(), it.value().get<std::size_t>());
    }
    tools += gate["toolsReviewed"].get<std::size_t>();
    tools_refused += gate["toolsRefused"].get<std::size_t>();
    for (std::size_t r = 0; r < ServerInfoRules().size(); ++r) {
      refused_by_rule[r] += !gate["serverInfoRules"][ServerInfoRules()[r].name].is_null();
    }
  }
  json::Value rules = json::Value::array();
  for (std::size_t r = 0; r < ServerInfoRules().size(); ++r) {
    rules.push_back({{"rule", ServerInfoRules()[r].name},
                     {"refusedPairs", refused_by_rule[r]},
                     {"avoidedRefusals", refused_by_rule[0] - refused_by_rule[r]}});
  }
  return {{"pairs", pairs.size()},
          {"refusedPairs", refused_by_rule[0]},
          {"refusedAt", std::move(at)},
          {"capturedProtocolVersionsDiffer", differ},
          {"serverInfoMembers", std::move(members)},
          {"toolsReviewed", tools},
          {"toolsRefused", tools_refused},
          {"toolRefusals", std::move(codes)},
          {"serverInfoRules", std::move(rules)}};
}

}  // namespace udon::evidence
