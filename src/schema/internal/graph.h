// The compiled form of a schema: nodes with pre-resolved references, pre-compiled regular
// expressions and pre-sorted property tables. Immutable once compiled.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "json/json.h"
#include "schema/internal/format.h"
#include "schema/internal/regex.h"

namespace udon::schema::internal {

// Instance type bits; kInteger is checked for numbers with an integral value.
enum TypeBit : std::uint8_t {
  kNull = 1,
  kBoolean = 2,
  kObject = 4,
  kArray = 8,
  kNumber = 16,
  kString = 32,
  kInteger = 64,
};

struct Node;

// A schema resource as the dynamic scope sees it.
struct ResourceNodes {
  std::unordered_map<std::string, const Node*> dynamic_anchors;
};

// Order matters: the kinds before kContains, and kMinProperties..kDependentRequired, apply
// no subschema (Node::leaf relies on it).
enum class KeywordKind : std::uint8_t {
  kEnum,
  kConst,
  kLength,  // minLength and maxLength: the code points are counted once
  kPattern,
  kFormat,
  kMinimum,
  kMaximum,
  kExclusiveMinimum,
  kExclusiveMaximum,
  kMultipleOf,
  kMinItems,
  kMaxItems,
  kUniqueItems,
  kContains,
  kMinProperties,
  kMaxProperties,
  kRequired,
  kDependentRequired,
  kProperties,  // properties + patternProperties + additionalProperties in one pass
  kPropertyNames,
  kDependentSchemas,
  kItems,  // prefixItems + items (2020-12) or items + additionalItems (draft-07)
  kRef,
  kDynamicRef,
  kAllOf,
  kAnyOf,
  kOneOf,
  kNot,
  kIf,
  kUnevaluatedItems,
  kUnevaluatedProperties,
};

struct NamedNode {
  std::string name;
  const Node* node = nullptr;
  bool required = false;  // also named by the sibling "required" (see Keyword::flag)
};

struct PatternNode {
  std::string pattern;
  std::shared_ptr<const Regex> regex;
  const Node* node = nullptr;
};

struct Keyword {
  KeywordKind kind;
  std::uint8_t applies_to = 0;  // TypeBit mask of instances it constrains; 0: all
  std::string name;             // the keyword as spelled in the schema, for locations

  double number = 0;          // numeric limits (also integral limits when is_integer)
  std::int64_t integer = 0;   // the same limit when it is an integer
  bool is_integer = false;
  std::uint64_t count = 0;    // length/size limits, minContains
  std::uint64_t max_count = 0;
  bool has_max = false;       // maxContains present
  // uniqueItems true; draft-07 item keyword spelling; an all-string enum; a "required"
  // whose names are all in the sibling "properties", which then counts them (kProperties
  // .count) on the fast path.
  bool flag = false;
  json::Value value;          // const; enum (array)
  std::shared_ptr<const Regex> regex;
  FormatCheck format = nullptr;
  std::string format_name;

  const Node* sub = nullptr;      // not, contains, propertyNames, items rest, $ref target,
                                  // additionalProperties, unevaluated*
  const Node* then_node = nullptr;
  const Node* else_node = nullptr;
  std::vector<const Node*> subs;  // allOf/anyOf/oneOf, prefix items
  std::vector<NamedNode> named;   // properties / dependentSchemas, sorted by name
  std::vector<PatternNode> patterns;
  std::vector<std::string> strings;  // required; the string members of enum (sorted)
  std::vector<std::pair<std::string, std::vector<std::string>>> dependencies;
  std::string dynamic_name;       // $dynamicRef: the anchor name when bookended
  bool has_properties = false;    // which spellings kProperties covers
  bool has_patterns = false;
};

struct Node {
  enum class Trivial : std::uint8_t { kNone, kTrue, kFalse };
  Trivial trivial = Trivial::kNone;
  std::uint8_t type_mask = 0;  // 0: no "type" keyword
  bool collects_properties = false;  // has unevaluatedProperties
  bool collects_items = false;       // has unevaluatedItems
  bool leaf = false;                 // no keyword applies a subschema
  std::vector<Keyword> keywords;
  const ResourceNodes* resource = nullptr;
  std::string location;  // absolute URI of this schema ("uri#/pointer")
};

struct Graph {
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::unique_ptr<ResourceNodes>> resources;
  std::vector<std::shared_ptr<const json::Value>> documents;
  const Node* root = nullptr;
  bool uses_dynamic_scope = false;
  bool format_assertion = false;
  std::size_t max_depth = 1024;
};

}  // namespace udon::schema::internal
