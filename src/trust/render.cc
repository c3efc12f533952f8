#include "trust/render.h"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "json/pointer.h"

namespace udon::trust {
namespace {

bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// Consumes "<name>[<digits>]" at `at`; returns the position after it, or npos.
std::size_t IndexedSegment(std::string_view path, std::size_t at, std::string_view name) {
  if (!StartsWith(path.substr(at), name)) return std::string_view::npos;
  std::size_t i = at + name.size();
  if (i >= path.size() || path[i] != '[') return std::string_view::npos;
  std::size_t digits = ++i;
  while (i < path.size() && path[i] >= '0' && path[i] <= '9') ++i;
  if (i == digits || i >= path.size() || path[i] != ']') return std::string_view::npos;
  return i + 1;
}

// The graph node a report path belongs to: its operation, its innermost step, its
// workflow, its result, or the path itself (variables and unresolved labels).
std::string Owner(std::string_view path) {
  if (std::size_t end = IndexedSegment(path, 0, "operations"); end != std::string_view::npos) {
    return std::string(path.substr(0, end));
  }
  if (std::size_t end = IndexedSegment(path, 0, "results"); end != std::string_view::npos) {
    return std::string(path.substr(0, end));
  }
  std::size_t end = IndexedSegment(path, 0, "workflows");
  if (end == std::string_view::npos) return std::string(path);
  while (true) {
    std::size_t next = IndexedSegment(path, end, ".steps");
    if (next == std::string_view::npos) next = IndexedSegment(path, end, ".default");
    if (next == std::string_view::npos) {
      std::size_t in_case = IndexedSegment(path, end, ".cases");
      if (in_case != std::string_view::npos) next = IndexedSegment(path, in_case, ".steps");
    }
    if (next == std::string_view::npos) break;
    end = next;
  }
  return std::string(path.substr(0, end));
}

// "workflows[0].steps[1]" as the pointer /workflows/0/steps/1.
std::string ToPointer(std::string_view owner) {
  std::string pointer = "/";
  for (char c : owner) {
    if (c == '.' || c == '[') {
      pointer.push_back('/');
    } else if (c != ']') {
      pointer.push_back(c);
    }
  }
  return pointer;
}

std::string NodeLabel(const std::string& owner, const json::Value& document) {
  auto id = [&](const char* key) -> std::string {
    auto pointer = json::Pointer::Parse(ToPointer(owner));
    const json::Value* node = pointer.ok() ? pointer->Resolve(document) : nullptr;
    if (node == nullptr || !node->is_object()) return owner;
    auto it = node->find(key);
    return it != node->end() && it->is_string() ? it->get<std::string>() : owner;
  };
  if (StartsWith(owner, "operations[")) return "operation " + id("operationId");
  if (StartsWith(owner, "results[")) return "result " + id("name");
  if (StartsWith(owner, "workflows[")) {
    return owner.find('.') == std::string::npos ? "workflow " + id("workflowId") : "step " + id("stepId");
  }
  return owner;
}

const char* Shape(const std::string& owner) {
  if (StartsWith(owner, "operations[")) return "box";
  if (StartsWith(owner, "workflows[")) return owner.find('.') == std::string::npos ? "folder" : "ellipse";
  if (StartsWith(owner, "results[")) return "note";
  return "plaintext";
}

const char* Colour(std::string_view provenance) {
  if (provenance == "untrusted") return "red";
  if (provenance == "unknown") return "orange";
  return "grey40";
}

std::string Quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

// What an edge feeds, relative to its node: "inputs.prompt" for a step's input.
std::string Use(const std::string& to, const std::string& owner) {
  if (to.size() <= owner.size()) return to;
  std::string rest = to.substr(owner.size());
  return rest.front() == '.' ? rest.substr(1) : rest;
}

}  // namespace

std::string RenderText(const Report& report) {
  std::string out;
  std::size_t high = 0;
  for (const Finding& finding : report.findings) high += finding.severity == "high" ? 1 : 0;
  out += "findings: " + std::to_string(report.findings.size()) + " (" + std::to_string(high) + " high, " +
         std::to_string(report.findings.size() - high) + " warning)\n";
  for (const Finding& finding : report.findings) {
    out += "  " + finding.severity + (finding.severity == "high" ? "     " : "  ") + finding.code + "  " +
           finding.path + "\n      " + finding.message + "\n";
  }
  out += "edges: " + std::to_string(report.edges.size()) + "\n";
  for (const Edge& edge : report.edges) {
    out += "  " + edge.from + " -> " + edge.to + "  [" + edge.provenance + ", " + edge.capability + "]\n";
  }
  return out;
}

std::string RenderDot(const Report& report, const json::Value& document) {
  std::set<std::string> nodes;
  std::map<std::string, std::set<std::string>> codes;
  std::map<std::string, bool> has_high;
  for (const Finding& finding : report.findings) {
    const std::string owner = Owner(finding.path);
    nodes.insert(owner);
    std::string_view code = finding.code;
    if (StartsWith(code, "content_trust.")) code.remove_prefix(14);
    codes[owner].insert(std::string(code));
    has_high[owner] = has_high[owner] || finding.severity == "high";
  }
  std::set<std::tuple<std::string, std::string, std::string, std::string>> lines;
  for (const Edge& edge : report.edges) {
    const std::string from = Owner(edge.from);
    const std::string to = Owner(edge.to);
    nodes.insert(from);
    nodes.insert(to);
    if (from == to) continue;  // flows inside one operation or step are the node itself
    lines.insert({from, to, Use(edge.to, to) + "\n" + edge.capability, edge.provenance});
  }

  std::string out = "digraph content_trust {\n  rankdir=LR;\n  node [fontname=\"Helvetica\"];\n"
                    "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  for (const std::string& node : nodes) {
    std::string label = NodeLabel(node, document);
    std::string attributes = "shape=" + std::string(Shape(node));
    if (auto found = codes.find(node); found != codes.end()) {
      for (const std::string& code : found->second) label += "\n! " + code;
      attributes += std::string(", peripheries=2, color=") + (has_high[node] ? "red" : "orange");
    }
    out += "  " + Quote(node) + " [label=" + Quote(label) + ", " + attributes + "];\n";
  }
  for (const auto& [from, to, label, provenance] : lines) {
    out += "  " + Quote(from) + " -> " + Quote(to) + " [label=" + Quote(label) + ", color=" + Colour(provenance) +
           ", fontcolor=" + Colour(provenance) + "];\n";
  }
  out += "}\n";
  return out;
}

}  // namespace udon::trust
