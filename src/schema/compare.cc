#include "schema/compare.h"

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <vector>

#include "json/diff.h"
#include "json/pointer.h"
#include "schema/schema.h"

namespace udon::schema {
namespace {

using json::Value;

constexpr std::size_t kMaxDepth = 64;  // deeper schemas compare as restructured

constexpr std::array<std::string_view, 8> kDocumentationKeywords = {
    "description", "title", "examples", "$comment", "default", "deprecated", "readOnly", "writeOnly"};

// Keywords that change the meaning of every `$ref` or that name targets by other means
// than a JSON pointer: with any of these, a change is restructured.
constexpr std::array<std::string_view, 6> kOpaqueReferenceKeywords = {
    "$dynamicRef", "$recursiveRef", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$id"};

// The keywords the comparison decides; every other keyword must be equal on both sides.
constexpr std::array<std::string_view, 8> kDecidedKeywords = {
    "type", "enum", "const", "required", "uniqueItems", "properties", "additionalProperties", "items"};
constexpr std::array<std::string_view, 5> kLowerBounds = {"minimum", "exclusiveMinimum", "minLength", "minItems",
                                                          "minProperties"};
constexpr std::array<std::string_view, 5> kUpperBounds = {"maximum", "exclusiveMaximum", "maxLength", "maxItems",
                                                          "maxProperties"};

template <std::size_t N>
bool Among(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool IsDecided(std::string_view name) {
  return Among(kDecidedKeywords, name) || Among(kLowerBounds, name) || Among(kUpperBounds, name);
}

// Both steps hold at once (a conjunction): the weaker common conclusion.
SchemaDrift Join(SchemaDrift a, SchemaDrift b) {
  if (a == b) return a;
  const bool opposite = (a == SchemaDrift::kWidened && b == SchemaDrift::kNarrowed) ||
                        (a == SchemaDrift::kNarrowed && b == SchemaDrift::kWidened);
  if (opposite) return SchemaDrift::kRestructured;
  return std::max(a, b);  // kSame < kDocumentation < kWidened, kNarrowed < kRestructured
}

// Calls visit on every subschema directly below a schema object, as the keywords' shapes
// say (draft-07's array form of `items` included).
template <typename V, typename F>
void ForEachSubschema(V& schema, F visit) {
  for (auto& [name, value] : schema.items()) {
    const KeywordValue shape = KeywordValueOf(name);
    if (shape == KeywordValue::kSchemaMap && value.is_object()) {
      for (auto& [key, sub] : value.items()) visit(sub);
    } else if ((shape == KeywordValue::kSchemaArray || shape == KeywordValue::kSchema) && value.is_array()) {
      for (auto& sub : value) visit(sub);
    } else if (shape == KeywordValue::kSchema) {
      visit(value);
    }
  }
}

void StripDocumentation(Value& schema) {
  if (!schema.is_object()) return;
  for (std::string_view name : kDocumentationKeywords) schema.erase(std::string(name));
  ForEachSubschema(schema, [](Value& sub) { StripDocumentation(sub); });
}

struct References {
  std::set<std::string> refs;
  bool opaque = false;
};

void CollectReferences(const Value& schema, bool root, References& out) {
  if (!schema.is_object()) return;
  for (std::string_view name : kOpaqueReferenceKeywords) {
    if (schema.contains(std::string(name)) && !(root && name == "$id")) out.opaque = true;
  }
  if (auto ref = schema.find("$ref"); ref != schema.end()) {
    if (ref->is_string()) {
      out.refs.insert(ref->get<std::string>());
    } else {
      out.opaque = true;
    }
  }
  ForEachSubschema(schema, [&out](const Value& sub) { CollectReferences(sub, false, out); });
}

// Whether every `$ref` of either schema means the same on both sides: a local JSON pointer
// whose target is equal in both (those targets' own references are checked alike).
bool ReferencesUnchanged(const Value& before, const Value& after) {
  References refs;
  CollectReferences(before, true, refs);
  CollectReferences(after, true, refs);
  if (refs.opaque) return false;
  for (const std::string& ref : refs.refs) {
    if (ref.empty() || ref[0] != '#' || ref.find('%') != std::string::npos) return false;
    auto pointer = json::Pointer::Parse(std::string_view(ref).substr(1));
    if (!pointer.ok() || pointer->empty()) return false;
    const Value* a = pointer->Resolve(before);
    const Value* b = pointer->Resolve(after);
    if (a == nullptr || b == nullptr || !json::CanonicallyEqual(*a, *b)) return false;
  }
  return true;
}

bool IsEverything(const Value& schema) {
  return (schema.is_boolean() && schema.get<bool>()) || (schema.is_object() && schema.empty());
}
bool IsNothing(const Value& schema) { return schema.is_boolean() && !schema.get<bool>(); }

// Two sets by their inclusions: covers(true) says old is within new, covers(false) the
// reverse; a side marked "all" (the keyword absent) holds every value.
template <typename Contains>
SchemaDrift CompareSets(bool old_all, bool new_all, Contains covers) {
  if (old_all && new_all) return SchemaDrift::kSame;
  if (old_all) return SchemaDrift::kNarrowed;
  if (new_all) return SchemaDrift::kWidened;
  const bool wider = covers(true), narrower = covers(false);
  if (wider && narrower) return SchemaDrift::kSame;
  if (wider) return SchemaDrift::kWidened;
  return narrower ? SchemaDrift::kNarrowed : SchemaDrift::kRestructured;
}

// `type` as a list of names; false when malformed.
bool TypesOf(const Value& schema, std::vector<std::string>& types) {
  auto type = schema.find("type");
  if (type == schema.end()) return true;
  if (type->is_string()) {
    types.push_back(type->get<std::string>());
    return true;
  }
  if (!type->is_array()) return false;
  for (const Value& t : *type) {
    if (!t.is_string()) return false;
    types.push_back(t.get<std::string>());
  }
  return true;
}

SchemaDrift CompareTypes(const Value& a, const Value& b) {
  std::vector<std::string> old_types, new_types;
  if (!TypesOf(a, old_types) || !TypesOf(b, new_types)) return SchemaDrift::kRestructured;
  // Every type of sub is a type of super, integer counting as within number.
  auto covered = [](const std::vector<std::string>& super, const std::vector<std::string>& sub) {
    auto has = [&super](const std::string& t) { return std::find(super.begin(), super.end(), t) != super.end(); };
    return std::all_of(sub.begin(), sub.end(), [&has](const std::string& t) {
      return has(t) || (t == "integer" && has("number"));
    });
  };
  return CompareSets(!a.contains("type"), !b.contains("type"), [&](bool wider) {
    return wider ? covered(new_types, old_types) : covered(old_types, new_types);
  });
}

bool IsSubset(const Value& sub, const Value& super) {
  return std::all_of(sub.begin(), sub.end(), [&super](const Value& v) {
    return std::any_of(super.begin(), super.end(), [&v](const Value& w) { return json::CanonicallyEqual(v, w); });
  });
}

// `enum` and `const` as sets of values; absent, the set of all.
SchemaDrift CompareValueSets(const Value& a, const Value& b, const std::string& keyword) {
  auto values = [&keyword](const Value& schema) {
    const Value& v = schema[keyword];
    return keyword == "const" ? Value::array({v}) : v;
  };
  const bool old_all = !a.contains(keyword), new_all = !b.contains(keyword);
  if ((!old_all && !values(a).is_array()) || (!new_all && !values(b).is_array())) return SchemaDrift::kRestructured;
  return CompareSets(old_all, new_all, [&](bool wider) {
    return wider ? IsSubset(values(a), values(b)) : IsSubset(values(b), values(a));
  });
}

// `required`: absent, no names; fewer names accept more.
SchemaDrift CompareRequired(const Value& a, const Value& b) {
  static const Value kNone = Value::array();
  const Value& old_names = a.contains("required") ? a["required"] : kNone;
  const Value& new_names = b.contains("required") ? b["required"] : kNone;
  if (!old_names.is_array() || !new_names.is_array()) return SchemaDrift::kRestructured;
  return CompareSets(false, false, [&](bool wider) {
    return wider ? IsSubset(new_names, old_names) : IsSubset(old_names, new_names);
  });
}

// A lower (or upper) bound: absent means unbounded.
SchemaDrift CompareBound(const Value& a, const Value& b, const std::string& keyword, bool lower) {
  const bool in_a = a.contains(keyword), in_b = b.contains(keyword);
  if (!in_a && !in_b) return SchemaDrift::kSame;
  if ((in_a && !a[keyword].is_number()) || (in_b && !b[keyword].is_number())) return SchemaDrift::kRestructured;
  if (!in_a || !in_b) return in_b ? SchemaDrift::kNarrowed : SchemaDrift::kWidened;
  // long double holds every int64, uint64 and double exactly: the order is exact.
  const long double old_bound = a[keyword].get<long double>(), new_bound = b[keyword].get<long double>();
  if (old_bound == new_bound) return SchemaDrift::kSame;
  return (new_bound < old_bound) == lower ? SchemaDrift::kWidened : SchemaDrift::kNarrowed;
}

SchemaDrift CompareBounds(const Value& a, const Value& b) {
  SchemaDrift drift = SchemaDrift::kSame;
  for (std::string_view name : kLowerBounds) drift = Join(drift, CompareBound(a, b, std::string(name), true));
  for (std::string_view name : kUpperBounds) drift = Join(drift, CompareBound(a, b, std::string(name), false));
  const Value* unique_a = a.contains("uniqueItems") ? &a["uniqueItems"] : nullptr;
  const Value* unique_b = b.contains("uniqueItems") ? &b["uniqueItems"] : nullptr;
  if ((unique_a && !unique_a->is_boolean()) || (unique_b && !unique_b->is_boolean())) return SchemaDrift::kRestructured;
  const bool was = unique_a && unique_a->get<bool>(), is = unique_b && unique_b->get<bool>();
  if (was != is) drift = Join(drift, was ? SchemaDrift::kWidened : SchemaDrift::kNarrowed);
  return drift;
}

SchemaDrift CompareSchema(const Value& a, const Value& b, std::size_t depth);

const Value& MemberOr(const Value& schema, const char* name, const Value& fallback) {
  auto it = schema.find(name);
  return it == schema.end() ? fallback : *it;
}

// properties and additionalProperties together: per name, the schema that applies to it.
SchemaDrift CompareProperties(const Value& a, const Value& b, std::size_t depth) {
  static const Value kEverything = true, kNone = Value::object();
  const Value& props_a = MemberOr(a, "properties", kNone);
  const Value& props_b = MemberOr(b, "properties", kNone);
  const Value& extra_a = MemberOr(a, "additionalProperties", kEverything);
  const Value& extra_b = MemberOr(b, "additionalProperties", kEverything);
  if (!props_a.is_object() || !props_b.is_object()) return SchemaDrift::kRestructured;
  std::set<std::string> names;
  for (const auto& [name, sub] : props_a.items()) names.insert(name);
  for (const auto& [name, sub] : props_b.items()) names.insert(name);
  const bool same_names = names.size() == props_a.size() && names.size() == props_b.size();
  // A pattern or unevaluatedProperties decides which names count as additional: only
  // changes within properties of the same names are decided then.
  const bool interplay = a.contains("patternProperties") || b.contains("patternProperties") ||
                         a.contains("unevaluatedProperties") || b.contains("unevaluatedProperties");
  if (interplay && (!same_names || !json::CanonicallyEqual(extra_a, extra_b))) return SchemaDrift::kRestructured;
  SchemaDrift drift = CompareSchema(extra_a, extra_b, depth + 1);  // names in neither list
  for (const std::string& name : names) {
    if (drift == SchemaDrift::kRestructured) break;
    drift = Join(drift, CompareSchema(MemberOr(props_a, name.c_str(), extra_a), MemberOr(props_b, name.c_str(), extra_b),
                                      depth + 1));
  }
  return drift;
}

// `items` as one schema for every element (after prefixItems, which must be equal).
SchemaDrift CompareItems(const Value& a, const Value& b, std::size_t depth) {
  static const Value kEverything = true;
  const Value& items_a = MemberOr(a, "items", kEverything);
  const Value& items_b = MemberOr(b, "items", kEverything);
  if (json::CanonicallyEqual(items_a, items_b)) return SchemaDrift::kSame;
  if (items_a.is_array() || items_b.is_array()) return SchemaDrift::kRestructured;  // draft-07 tuples
  const bool interplay = a.contains("unevaluatedItems") || b.contains("unevaluatedItems");
  if (interplay && a.contains("items") != b.contains("items")) return SchemaDrift::kRestructured;
  return CompareSchema(items_a, items_b, depth + 1);
}

SchemaDrift CompareObjects(const Value& a, const Value& b, std::size_t depth) {
  for (const Value* side : {&a, &b}) {
    const Value& other = side == &a ? b : a;
    for (const auto& [name, value] : side->items()) {
      if (IsDecided(name)) continue;
      auto there = other.find(name);
      if (there == other.end() || !json::CanonicallyEqual(value, *there)) return SchemaDrift::kRestructured;
    }
  }
  SchemaDrift drift = Join(CompareTypes(a, b), CompareBounds(a, b));
  for (const char* keyword : {"enum", "const"}) drift = Join(drift, CompareValueSets(a, b, keyword));
  drift = Join(drift, CompareRequired(a, b));
  if (drift == SchemaDrift::kRestructured) return drift;
  drift = Join(drift, CompareItems(a, b, depth));
  if (drift == SchemaDrift::kRestructured) return drift;
  return Join(drift, CompareProperties(a, b, depth));
}

// Documentation keywords are gone by now: any difference is one of meaning.
SchemaDrift CompareSchema(const Value& a, const Value& b, std::size_t depth) {
  if (json::CanonicallyEqual(a, b)) return SchemaDrift::kSame;
  if (depth > kMaxDepth) return SchemaDrift::kRestructured;
  const bool all_a = IsEverything(a), all_b = IsEverything(b);
  if (all_a && all_b) return SchemaDrift::kSame;
  if (IsNothing(a) || all_b) return SchemaDrift::kWidened;
  if (all_a || IsNothing(b)) return SchemaDrift::kNarrowed;
  if (!a.is_object() || !b.is_object()) return SchemaDrift::kRestructured;
  return CompareObjects(a, b, depth);
}

}  // namespace

const char* SchemaDriftName(SchemaDrift drift) {
  switch (drift) {
    case SchemaDrift::kSame: return "same";
    case SchemaDrift::kDocumentation: return "documentation";
    case SchemaDrift::kWidened: return "widened";
    case SchemaDrift::kNarrowed: return "narrowed";
    case SchemaDrift::kRestructured: return "restructured";
  }
  return "restructured";
}

bool IsDocumentationKeyword(std::string_view name) { return Among(kDocumentationKeywords, name); }

SchemaDrift CompareSchemas(const json::Value& before, const json::Value& after) {
  if (json::CanonicallyEqual(before, after)) return SchemaDrift::kSame;
  Value a = before, b = after;
  StripDocumentation(a);
  StripDocumentation(b);
  if (json::CanonicallyEqual(a, b)) return SchemaDrift::kDocumentation;
  if (!ReferencesUnchanged(a, b)) return SchemaDrift::kRestructured;
  const SchemaDrift drift = CompareSchema(a, b, 0);
  // Written differently, accepting the same instances (a `{}` property where any value was
  // allowed): "widened" is true of it, and the weaker claim.
  return drift == SchemaDrift::kSame ? SchemaDrift::kWidened : drift;
}

}  // namespace udon::schema
