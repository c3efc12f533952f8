#include "manifest/diff.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "json/display.h"
#include "json/pointer.h"
#include "manifest/drift_kind.h"
#include "manifest/internal/report_line.h"

namespace udon::manifest {
namespace {

using internal::ReportLine;
using Occurrences = std::vector<const json::Value*>;

// name -> its occurrences in page order, plus the overall name sequence.
std::map<std::string, Occurrences> IndexTools(const json::Value* pages,
                                              std::vector<std::string>& sequence) {
  std::map<std::string, Occurrences> index;
  if (pages == nullptr) return index;
  for (const json::Value& page : *pages) {
    for (const json::Value& tool : page["tools"]) {
      const std::string name = tool["name"].get<std::string>();
      index[name].push_back(&tool);
      sequence.push_back(name);
    }
  }
  return index;
}

json::Value WithoutName(const json::Value& tool) {
  json::Value copy = tool;
  copy.erase("name");
  return copy;
}

// A removed and an added tool that are equal but for their names look like a rename.
void PairRenames(std::vector<ToolDiff>& tools, const std::map<std::string, Occurrences>& before,
                 const std::map<std::string, Occurrences>& after) {
  for (ToolDiff& removed : tools) {
    if (removed.status != ChangeStatus::kRemoved) continue;
    for (ToolDiff& added : tools) {
      if (added.status != ChangeStatus::kAdded) continue;
      if (json::CanonicallyEqual(WithoutName(*before.at(removed.name).front()),
                                 WithoutName(*after.at(added.name).front()))) {
        added.status = ChangeStatus::kRenamed;
        added.renamed_from = removed.name;
        added.differences = {{"/name", json::DifferenceKind::kChanged}};
        added.difference_kinds = added.kinds = {"tool.renamed"};
        removed.name.clear();  // folded into the rename
        break;
      }
    }
  }
  tools.erase(std::remove_if(tools.begin(), tools.end(), [](const ToolDiff& t) { return t.name.empty(); }),
              tools.end());
}

// The server's kinds: its own (serverInfo, catalog, reviews) and its tools'.
std::vector<std::string> ServerKinds(const ServerDiff& server, bool order_changed) {
  std::set<std::string> kinds;
  for (const auto& d : server.server_info) kinds.insert(ServerInfoKind(d.pointer));
  if (server.reordered) kinds.insert(order_changed ? "catalog.order" : "catalog.pages");
  if (!server.reviews_changed.empty()) kinds.insert("review.changed");
  for (const ToolDiff& tool : server.tools) kinds.insert(tool.kinds.begin(), tool.kinds.end());
  return {kinds.begin(), kinds.end()};
}

ServerDiff DiffServer(const std::string& key, const Manifest& before, const Manifest& after) {
  ServerDiff server;
  server.key = key;
  const json::Value empty = json::Value::object();
  const json::Value* info_before = before.server_info(key);
  const json::Value* info_after = after.server_info(key);
  server.server_info = json::Diff(info_before ? *info_before : empty, info_after ? *info_after : empty);

  std::vector<std::string> order_before, order_after;
  auto tools_before = IndexTools(before.tool_pages(key), order_before);
  auto tools_after = IndexTools(after.tool_pages(key), order_after);
  for (const auto& [name, occurrences] : tools_before) {
    auto it = tools_after.find(name);
    if (it == tools_after.end()) {
      server.tools.push_back({name, ChangeStatus::kRemoved, "", {}, {}, {"tool.removed"}});
      continue;
    }
    ToolDiff diff{name, ChangeStatus::kChanged, "", {}, {}, {}};
    const std::size_t common = std::min(occurrences.size(), it->second.size());
    for (std::size_t i = 0; i < common; ++i) {
      for (auto& d : json::Diff(*occurrences[i], *it->second[i])) {
        if (i > 0) d.pointer = "[occurrence " + std::to_string(i + 1) + "]" + d.pointer;
        diff.differences.push_back(std::move(d));
      }
    }
    if (occurrences.size() != it->second.size()) {
      diff.differences.push_back({"", occurrences.size() < it->second.size()
                                          ? json::DifferenceKind::kAdded
                                          : json::DifferenceKind::kRemoved});
    }
    if (diff.differences.empty()) continue;
    diff.difference_kinds = ToolDifferenceKinds(diff.differences, occurrences, it->second);
    diff.kinds = ToolKinds(diff.differences, diff.difference_kinds, occurrences, it->second);
    server.tools.push_back(std::move(diff));
  }
  for (const auto& [name, occurrences] : tools_after) {
    if (!tools_before.count(name)) server.tools.push_back({name, ChangeStatus::kAdded, "", {}, {}, {"tool.added"}});
  }
  PairRenames(server.tools, tools_before, tools_after);

  std::vector<std::string> sorted_before = order_before, sorted_after = order_after;
  std::sort(sorted_before.begin(), sorted_before.end());
  std::sort(sorted_after.begin(), sorted_after.end());
  const json::Value* pages_before = before.tool_pages(key);
  const json::Value* pages_after = after.tool_pages(key);
  const bool same_paging = pages_before && pages_after && pages_before->size() == pages_after->size();
  server.reordered = sorted_before == sorted_after && (order_before != order_after || !same_paging);

  for (const std::string& side : {std::string("before"), std::string("after")}) {
    const Manifest& m = side == "before" ? before : after;
    const json::Value* entry = m.server(key);
    if (entry == nullptr || !entry->contains("reviews")) continue;
    for (const auto& [tool, review] : (*entry)["reviews"].items()) {
      const json::Value* a = before.review(key, tool);
      const json::Value* b = after.review(key, tool);
      const bool differs = a == nullptr || b == nullptr || !json::CanonicallyEqual(*a, *b);
      if (differs && std::find(server.reviews_changed.begin(), server.reviews_changed.end(), tool) ==
                         server.reviews_changed.end()) {
        server.reviews_changed.push_back(tool);
      }
    }
  }
  std::sort(server.reviews_changed.begin(), server.reviews_changed.end());
  server.kinds = ServerKinds(server, order_before != order_after);
  return server;
}

bool IsEmpty(const ServerDiff& s) {
  return s.server_info.empty() && s.tools.empty() && !s.reordered && s.reviews_changed.empty();
}

const json::Value* ToolAt(const Manifest& m, const std::string& server, const std::string& name) {
  auto found = m.FindTool(server, name);
  return found.empty() ? nullptr : found.front().tool;
}

json::Value ValueAt(const json::Value* root, const std::string& pointer) {
  if (root == nullptr) return nullptr;
  auto parsed = json::Pointer::Parse(pointer);
  if (!parsed.ok()) return nullptr;
  const json::Value* v = parsed->Resolve(*root);
  return v ? *v : json::Value();
}

// kinds: one per difference; kind_of names those not given.
json::Value DifferencesToJson(const std::vector<json::Difference>& diffs, const json::Value* before,
                              const json::Value* after, const std::vector<std::string>& kinds,
                              std::string (*kind_of)(const std::string&) = nullptr) {
  json::Value out = json::Value::array();
  for (std::size_t i = 0; i < diffs.size(); ++i) {
    const json::Difference& d = diffs[i];
    json::Value entry = {{"pointer", d.pointer}, {"change", json::DifferenceKindName(d.kind)},
                         {"kind", i < kinds.size() ? kinds[i] : kind_of(d.pointer)}};
    if (d.kind != json::DifferenceKind::kAdded) entry["old"] = ValueAt(before, d.pointer);
    if (d.kind != json::DifferenceKind::kRemoved) entry["new"] = ValueAt(after, d.pointer);
    out.push_back(std::move(entry));
  }
  return out;
}

std::string Show(const json::Value& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// "OLD -> NEW" after a pointer; the side a member is missing from reads "(absent)", so an
// absent value is never mistaken for a JSON null.
void ShowChange(ReportLine& line, json::DifferenceKind kind, const json::Value& old_value,
                const json::Value& new_value) {
  line.Fixed(": ");
  if (kind == json::DifferenceKind::kAdded) {
    line.Fixed("(absent)");
  } else {
    line.Shown(Show(old_value), "the old value");
  }
  line.Fixed(" -> ");
  if (kind == json::DifferenceKind::kRemoved) {
    line.Fixed("(absent)");
  } else {
    line.Shown(Show(new_value), "the new value");
  }
}

// A description change as a line diff: descriptions are read on their own lines, so
// their line breaks and tabs stay; the notes speak for the old and the new text.
void ShowDescriptionChange(ReportLine& line, const std::string& before, const std::string& after) {
  line.Fixed(":");
  std::istringstream lines(TextLineDiff(before, after));
  std::string below;
  for (std::string text; std::getline(lines, text);) {
    below += "      " + json::ForDisplay(text, json::LineBreaks::kKeep).text + "\n";
  }
  line.Below(std::move(below));
  line.Note(json::ForDisplay(before, json::LineBreaks::kKeep).hidden, "the old value");
  line.Note(json::ForDisplay(after, json::LineBreaks::kKeep).hidden, "the new value");
}

// "kinds: a, b" (fixed names: nothing to escape).
std::string KindsLine(const std::string& indent, const std::vector<std::string>& kinds) {
  std::string line = indent + "kinds:";
  for (std::size_t i = 0; i < kinds.size(); ++i) line += (i == 0 ? " " : ", ") + kinds[i];
  return line + "\n";
}

}  // namespace

const char* ChangeStatusName(ChangeStatus status) {
  switch (status) {
    case ChangeStatus::kAdded: return "added";
    case ChangeStatus::kRemoved: return "removed";
    case ChangeStatus::kChanged: return "changed";
    case ChangeStatus::kRenamed: return "renamed";
  }
  return "changed";
}

bool IsInstantPointer(const std::string& pointer) { return pointer == "/capturedAt" || pointer == "/expiresAt"; }

bool ManifestDiff::significant(bool strict) const {
  if (strict) return !identical();
  return !servers.empty() || std::any_of(top_level.begin(), top_level.end(), [](const json::Difference& d) {
           return !IsInstantPointer(d.pointer);
         });
}

ManifestDiff DiffManifests(const Manifest& before, const Manifest& after) {
  ManifestDiff diff;
  json::Value top_before = before.document(), top_after = after.document();
  top_before.erase("servers");
  top_after.erase("servers");
  diff.top_level = json::Diff(top_before, top_after);

  std::vector<std::string> keys = before.server_keys();
  for (const auto& key : after.server_keys()) {
    if (!before.has_server(key)) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  for (const auto& key : keys) {
    if (!after.has_server(key)) {
      diff.servers.push_back({key, ChangeStatus::kRemoved, {}, {}, false, {}, {"server.removed"}});
    } else if (!before.has_server(key)) {
      diff.servers.push_back({key, ChangeStatus::kAdded, {}, {}, false, {}, {"server.added"}});
    } else if (ServerDiff server = DiffServer(key, before, after); !IsEmpty(server)) {
      diff.servers.push_back(std::move(server));
    }
  }
  std::set<std::string> kinds;
  for (const auto& d : diff.top_level) kinds.insert(TopLevelKind(d.pointer));
  for (const ServerDiff& server : diff.servers) kinds.insert(server.kinds.begin(), server.kinds.end());
  diff.kinds.assign(kinds.begin(), kinds.end());
  return diff;
}

std::string ToolChangeArea(const std::string& pointer) {
  std::string token = pointer;
  if (!token.empty() && token[0] == '[') token = token.substr(token.find(']') + 1);
  if (token.empty()) return "tool";
  const std::size_t end = token.find('/', 1);
  const std::string first = token.substr(1, end == std::string::npos ? std::string::npos : end - 1);
  for (const char* area : {"description", "inputSchema", "outputSchema", "annotations", "execution",
                           "title", "icons", "_meta", "name"}) {
    if (first == area) return area;
  }
  return "other";
}

std::string TextLineDiff(const std::string& before, const std::string& after) {
  auto split = [](const std::string& text) {
    std::vector<std::string> lines;
    std::stringstream stream(text);
    std::string line;
    while (std::getline(stream, line)) lines.push_back(line);
    if (lines.empty()) lines.push_back("");
    return lines;
  };
  const auto a = split(before), b = split(after);
  std::string out;
  if (a.size() * b.size() > 4'000'000) {  // too large for LCS: show both whole
    for (const auto& l : a) out += "- " + l + "\n";
    for (const auto& l : b) out += "+ " + l + "\n";
    return out;
  }
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = a.size(); i-- > 0;) {
    for (std::size_t j = b.size(); j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      out += "  " + a[i++] + "\n";
      ++j;
    } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out += "- " + a[i++] + "\n";  // old lines first, as in a unified diff
    } else {
      out += "+ " + b[j++] + "\n";
    }
  }
  return out;
}

json::Value DiffToJson(const ManifestDiff& diff, const Manifest& before, const Manifest& after) {
  json::Value out = {{"identical", diff.identical()},
                     {"kinds", diff.kinds},
                     {"topLevel", DifferencesToJson(diff.top_level, &before.document(), &after.document(), {},
                                                    &TopLevelKind)},
                     {"servers", json::Value::array()}};
  for (const ServerDiff& server : diff.servers) {
    json::Value s = {{"server", server.key}, {"status", ChangeStatusName(server.status)}, {"kinds", server.kinds}};
    if (server.status == ChangeStatus::kChanged) {
      s["serverInfo"] = DifferencesToJson(server.server_info, before.server_info(server.key),
                                          after.server_info(server.key), {}, &ServerInfoKind);
      s["reordered"] = server.reordered;
      s["reviewsChanged"] = server.reviews_changed;
      s["tools"] = json::Value::array();
      for (const ToolDiff& tool : server.tools) {
        json::Value t = {{"name", tool.name}, {"status", ChangeStatusName(tool.status)}, {"kinds", tool.kinds}};
        if (tool.status == ChangeStatus::kRenamed) t["renamedFrom"] = tool.renamed_from;
        if (tool.status == ChangeStatus::kChanged) {
          t["differences"] = DifferencesToJson(tool.differences, ToolAt(before, server.key, tool.name),
                                               ToolAt(after, server.key, tool.name), tool.difference_kinds);
          for (auto& d : t["differences"]) d["area"] = ToolChangeArea(d["pointer"].get<std::string>());
        }
        s["tools"].push_back(std::move(t));
      }
    }
    out["servers"].push_back(std::move(s));
  }
  return out;
}

std::string DiffToText(const ManifestDiff& diff, const Manifest& before, const Manifest& after) {
  if (diff.identical()) return "identical\n";
  std::string out;
  if (!diff.significant(false)) {
    out += "only the capture instants differ (not significant; --strict makes them so)\n";
  }
  out += KindsLine("", diff.kinds);
  for (const auto& d : diff.top_level) {
    ReportLine line("");
    line.Fixed(json::DifferenceKindName(d.kind)).Fixed(" ").Shown(d.pointer, "the pointer");
    ShowChange(line, d.kind, ValueAt(&before.document(), d.pointer), ValueAt(&after.document(), d.pointer));
    line.AppendTo(out);
  }
  for (const ServerDiff& server : diff.servers) {
    ReportLine heading("");
    heading.Fixed("server ").Shown(server.key, "the server key").Fixed(": ").Fixed(ChangeStatusName(server.status));
    heading.AppendTo(out);
    for (const auto& d : server.server_info) {
      ReportLine line("  ");
      line.Fixed("serverInfo ").Shown(d.pointer, "the pointer").Fixed(" ").Fixed(json::DifferenceKindName(d.kind));
      ShowChange(line, d.kind, ValueAt(before.server_info(server.key), d.pointer),
                 ValueAt(after.server_info(server.key), d.pointer));
      line.AppendTo(out);
    }
    if (server.reordered) out += "  tools reordered or repaginated\n";
    for (const ToolDiff& tool : server.tools) {
      ReportLine tool_line("  ");
      tool_line.Fixed("tool ").Shown(tool.name, "the tool name").Fixed(": ").Fixed(ChangeStatusName(tool.status));
      if (tool.status == ChangeStatus::kRenamed) {
        tool_line.Fixed(" (from ").Shown(tool.renamed_from, "the old name").Fixed(")");
      }
      tool_line.AppendTo(out);
      if (tool.status != ChangeStatus::kChanged) continue;
      out += KindsLine("    ", tool.kinds);
      const json::Value* a = ToolAt(before, server.key, tool.name);
      const json::Value* b = ToolAt(after, server.key, tool.name);
      for (const auto& d : tool.differences) {
        const json::Value old_value = ValueAt(a, d.pointer), new_value = ValueAt(b, d.pointer);
        ReportLine line("    ");
        line.Fixed(json::DifferenceKindName(d.kind)).Fixed(" ").Shown(d.pointer, "the pointer");
        if (d.pointer == "/description" && old_value.is_string() && new_value.is_string()) {
          ShowDescriptionChange(line, old_value.get<std::string>(), new_value.get<std::string>());
        } else {
          ShowChange(line, d.kind, old_value, new_value);
        }
        line.AppendTo(out);
      }
    }
    for (const auto& tool : server.reviews_changed) {
      ReportLine line("  ");
      line.Fixed("review of ").Shown(tool, "the tool name").Fixed(" changed");
      line.AppendTo(out);
    }
  }
  return out;
}

}  // namespace udon::manifest
