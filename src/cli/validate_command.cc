// validate: a UWS document's structural and semantic rules plus every static check of its
// MCP bindings. Exit 0 valid, 2 uws.invalid (all errors in details.errors) or unreadable
// input, 3 for a binding the gate would refuse.
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "uws/check.h"
#include "uws/plan.h"

namespace udon::cli {
namespace {

struct ValidateOptions {
  std::string file;
  CommonOptions common;
};

void PrintErrors(const Error& error) {
  if (!error.details.contains("errors")) return;
  for (const auto& entry : error.details["errors"]) {
    std::fprintf(stderr, "  %s: %s [%s]\n", entry.value("pointer", "").c_str(), entry.value("message", "").c_str(),
                 entry.value("code", "").c_str());
  }
}

int RunValidate(const ValidateOptions& options) {
  const bool json = options.common.json;
  auto policy = LoadPolicy(options.common);
  if (!policy.ok()) return ReportError(policy.error(), json, kExitInvalidInput);
  uws::CheckedDocument checked = uws::CheckDocument(options.file, *policy);
  if (!checked.ok()) {
    const int code = ReportError(*checked.error, json, ExitCodeFor(*checked.error), options.file);
    if (!json) PrintErrors(*checked.error);
    return code;
  }
  const uws::Document& document = *checked.document;
  // Valid is not the same as runnable: say whether `run` would refuse, and why.
  json::Value runnable = true;
  std::string refusal;
  if (document.root.contains("workflows")) {
    auto plan = uws::MakePlan(document, checked.bindings, std::nullopt);
    if (!plan.ok()) {
      runnable = false;
      refusal = plan.error().code + " " + plan.error().details.value("construct", plan.error().message) + " at " +
                plan.error().pointer;
    }
  } else {
    runnable = false;
    refusal = "no workflows";
  }
  const std::string version = document.root["uws"].get<std::string>();
  if (json) {
    json::Value fields = {{"uws", version}, {"mcpOperations", checked.bindings.operations.size()}, {"runnable", runnable}};
    if (!refusal.empty()) fields["notRunnable"] = refusal;
    PrintJsonResult(std::move(fields));
  } else {
    std::printf("ok: %s is valid UWS %s (%zu MCP operations bound)\n", options.file.c_str(), version.c_str(),
                checked.bindings.operations.size());
    if (!refusal.empty()) std::printf("note: run would refuse it: %s\n", refusal.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterValidateCommand(CLI::App& app) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* command = app.add_subcommand("validate", "UWS validation plus every static check of MCP bindings");
  command->add_option("file", options->file, "UWS document (JSON or YAML; - for stdin)")->required();
  AddCommonOptions(command, options->common);
  SetAction(command, &options->common.json, [options] { return RunValidate(*options); });
}

}  // namespace udon::cli
