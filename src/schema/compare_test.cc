#include "schema/compare.h"

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "json/json.h"
#include "json/pointer.h"
#include "schema/internal/test_schemas.h"
#include "schema/schema.h"

namespace udon::schema {
namespace {

using json::Value;
using testing::J;

std::string Compare(std::string_view before, std::string_view after) {
  return SchemaDriftName(CompareSchemas(J(before), J(after)));
}

TEST(CompareSchemasTest, DocumentationOnly) {
  EXPECT_EQ(Compare(R"({"type":"string"})", R"({"type":"string"})"), "same");
  EXPECT_EQ(Compare(R"({"type":"string","description":"a"})", R"({"type":"string","description":"b"})"),
            "documentation");
  EXPECT_EQ(Compare(R"({"properties":{"a":{"type":"integer","title":"A","default":1}}})",
                    R"({"properties":{"a":{"type":"integer","examples":[2],"$comment":"c","deprecated":true,
                       "readOnly":true,"writeOnly":false}}})"),
            "documentation");
  EXPECT_EQ(Compare(R"({"anyOf":[{"type":"string","description":"a"}]})", R"({"anyOf":[{"type":"string"}]})"),
            "documentation");
  // A property whose name is a documentation keyword is a property, not documentation.
  EXPECT_EQ(Compare(R"({"properties":{}})", R"({"properties":{"description":{"type":"string"}}})"), "narrowed");
  // A value that holds a keyword's name is a value.
  EXPECT_EQ(Compare(R"({"enum":[{"title":1}]})", R"({"enum":[{"title":2}]})"), "restructured");
}

TEST(CompareSchemasTest, PropertiesAndAdditionalProperties) {
  // Added optional property: old rejected the name, so the new schema accepts more.
  EXPECT_EQ(Compare(R"({"type":"object","properties":{"a":{}},"additionalProperties":false})",
                    R"({"type":"object","properties":{"a":{},"b":{"type":"string"}},"additionalProperties":false})"),
            "widened");
  // Old accepted any value for the name; the new one constrains it.
  EXPECT_EQ(Compare(R"({"type":"object","properties":{"a":{}}})",
                    R"({"type":"object","properties":{"a":{},"b":{"type":"string"}}})"),
            "narrowed");
  // A property allowing anything, where anything was allowed: the same instances.
  EXPECT_EQ(Compare(R"({"type":"object"})", R"({"type":"object","properties":{"b":{"description":"x"}}})"),
            "widened");
  EXPECT_EQ(Compare(R"({"properties":{"a":{"type":"string"}}})", R"({"properties":{}})"), "widened");
  EXPECT_EQ(Compare(R"({"additionalProperties":false})", R"({})"), "widened");
  EXPECT_EQ(Compare(R"({"additionalProperties":{"type":"integer"}})", R"({"additionalProperties":false})"),
            "narrowed");
  EXPECT_EQ(Compare(R"({"properties":{"a":{"maximum":5}}})", R"({"properties":{"a":{"maximum":50}}})"), "widened");
  EXPECT_EQ(Compare(R"({"required":["a","b"]})", R"({"required":["b"]})"), "widened");
  EXPECT_EQ(Compare(R"({"required":["a"]})", R"({"required":["b","a"]})"), "narrowed");
  EXPECT_EQ(Compare(R"({"required":["a"]})", R"({"required":["b"]})"), "restructured");
  EXPECT_EQ(Compare(R"({})", R"({"required":["a"]})"), "narrowed");
  // A pattern decides which names are additional: not decided.
  EXPECT_EQ(Compare(R"({"patternProperties":{"^x":{}},"additionalProperties":false})",
                    R"({"patternProperties":{"^x":{}},"additionalProperties":false,"properties":{"b":{}}})"),
            "restructured");
}

