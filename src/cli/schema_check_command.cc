// udon-mcp schema-check --schema FILE INSTANCE...: JSON Schema 2020-12 / draft-07
// validation of JSON or YAML instances. Exit 0 all valid, 1 any invalid, 2 unreadable
// input or an invalid schema (including an unsupported dialect).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"
#include "json/file.h"
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
  UDON_ASSIGN_OR_RETURN(std::string text, json::ReadFile(path));
  return json::ParseJsonOrYaml(text);
}

void PrintHuman(const std::string& path, const schema::ValidationResult& result) {
  std::printf("%s: %s\n", path.c_str(), result.valid ? "valid" : "invalid");
  for (const schema::OutputUnit& unit : result.errors) {
    std::printf("  at \"%s\": %s (%s)\n", unit.instance_location.c_str(), unit.error.c_str(),
                unit.keyword_location.c_str());
  }
  if (result.limit_error) {
    std::printf("  %s [%s]\n", result.limit_error->message.c_str(),
                result.limit_error->code.c_str());
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
  // Every instance is read before any verdict, so that a bad path fails the run cleanly.
  std::vector<json::Value> instances;
  for (const std::string& path : options.instances) {
    Result<json::Value> instance = Load(path);
    if (!instance.ok()) {
      return ReportError(instance.error(), options.json, kExitInvalidInput, path);
    }
    instances.push_back(std::move(instance).value());
  }
  bool all_valid = true;
  json::Value results = json::Value::array();
  for (std::size_t i = 0; i < instances.size(); ++i) {
    schema::ValidationResult result = compiled->Validate(instances[i]);
    all_valid = all_valid && result.valid;
    if (options.json) {
      json::Value entry = result.ToBasicOutput();
      entry["instance"] = options.instances[i];
      results.push_back(std::move(entry));
    } else {
      PrintHuman(options.instances[i], result);
    }
  }
  if (options.json) PrintJsonResult({{"valid", all_valid}, {"results", std::move(results)}});
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
