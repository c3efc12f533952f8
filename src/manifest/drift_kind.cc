#include "manifest/drift_kind.h"

#include <charconv>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "manifest/diff.h"
#include "schema/compare.h"

namespace udon::manifest {
namespace {

using Occurrences = std::vector<const json::Value*>;

constexpr const char* kHints[] = {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"};

// The first token of a pointer ("" for the whole value).
std::string FirstToken(const std::string& pointer) {
  if (pointer.empty()) return "";
  const std::size_t end = pointer.find('/', 1);
  return pointer.substr(1, end == std::string::npos ? std::string::npos : end - 1);
}

std::string AnnotationKind(const std::string& member) {
  for (const char* hint : kHints) {
    if (member == hint) return std::string("tool.annotations.") + hint;
  }
  return "tool.annotations.other";
}

// DiffManifests' "[occurrence N]/..." prefix: the occurrence's index and the pointer after it.
std::pair<std::size_t, std::string> SplitOccurrence(const std::string& pointer) {
  const std::string prefix = "[occurrence ";
  if (pointer.rfind(prefix, 0) != 0) return {0, pointer};
  const std::size_t close = pointer.find(']');
  if (close == std::string::npos) return {0, pointer};
  std::size_t number = 0;
  std::from_chars(pointer.data() + prefix.size(), pointer.data() + close, number);
  return {number > 0 ? number - 1 : 0, pointer.substr(close + 1)};
}

const json::Value* Member(const Occurrences& tools, std::size_t index, const char* name) {
  if (index >= tools.size() || !tools[index]->is_object()) return nullptr;
  auto it = tools[index]->find(name);
  return it == tools[index]->end() ? nullptr : &*it;
}

// input_schema.* or output_schema.*: the schema's drift as a whole.
std::string SchemaKind(const char* member, const char* prefix, std::size_t index, const Occurrences& before,
                       const Occurrences& after) {
  const json::Value* old_schema = Member(before, index, member);
  const json::Value* new_schema = Member(after, index, member);
  if (old_schema == nullptr) return std::string(prefix) + ".added";
  if (new_schema == nullptr) return std::string(prefix) + ".removed";
  schema::SchemaDrift drift = schema::CompareSchemas(*old_schema, *new_schema);
  // json::Diff saw a difference: a verdict of "same" would contradict it, so say nothing.
  if (drift == schema::SchemaDrift::kSame) drift = schema::SchemaDrift::kRestructured;
  return std::string(prefix) + "." + schema::SchemaDriftName(drift);
}

std::string KindOf(const std::string& pointer, const Occurrences& before, const Occurrences& after) {
  const auto [index, rest] = SplitOccurrence(pointer);
  const std::string area = ToolChangeArea(rest);
  if (area == "tool") return "catalog.occurrences";
  if (area == "name") return "tool.renamed";
  if (area == "inputSchema") return SchemaKind("inputSchema", "input_schema", index, before, after);
  if (area == "outputSchema") return SchemaKind("outputSchema", "output_schema", index, before, after);
  if (area == "annotations") {
    if (rest == "/annotations") return "tool.annotations";
    return AnnotationKind(FirstToken(rest.substr(std::string_view("/annotations").size())));
  }
  return "tool." + area;  // description, title, execution, icons, _meta, other
}

// The hints that differ between two annotations objects (absent or not an object: none).
void AddHintKinds(const json::Value* old_annotations, const json::Value* new_annotations,
                  std::set<std::string>& kinds) {
  static const json::Value kNone = json::Value::object();
  const json::Value& a = old_annotations && old_annotations->is_object() ? *old_annotations : kNone;
  const json::Value& b = new_annotations && new_annotations->is_object() ? *new_annotations : kNone;
  for (const json::Difference& d : json::Diff(a, b)) kinds.insert(AnnotationKind(FirstToken(d.pointer)));
}

}  // namespace

const std::vector<std::string>& DriftKinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> list = {
        "manifest.profile", "manifest.captured_at", "manifest.expires_at", "manifest.other",
        "server.added", "server.removed", "server.protocol_version",
        "server.info.name", "server.info.version", "server.info.title", "server.info.other",
        "catalog.order", "catalog.pages", "catalog.occurrences",
        "tool.added", "tool.removed", "tool.renamed", "tool.title", "tool.description", "tool.annotations"};
    for (const char* hint : kHints) list.push_back(std::string("tool.annotations.") + hint);
    for (const char* kind : {"tool.annotations.other", "tool.execution", "tool.icons", "tool._meta", "tool.other"}) {
      list.push_back(kind);
    }
    for (const char* schema : {"input_schema", "output_schema"}) {
      for (const char* drift : {"added", "removed", "documentation", "widened", "narrowed", "restructured"}) {
        list.push_back(std::string(schema) + "." + drift);
      }
    }
    list.push_back("review.changed");
    return list;
  }();
  return kinds;
}

std::string TopLevelKind(const std::string& pointer) {
  const std::string member = FirstToken(pointer);
  if (member == "protocolVersion") return "server.protocol_version";
  if (member == "capturedAt") return "manifest.captured_at";
  if (member == "expiresAt") return "manifest.expires_at";
  return member == "profile" ? "manifest.profile" : "manifest.other";
}

std::string ServerInfoKind(const std::string& pointer) {
  const std::string member = FirstToken(pointer);
  for (const char* known : {"name", "version", "title"}) {
    if (member == known) return std::string("server.info.") + known;
  }
  return "server.info.other";
}

std::vector<std::string> ToolDifferenceKinds(const std::vector<json::Difference>& differences,
                                             const Occurrences& before, const Occurrences& after) {
  std::vector<std::string> kinds;
  std::map<std::string, std::string> schema_kinds;  // one comparison per schema and occurrence
  for (const json::Difference& d : differences) {
    const auto [index, rest] = SplitOccurrence(d.pointer);
    const std::string area = ToolChangeArea(rest);
    if (area != "inputSchema" && area != "outputSchema") {
      kinds.push_back(KindOf(d.pointer, before, after));
      continue;
    }
    const std::string key = area + "#" + std::to_string(index);
    auto cached = schema_kinds.find(key);
    if (cached == schema_kinds.end()) cached = schema_kinds.emplace(key, KindOf(d.pointer, before, after)).first;
    kinds.push_back(cached->second);
  }
  return kinds;
}

std::vector<std::string> ToolKinds(const std::vector<json::Difference>& differences,
                                   const std::vector<std::string>& kinds, const Occurrences& before,
                                   const Occurrences& after) {
  std::set<std::string> all(kinds.begin(), kinds.end());
  for (const json::Difference& d : differences) {
    const auto [index, rest] = SplitOccurrence(d.pointer);
    if (rest == "/annotations") {
      AddHintKinds(Member(before, index, "annotations"), Member(after, index, "annotations"), all);
    }
  }
  return {all.begin(), all.end()};
}

}  // namespace udon::manifest
