#include "gate/internal/details.h"

#include <map>
#include <string_view>
#include <utility>

#include "json/pointer.h"
#include "manifest/diff.h"

namespace udon::gate::internal {
namespace {

// The property a failed `required` unit misses, named from the schema's own required list
// (never from the instance): the validator fails once per missing name, in list order, so
// the n-th unit at one location is the n-th name the instance lacks. Empty when the
// keyword location does not resolve plainly in the schema (a $ref on the way).
std::string MissingProperty(const json::Value& schema_document, const json::Value& instance_document,
                            const schema::OutputUnit& unit, std::map<std::string, std::size_t>& seen) {
  constexpr std::string_view kRequired = "/required";
  const std::string& location = unit.keyword_location;
  if (location.size() < kRequired.size() || location.compare(location.size() - kRequired.size(), kRequired.size(), kRequired) != 0) {
    return {};
  }
  auto keyword = json::Pointer::Parse(location);
  auto at = json::Pointer::Parse(unit.instance_location);
  if (!keyword.ok() || !at.ok()) return {};
  const json::Value* required = keyword->Resolve(schema_document);
  const json::Value* object = at->Resolve(instance_document);
  if (required == nullptr || !required->is_array() || object == nullptr || !object->is_object()) return {};
  std::vector<std::string> missing;
  for (const json::Value& name : *required) {
    if (name.is_string() && !object->contains(name.get<std::string>())) missing.push_back(name.get<std::string>());
  }
  const std::size_t index = seen[location + "\n" + unit.instance_location]++;
  return index < missing.size() ? missing[index] : std::string();
}

}  // namespace

json::Value DriftDetails(const std::vector<json::Difference>& differences) {
  json::Value pointers = json::Value::array();
  for (const auto& d : differences) {
    pointers.push_back({{"pointer", d.pointer},
                        {"change", json::DifferenceKindName(d.kind)},
                        {"area", manifest::ToolChangeArea(d.pointer)}});
  }
  return pointers;
}

json::Value SchemaErrors(const schema::ValidationResult& result, Instance instance,
                         const json::Value* schema_document, const json::Value* arguments) {
  json::Value errors = json::Value::array();
  std::map<std::string, std::size_t> seen;
  for (const auto& unit : result.errors) {
    json::Value entry = {{"keywordLocation", unit.keyword_location}, {"error", unit.error}};
    if (instance == Instance::kArguments) {
      entry["instanceLocation"] = unit.instance_location;
      if (schema_document != nullptr && arguments != nullptr) {
        if (std::string name = MissingProperty(*schema_document, *arguments, unit, seen); !name.empty()) {
          entry["property"] = std::move(name);
        }
      }
    }
    errors.push_back(std::move(entry));
    if (errors.size() >= 50) break;
  }
  return errors;
}

json::Value ServerInfoDifferences(const json::Value& reviewed, const json::Value& live) {
  json::Value out = json::Value::array();
  for (const auto& d : json::Diff(reviewed, live)) {
    json::Value entry = {{"pointer", d.pointer}, {"change", json::DifferenceKindName(d.kind)}};
    if (auto pointer = json::Pointer::Parse(d.pointer); pointer.ok()) {
      if (const json::Value* was = pointer->Resolve(reviewed)) entry["reviewed"] = *was;
      if (const json::Value* is = pointer->Resolve(live)) entry["live"] = *is;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace udon::gate::internal