TEST(CompareSchemasTest, ValuesTypesAndBounds) {
  EXPECT_EQ(Compare(R"({"enum":[1,2]})", R"({"enum":[2,1,3]})"), "widened");
  EXPECT_EQ(Compare(R"({"enum":[1,2]})", R"({"enum":[1]})"), "narrowed");
  EXPECT_EQ(Compare(R"({"enum":[1,2]})", R"({})"), "widened");
  EXPECT_EQ(Compare(R"({"const":1})", R"({"enum":[1]})"), "restructured");  // not decided, though equal
  EXPECT_EQ(Compare(R"({"type":"integer"})", R"({"type":"number"})"), "widened");
  EXPECT_EQ(Compare(R"({"type":"string"})", R"({"type":["string","null"]})"), "widened");
  EXPECT_EQ(Compare(R"({"type":["integer","number"]})", R"({"type":"number"})"), "widened");
  EXPECT_EQ(Compare(R"({"type":"string"})", R"({"type":"integer"})"), "restructured");
  EXPECT_EQ(Compare(R"({"minimum":1,"maxLength":3})", R"({"minimum":0,"maxLength":4})"), "widened");
  EXPECT_EQ(Compare(R"({"minItems":1})", R"({"minItems":2})"), "narrowed");
  EXPECT_EQ(Compare(R"({"exclusiveMaximum":1})", R"({})"), "widened");
  EXPECT_EQ(Compare(R"({"minimum":1})", R"({"minimum":1.0})"), "same");
  EXPECT_EQ(Compare(R"({"uniqueItems":true})", R"({"uniqueItems":false})"), "widened");
  EXPECT_EQ(Compare(R"({"items":{"maximum":1}})", R"({"items":{"maximum":2}})"), "widened");
  EXPECT_EQ(Compare(R"(true)", R"({"type":"object"})"), "narrowed");
  EXPECT_EQ(Compare(R"(false)", R"({"type":"object"})"), "widened");
  // Mixed directions.
  EXPECT_EQ(Compare(R"({"minimum":1,"maximum":3})", R"({"minimum":0,"maximum":2})"), "restructured");
}

TEST(CompareSchemasTest, UndecidedKeywordsAreRestructured) {
  for (const char* after : {R"({"type":"string","pattern":"^a"})", R"({"type":"string","format":"uri"})",
                            R"({"anyOf":[{"type":"string"},{"type":"null"}]})", R"({"type":"string","not":{}})",
                            R"({"type":"string","multipleOf":2})", R"({"type":"string","x-extension":1})"}) {
    EXPECT_EQ(Compare(R"({"type":"string"})", after), "restructured") << after;
  }
  EXPECT_EQ(Compare(R"({"items":[{"type":"string"}]})", R"({"items":[{}]})"), "restructured");
}

