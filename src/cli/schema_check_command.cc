// udon-mcp schema-check --schema FILE INSTANCE...: JSON Schema 2020-12 / draft-07
// validation of JSON or YAML instances. Exit 0 all valid, 1 any invalid, 2 unreadable
// input or an invalid schema (including an unsupported dialect).
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"
#include "base/file.h"
#include "json/yaml.h"
#include "schema/schema.h"

namespace udon::cli {
namespace {

struct SchemaCheckOptions {
  std::string schema;
  std::vector<std::string> instances;
  bool format_assert = false;
  bool json = false;
};

Result<json::Value> Load(const std::string& path) {
  UDON_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path));
  return json::ParseJsonOrYaml(text);
}

// One instance's verdict. JSON text takes the schema's text path (the strict parser fills
// a flat, reused document: no json::Value is built) and its errors are collected only when
// it fails; YAML is read into a json::Value. Errors: json.* / yaml.* (the text's own).
Result<schema::ValidationResult> Check(const schema::CompiledSchema& compiled, std::string_view text) {
  if (!json::IsJsonByContent(text)) {
    UDON_ASSIGN_OR_RETURN(json::Value instance, json::ParseYaml(text));
    return compiled.Validate(instance);
  }
  UDON_ASSIGN_OR_RETURN(bool valid, compiled.IsValidText(text));
  if (!valid) return compiled.ValidateText(text);
  schema::ValidationResult result;
  result.valid = true;
  return result;
}

void AppendHuman(std::string& out, const std::string& path, const schema::ValidationResult& result) {
  out += path + (result.valid ? ": valid\n" : ": invalid\n");
  for (const schema::OutputUnit& unit : result.errors) {
    out += "  at \"" + unit.instance_location + "\": " + unit.error + " (" + unit.keyword_location + ")\n";
  }
  if (result.limit_error) {
    out += "  " + result.limit_error->message + " [" + result.limit_error->code + "]\n";
  }
}

int RunSchemaCheck(const SchemaCheckOptions& options) {
  int stdin_uses = options.schema == "-" ? 1 : 0;
  for (const std::string& path : options.instances) stdin_uses += path == "-" ? 1 : 0;
  if (stdin_uses > 1) {
    return ReportError(MakeError("usage.stdin_twice", "stdin (-) can be read only once"),
                       options.json, kExitInvalidInput);
  }
  Result<json::Value> schema_document = Load(options.schema);
  if (!schema_document.ok()) {
    return ReportError(schema_document.error(), options.json, kExitInvalidInput, options.schema);
  }
  schema::CompileOptions compile_options;
  compile_options.format_assertion = options.format_assert;
  auto compiled = schema::CompiledSchema::Compile(*schema_document, compile_options);
  if (!compiled.ok()) {
    return ReportError(compiled.error(), options.json, kExitInvalidInput, options.schema);
  }
  // Every instance is read before any verdict, and every verdict is in before anything is
  // printed, so that a bad path or malformed text fails the run cleanly.
  std::vector<std::string> texts;
  texts.reserve(options.instances.size());
  for (const std::string& path : options.instances) {
    Result<std::string> text = base::ReadFile(path);
    if (!text.ok()) return ReportError(text.error(), options.json, kExitInvalidInput, path);
    texts.push_back(std::move(text).value());
  }
  bool all_valid = true;
  json::Value results = json::Value::array();
  std::string human;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    Result<schema::ValidationResult> result = Check(*compiled, texts[i]);
    if (!result.ok()) {
      return ReportError(result.error(), options.json, kExitInvalidInput, options.instances[i]);
    }
    all_valid = all_valid && result->valid;
    if (options.json) {
      json::Value entry = result->ToBasicOutput();
      entry["instance"] = options.instances[i];
      results.push_back(std::move(entry));
    } else {
      AppendHuman(human, options.instances[i], *result);
    }
  }
  if (options.json) {
    PrintJsonResult({{"valid", all_valid}, {"results", std::move(results)}});
  } else {
    std::fwrite(human.data(), 1, human.size(), stdout);
  }
  std::fflush(stdout);
  return all_valid ? kExitOk : kExitInternal;  // 1: an instance is invalid
}

}  // namespace

void RegisterSchemaCheckCommand(CLI::App& app) {
  auto options = std::make_shared<SchemaCheckOptions>();
  CLI::App* command = app.add_subcommand(
      "schema-check",
      "Validate JSON or YAML instances against a JSON Schema (2020-12 by default, draft-07 "
      "by $schema); exit 0 all valid, 1 any invalid, 2 unreadable input or invalid schema");
  command->add_option("--schema", options->schema, "Schema file (JSON or YAML), or - for stdin")
      ->required();
  command->add_option("INSTANCE", options->instances, "Instance files (JSON or YAML), - for stdin")
      ->required();
  command->add_flag("--format-assert", options->format_assert,
                    "Treat \"format\" as an assertion (date-time, email, uri, ...)");
  command->add_flag("--json", options->json,
                    "Machine output: {\"ok\":true,\"valid\":BOOL,\"results\":[{basic output, "
                    "\"instance\":PATH}]} on stdout");
  SetAction(command, &options->json, [options] { return RunSchemaCheck(*options); });
}

}  // namespace udon::cli
