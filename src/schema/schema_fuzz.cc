// Fuzz target: JSON Schema compilation and validation, schema and instance both fuzzed.
// Input: one flags byte (bit 0: assert formats, bit 1: draft-07 by default), the schema
// up to the first newline, then the instance; bit 2 also validates the schema, as one
// more instance, against its dialect's meta-schema. Oracles: Validate and IsValid agree; a
// failed validation reports at least one error or a limit, a passed one none; every
// reported instance location resolves in the instance; results do not depend on the
// formatting of the instance; the text path (ValidateText, IsValidText on the instance's
// bytes) gives the DOM path's verdict and errors, or json::Parse's very error; and nothing
// crashes or hangs (the regex match budget and the depth limits stay on).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "json/json.h"
#include "json/pointer.h"
#include "schema/schema.h"

namespace {

void CheckValidation(const udon::schema::CompiledSchema& schema, const udon::json::Value& instance) {
  const udon::schema::ValidationResult result = schema.Validate(instance);
  UDON_FUZZ_CHECK(result.valid == schema.IsValid(instance), "Validate and IsValid agree");
  if (result.valid) {
    UDON_FUZZ_CHECK(result.errors.empty() && !result.limit_error,
                    "a passed validation reports nothing");
  } else {
    UDON_FUZZ_CHECK(!result.errors.empty() || result.limit_error.has_value(),
                    "a failed validation says why");
  }
  if (result.limit_error) {
    UDON_FUZZ_CHECK(result.limit_error->code == "schema.limit_exceeded", "a limit's code");
  }
  for (const auto& unit : result.errors) {
    auto location = udon::json::Pointer::Parse(unit.instance_location);
    UDON_FUZZ_CHECK(location.ok(), "an instance location is a valid pointer");
    UDON_FUZZ_CHECK(location->Resolve(instance) != nullptr,
                    "an instance location resolves in the instance");
    UDON_FUZZ_CHECK(udon::json::Pointer::Parse(unit.keyword_location).ok(),
                    "a keyword location is a valid pointer");
  }
  const udon::json::Value output = result.ToBasicOutput();
  UDON_FUZZ_CHECK(output["valid"] == result.valid, "the basic output carries the verdict");

  auto reformatted = udon::json::Parse(instance.dump(1));
  UDON_FUZZ_CHECK(reformatted.ok(), "the instance survives reformatting");
  UDON_FUZZ_CHECK(schema.IsValid(*reformatted) == result.valid,
                  "formatting does not change the verdict");
}

bool SameParseError(const udon::Error& a, const udon::Error& b) {
  return a.code == b.code && a.message == b.message && a.pointer == b.pointer &&
         a.location.has_value() == b.location.has_value() &&
         (!a.location || (a.location->offset == b.location->offset &&
                          a.location->line == b.location->line &&
                          a.location->column == b.location->column));
}

// The text path against json::Parse + the DOM path, on the same bytes.
void CheckTextPath(const udon::schema::CompiledSchema& schema, std::string_view text,
                   const udon::Result<udon::json::Value>& parsed) {
  auto full = schema.ValidateText(text);
  auto quick = schema.IsValidText(text);
  UDON_FUZZ_CHECK(full.ok() == parsed.ok() && quick.ok() == parsed.ok(),
                  "the text path parses what json::Parse parses");
  if (!parsed.ok()) {
    UDON_FUZZ_CHECK(SameParseError(full.error(), parsed.error()) &&
                        SameParseError(quick.error(), parsed.error()),
                    "the text path refuses text with json::Parse's error");
    return;
  }
  UDON_FUZZ_CHECK(*quick == schema.IsValid(*parsed), "IsValidText agrees with IsValid");
  UDON_FUZZ_CHECK(full->ToBasicOutput() == schema.Validate(*parsed).ToBasicOutput(),
                  "ValidateText reports what Validate reports");
}

// The dialect's meta-schema, compiled once: compiling it per input would take most of
// the time. A schema validated against it is one more fuzzed instance.
const udon::schema::CompiledSchema& MetaSchema(bool draft07) {
  static const auto compile = [](std::string_view dialect) {
    udon::json::Value reference = {{"$ref", std::string(dialect)}};
    auto compiled = udon::schema::CompiledSchema::Compile(reference);
    UDON_FUZZ_CHECK(compiled.ok(), "the bundled meta-schema compiles");
    return *compiled;
  };
  static const udon::schema::CompiledSchema draft2020 = compile(udon::schema::kDialect202012);
  static const udon::schema::CompiledSchema draft7 = compile(udon::schema::kDialectDraft07);
  return draft07 ? draft7 : draft2020;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t newline = rest.find('\n');
  if (newline == std::string_view::npos) return 0;
  auto schema_value = udon::json::Parse(rest.substr(0, newline));
  if (!schema_value.ok()) return 0;

  udon::schema::CompileOptions options;
  options.format_assertion = (flags & 1) != 0;
  if ((flags & 2) != 0) options.default_dialect = std::string(udon::schema::kDialectDraft07);
  // Lower than the default budget, so a run stays fast, yet every limit path is reached.
  options.regex_match_limit = 100'000;
  if ((flags & 4) != 0) CheckValidation(MetaSchema((flags & 2) != 0), *schema_value);
  auto compiled = udon::schema::CompiledSchema::Compile(*schema_value, options);
  if (!compiled.ok()) {
    const std::string& code = compiled.error().code;
    UDON_FUZZ_CHECK(code == "schema.invalid" || code == "schema.unresolved_ref" ||
                        code == "schema.limit_exceeded" || code == "input.unsupported_dialect",
                    "a compile error uses one of the documented codes");
    return 0;
  }
  const std::string_view instance_text = rest.substr(newline + 1);
  auto instance = udon::json::Parse(instance_text);
  CheckTextPath(*compiled, instance_text, instance);
  if (!instance.ok()) return 0;
  CheckValidation(*compiled, *instance);
  return 0;
}
