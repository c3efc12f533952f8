// JSON Schema validation: draft 2020-12 (the default) and draft-07.
//
// Compile once, validate many: Compile resolves every $ref ahead of time into an immutable
// node graph with pre-compiled regular expressions; Validate and IsValid may then run on
// many threads at once. Nothing is ever fetched: a $ref resolves only within the schema,
// the bundled meta-schemas and a caller-filled Registry, and anything else fails to compile.
//
// Error codes:
//   input.unsupported_dialect  $schema names a dialect other than 2020-12 / draft-07 (or a
//                              meta-schema in the registry that does not build on one)
//   schema.invalid             a keyword has a malformed value (pointer: where)
//   schema.unresolved_ref      a $ref / $dynamicRef target is unknown (pointer: the keyword)
//   schema.limit_exceeded      a limit was hit: nesting, pattern size, regex match budget,
//                              or a $ref cycle that makes no progress through the instance
// Messages are fixed texts; they never quote instance values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"

namespace udon::schema {

namespace internal {
class Compiler;
struct Graph;
}  // namespace internal

inline constexpr std::string_view kDialect202012 = "https://json-schema.org/draft/2020-12/schema";
inline constexpr std::string_view kDialectDraft07 = "http://json-schema.org/draft-07/schema#";

// Schema documents by absolute URI (without fragment), for remote references. The bundled
// meta-schemas of both dialects are always available and need not be added.
class Registry {
 public:
  // Errors: schema.invalid when uri is not absolute or carries a non-empty fragment.
  Status Add(std::string_view uri, json::Value document);
  const json::Value* Find(std::string_view uri) const;

 private:
  std::map<std::string, std::shared_ptr<const json::Value>, std::less<>> documents_;
  friend class internal::Compiler;
};

struct CompileOptions {
  // Assert "format" (date-time, date, time, duration, email, hostname, ipv4, ipv6, uri,
  // uri-reference, iri, iri-reference, uri-template, uuid, regex, json-pointer,
  // relative-json-pointer). Off: format is an annotation only.
  bool format_assertion = false;
  const Registry* registry = nullptr;
  // The dialect of a schema without $schema: kDialect202012 or kDialectDraft07.
  std::string default_dialect = std::string(kDialect202012);
  // The URI that relative $id/$ref values resolve against when the root has no absolute $id.
  std::string base_uri = "urn:udon:schema:root";
  // Schema nesting during compilation and applicator nesting during evaluation.
  std::size_t max_depth = 1024;
  std::size_t max_pattern_bytes = 16 * 1024;
  std::uint32_t regex_match_limit = 1'000'000;
};

// One unit of the JSON Schema "basic" output format.
struct OutputUnit {
  std::string keyword_location;           // JSON pointer along the evaluation path
  std::string absolute_keyword_location;  // URI of the keyword in its schema resource
  std::string instance_location;          // JSON pointer into the instance
  std::string error;                      // fixed text; never an instance value
};

struct ValidationResult {
  bool valid = true;
  std::vector<OutputUnit> errors;
  // Set (and valid false) when evaluation stopped at a limit: schema.limit_exceeded.
  std::optional<Error> limit_error;

  // {"valid": ..., "errors": [{"keywordLocation", "absoluteKeywordLocation",
  //  "instanceLocation", "error"}...]}
  json::Value ToBasicOutput() const;
};

class CompiledSchema {
 public:
  static Result<CompiledSchema> Compile(const json::Value& schema,
                                        const CompileOptions& options = {});

  // Every failing keyword, in the basic output shape.
  ValidationResult Validate(const json::Value& instance) const;
  // Stops at the first failure; a limit counts as invalid.
  bool IsValid(const json::Value& instance) const;

  // The same for an instance still in JSON text: read by json::Parse's strict parser into a
  // flat json::Document (no json::Value is built), then validated by the same evaluator.
  // Verdicts and errors are those of Validate/IsValid(*json::Parse(text, options)); text
  // that does not parse returns json::Parse's error (json.* code, pointer, location).
  Result<ValidationResult> ValidateText(std::string_view text,
                                        const json::ParseOptions& options = {}) const;
  Result<bool> IsValidText(std::string_view text, const json::ParseOptions& options = {}) const;

 private:
  explicit CompiledSchema(std::shared_ptr<const internal::Graph> graph) : graph_(std::move(graph)) {}
  std::shared_ptr<const internal::Graph> graph_;
};

// What follows a keyword in a pointer into a schema, for a reader that must tell the words
// of JSON Schema (2020-12 and draft-07, as their bundled meta-schemas name them) from names a
// schema's author chose.
enum class KeywordValue {
  kNone,         // not a keyword of either dialect: an extension, or an author's name
  kSchema,       // a subschema (not, if, items, additionalProperties, ...)
  kSchemaArray,  // an array of subschemas (allOf, anyOf, oneOf, prefixItems)
  kSchemaMap,    // the author's names, each to a subschema (properties, $defs, dependencies, ...)
  kNameMap,      // the author's names, each to a value (dependentRequired)
  kValue,        // any other keyword: a value (type, enum, const, required, ...)
};
KeywordValue KeywordValueOf(std::string_view name);

// Validates a schema against the meta-schema of its dialect (2020-12 or draft-07, by
// $schema). Unsupported dialect: input.unsupported_dialect.
Result<ValidationResult> CheckAgainstMetaSchema(const json::Value& schema,
                                                const CompileOptions& options = {});

}  // namespace udon::schema