TEST(CompareSchemasTest, ReferencesAreFollowedOnlyToUnchangedTargets) {
  // The reference's target is unchanged: the change elsewhere is decided.
  EXPECT_EQ(Compare(R"({"properties":{"a":{"maximum":1},"b":{"$ref":"#/$defs/d"}},"$defs":{"d":{"type":"string"}}})",
                    R"({"properties":{"a":{"maximum":2},"b":{"$ref":"#/$defs/d"}},"$defs":{"d":{"type":"string"}}})"),
            "widened");
  // Widening a makes b (not a) narrower: the reference into the change is not followed.
  EXPECT_EQ(Compare(R"({"properties":{"a":{"maximum":1},"b":{"not":{"$ref":"#/properties/a"}}}})",
                    R"({"properties":{"a":{"maximum":2},"b":{"not":{"$ref":"#/properties/a"}}}})"),
            "restructured");
  EXPECT_EQ(Compare(R"({"properties":{"b":{"$ref":"#/$defs/d"}},"$defs":{"d":{"maximum":1}}})",
                    R"({"properties":{"b":{"$ref":"#/$defs/d"}},"$defs":{"d":{"maximum":2}}})"),
            "restructured");
  EXPECT_EQ(Compare(R"({"properties":{"a":{"maximum":1}},"$defs":{"d":{"$anchor":"x"}}})",
                    R"({"properties":{"a":{"maximum":2}},"$defs":{"d":{"$anchor":"x"}}})"),
            "restructured");
}

// ---- Sampled instances: random schema pairs from a base and its mutations, checked
// against the project's validator.

class Random {
 public:
  explicit Random(unsigned seed) : engine_(seed) {}
  int Below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(engine_); }
  bool Chance(int percent) { return Below(100) < percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& values) { return values[static_cast<std::size_t>(Below(static_cast<int>(values.size())))]; }

 private:
  std::mt19937 engine_;
};

const std::vector<std::string> kNames = {"a", "b", "c", "d"};
const std::vector<std::string> kStrings = {"", "a", "b", "ab", "ba", "aab"};

Value RandomScalar(Random& r) {
  switch (r.Below(5)) {
    case 0: return r.Below(10) - 3;
    case 1: return r.Below(10) - 2.5;
    case 2: return r.Pick(kStrings);
    case 3: return r.Chance(50);
    default: return nullptr;
  }
}

Value RandomObjectSchema(Random& r, int depth);

// The bounds that matter for a schema's type.
std::vector<const char*> BoundsFor(const Value& schema) {
  const Value type = schema.is_object() ? schema.value("type", Value()) : Value();
  if (type == "integer" || type == "number") return {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
  if (type == "array") return {"minItems", "maxItems"};
  if (type == "object") return {"minProperties", "maxProperties"};
  return {"minLength", "maxLength"};
}

// Moves a bound the schema has, drops it, or adds one.
void MutateBound(Value& s, Random& r) {
  std::vector<const char*> present;
  for (const char* bound : BoundsFor(s)) {
    if (s.contains(bound)) present.push_back(bound);
  }
  if (present.empty()) {
    s[r.Pick(BoundsFor(s))] = r.Below(5);
  } else if (const char* bound = r.Pick(present); r.Chance(20)) {
    s.erase(bound);
  } else {
    s[bound] = std::max(0, s[bound].get<int>() + r.Pick(std::vector<int>{-2, -1, 1, 2}));
  }
}

Value RandomPropertySchema(Random& r, int depth) {
  Value s = Value::object();
  switch (r.Below(depth < 2 ? 9 : 7)) {
    case 0: s = {{"type", "integer"}}; break;
    case 1: s = {{"type", "number"}}; break;
    case 2: s = {{"type", r.Chance(70) ? Value("string") : Value::array({"string", "null"})}}; break;
    case 3: s = {{"enum", Value::array({RandomScalar(r), RandomScalar(r), RandomScalar(r)})}}; break;
    case 4: return r.Chance(50) ? Value(true) : Value::object();
    case 5: s = {{"type", "boolean"}}; break;
    case 6: s = {{"const", RandomScalar(r)}}; break;
    case 7: s = {{"type", "array"}, {"items", RandomPropertySchema(r, depth + 1)}}; break;
    default: return RandomObjectSchema(r, depth + 1);
  }
  for (const char* bound : BoundsFor(s)) {
    if (r.Chance(35)) s[bound] = r.Below(5);
  }
  if (r.Chance(20)) s["description"] = "d";
  return s;
}

Value RandomObjectSchema(Random& r, int depth) {
  Value s = {{"type", "object"}, {"properties", Value::object()}};
  for (const std::string& name : kNames) {
    if (r.Chance(50)) s["properties"][name] = RandomPropertySchema(r, depth);
  }
  Value required = Value::array();
  for (const std::string& name : kNames) {
    if (r.Chance(25)) required.push_back(name);
  }
  if (!required.empty()) s["required"] = required;
  if (r.Chance(40)) s["additionalProperties"] = r.Chance(60) ? Value(false) : Value({{"type", "integer"}});
  if (r.Chance(10)) s["patternProperties"] = {{"^c", {{"type", "string"}}}};
  if (r.Chance(10)) s["unevaluatedProperties"] = false;
  return s;
}

// Pointers to every object schema below root along properties, items, additionalProperties
// and $defs: the places a mutation may touch.
void CollectTargets(const Value& schema, const json::Pointer& at, std::vector<json::Pointer>& out) {
  if (!schema.is_object()) return;
  out.push_back(at);
  for (const char* map : {"properties", "$defs"}) {
    if (!schema.contains(map) || !schema[map].is_object()) continue;
    for (const auto& [name, sub] : schema[map].items()) CollectTargets(sub, at.Child(map).Child(name), out);
  }
  for (const char* single : {"items", "additionalProperties"}) {
    if (schema.contains(single)) CollectTargets(schema[single], at.Child(single), out);
  }
}

// One edit: the operations the comparison decides, and some it must not.
void MutateAt(Value& s, Random& r) {
  const std::string name = r.Pick(kNames);
  switch (r.Below(16)) {
    case 0: s["properties"][name] = RandomPropertySchema(r, 2); break;
    case 1: if (s.contains("properties")) s["properties"].erase(name); break;
    case 2: s["required"].push_back(name); break;
    case 3: s["required"] = Value::array(); break;
    case 4: s["enum"].push_back(RandomScalar(r)); break;
    case 5: if (s.contains("enum") && !s["enum"].empty()) s["enum"].erase(0); else s.erase("enum"); break;
    case 6: MutateBound(s, r); break;
    case 7: if (r.Chance(50)) s.erase("additionalProperties"); else s["additionalProperties"] = r.Chance(50) ? Value(false) : Value({{"type", "string"}}); break;
    case 8: s["type"] = r.Pick(std::vector<Value>{"integer", "number", "string", "object", "array", Value::array({"string", "null"}), Value::array({"integer", "number"})}); break;
    case 9: s[r.Chance(50) ? "description" : "default"] = RandomScalar(r); break;
    case 10: s["pattern"] = "^a"; break;
    case 11: s = r.Chance(50); break;
    case 12: s["uniqueItems"] = r.Chance(50); break;
    case 13: if (r.Chance(50)) s.erase("const"); else s["const"] = RandomScalar(r); break;
    case 14: s = {{"anyOf", Value::array({s, {{"type", "null"}}})}}; break;
    default: s["items"] = RandomPropertySchema(r, 2); break;
  }
}

void Mutate(Value& schema, Random& r) {
  std::vector<json::Pointer> targets;
  CollectTargets(schema, json::Pointer(), targets);
  if (targets.empty()) return;  // a boolean schema
  MutateAt(*r.Pick(targets).Resolve(schema), r);
}

Value RandomValue(Random& r, int depth) {
  if (depth > 2 || r.Chance(60)) return RandomScalar(r);
  if (r.Chance(50)) {
    Value array = Value::array();
    for (int i = r.Below(4); i > 0; --i) array.push_back(RandomValue(r, depth + 1));
    return array;
  }
  Value object = Value::object();
  for (const std::string& name : kNames) {
    if (r.Chance(40)) object[name] = RandomValue(r, depth + 1);
  }
  return object;
}

// An instance near what the schema accepts: inside it mostly, at its edges often. A
// reference is followed (within root); `not` samples near what it excludes.
Value InstanceFor(const Value& root, const Value& schema, Random& r, int depth) {
  if (!schema.is_object() || depth > 3 || r.Chance(10)) return RandomValue(r, depth);
  auto near = [&](const Value& sub) { return InstanceFor(root, sub, r, depth + 1); };
  if (schema.contains("$ref")) {
    auto pointer = json::Pointer::Parse(schema["$ref"].get<std::string>().substr(1));
    const Value* target = pointer.ok() ? pointer->Resolve(root) : nullptr;
    return target ? InstanceFor(root, *target, r, depth + 1) : RandomValue(r, depth);
  }
  if (schema.contains("not")) return near(schema["not"]);
  if (schema.contains("anyOf")) return near(schema["anyOf"][0]);
  if (schema.contains("enum") && schema["enum"].is_array() && !schema["enum"].empty() && r.Chance(70)) {
    return schema["enum"][static_cast<std::size_t>(r.Below(static_cast<int>(schema["enum"].size())))];
  }
  if (schema.contains("const") && r.Chance(70)) return schema["const"];
  const Value type = schema.value("type", Value());
  if (type == "integer") return r.Below(9) - 2;
  if (type == "number") return r.Chance(50) ? Value(r.Below(9) - 2) : Value(r.Below(9) - 2.5);
  if (type == "array" || (type.is_null() && schema.contains("items"))) {
    Value array = Value::array();
    for (int i = r.Below(4); i > 0; --i) array.push_back(near(schema.contains("items") ? schema["items"] : Value(true)));
    return array;
  }
  if (type == "boolean") return r.Chance(50);
  if (type.is_null() && !schema.contains("properties")) return RandomValue(r, depth);
  if (type != "object") return r.Pick(kStrings);
  Value object = Value::object();
  static const Value kEverything = true;
  auto member = [&schema](const char* name) { return schema.contains(name) ? &schema[name] : nullptr; };
  const Value* properties = member("properties");
  const Value* additional = member("additionalProperties");
  for (const std::string& name : kNames) {
    if (!r.Chance(55)) continue;
    const bool listed = properties && properties->contains(name);
    object[name] = near(listed ? (*properties)[name] : additional ? *additional : kEverything);
  }
  return object;
}

struct Tally {
  int pairs = 0, widened = 0, narrowed = 0, equal = 0, restructured = 0, disproved_restructured = 0;
};

// Checks the verdict on one pair against sampled instances; returns false on a counterexample.
bool Check(const Value& before, const Value& after, Random& r, Tally& tally) {
  auto old_schema = CompiledSchema::Compile(before);
  auto new_schema = CompiledSchema::Compile(after);
  if (!old_schema.ok() || !new_schema.ok()) return true;  // not a schema: nothing to check
  const SchemaDrift drift = CompareSchemas(before, after);
  ++tally.pairs;
  bool old_only = false, new_only = false;
  for (int i = 0; i < 240; ++i) {
    const Value instance = i < 100   ? InstanceFor(before, before, r, 0)
                           : i < 200 ? InstanceFor(after, after, r, 0)
                                     : RandomValue(r, 0);
    const bool in_old = old_schema->IsValid(instance), in_new = new_schema->IsValid(instance);
    old_only = old_only || (in_old && !in_new);
    new_only = new_only || (in_new && !in_old);
    const bool wrong = (drift == SchemaDrift::kWidened && in_old && !in_new) ||
                       (drift == SchemaDrift::kNarrowed && in_new && !in_old) ||
                       ((drift == SchemaDrift::kSame || drift == SchemaDrift::kDocumentation) && in_old != in_new);
    if (wrong) {
      ADD_FAILURE() << SchemaDriftName(drift) << " disproved by " << instance.dump() << "\nold: " << before.dump()
                    << "\nnew: " << after.dump();
      return false;
    }
  }
  tally.widened += drift == SchemaDrift::kWidened;
  tally.narrowed += drift == SchemaDrift::kNarrowed;
  tally.equal += drift == SchemaDrift::kSame || drift == SchemaDrift::kDocumentation;
  tally.restructured += drift == SchemaDrift::kRestructured;
  tally.disproved_restructured += drift == SchemaDrift::kRestructured && old_only && new_only;
  return true;
}

TEST(CompareSchemasTest, VerdictsHoldForSampledInstances) {
  Random r(20260830);
  Tally tally;
  for (int round = 0; round < 700; ++round) {
    Value before = RandomObjectSchema(r, 0);
    if (r.Chance(30)) {  // a reference, whose target mutations may reach
      before["$defs"]["shared"] = RandomPropertySchema(r, 1);
      const std::string target = r.Chance(50) ? "#/$defs/shared" : "#/properties/" + r.Pick(kNames);
      const Value ref = {{"$ref", target}};
      before["properties"][r.Pick(kNames)] = r.Chance(50) ? ref : Value({{"not", ref}});
    }
    for (int i = r.Below(2); i > 0; --i) Mutate(before, r);
    Value after = before;
    for (int i = 1 + r.Below(3); i > 0; --i) Mutate(after, r);
    if (!Check(before, after, r, tally)) return;
  }
  // The check means something only if the comparison decides often enough.
  EXPECT_GT(tally.widened, tally.pairs / 20) << tally.widened << " of " << tally.pairs;
  EXPECT_GT(tally.narrowed, tally.pairs / 20) << tally.narrowed << " of " << tally.pairs;
  EXPECT_GT(tally.equal, 0);
  EXPECT_GT(tally.disproved_restructured, 0);
  RecordProperty("widened", tally.widened);
  RecordProperty("narrowed", tally.narrowed);
  RecordProperty("restructured", tally.restructured);
}

}  // namespace
}  // namespace udon::schema
