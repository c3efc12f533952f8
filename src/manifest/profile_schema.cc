#include "manifest/profile_schema.h"

#include "manifest/internal/shipped_schemas.h"
#include "schema/schema.h"

namespace udon::manifest {
namespace {

// Shipped with the build and covered by tests: null here would be a build defect.
json::Value ParseShipped(const char* text) {
  auto parsed = json::Parse(text);
  return parsed.ok() ? std::move(parsed).value() : json::Value();
}

}  // namespace

const json::Value& ManifestProfileSchema() {
  static const json::Value schema = ParseShipped(internal::kManifestProfileSchemaText);
  return schema;
}

const json::Value& BindingSchema() {
  static const json::Value schema = ParseShipped(internal::kBindingSchemaText);
  return schema;
}

std::vector<Error> CheckAgainstProfileSchema(const json::Value& document) {
  static const auto compiled = schema::CompiledSchema::Compile(ManifestProfileSchema());
  std::vector<Error> problems;
  if (!compiled.ok()) {
    problems.push_back(MakeError("manifest.invalid", "the shipped profile schema does not compile"));
    return problems;
  }
  schema::ValidationResult result = compiled->Validate(document);
  for (const auto& unit : result.errors) {
    Error error = MakeError("manifest.invalid", "does not conform to the profile schema",
                            unit.instance_location);
    error.details["keywordLocation"] = unit.keyword_location;
    problems.push_back(std::move(error));
  }
  return problems;
}

}  // namespace udon::manifest
