// analyze: the UWS 1.9.1 content-trust report of a document with the MCP resolver
// (--v1.9.2 for the 1.9.2 refinements). Advisory: exit 0 whatever the findings; 2 for an
// unreadable or invalid document.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "trust/analyzer.h"
#include "trust/mcp_resolver.h"
#include "trust/render.h"
#include "uws/document.h"

namespace udon::cli {
namespace {

struct AnalyzeOptions {
  std::string file;
  std::string format = "text";
  bool v192 = false;
  CommonOptions common;
};

int RunAnalyze(const AnalyzeOptions& options) {
  const bool json = options.common.json;
  auto policy = LoadPolicy(options.common);
  if (!policy.ok()) return ReportError(policy.error(), json, kExitInvalidInput);
  auto document = uws::LoadDocument(options.file);
  if (!document.ok()) return ReportError(document.error(), json, kExitInvalidInput, options.file);
  const trust::McpResolver resolver(*policy);
  auto report = trust::Analyze(*document, {&resolver}, trust::Options{options.v192});
  if (!report.ok()) return ReportError(report.error(), json, kExitInvalidInput, options.file);
  if (json) {
    PrintJsonResult(report->ToJson());
  } else if (options.format == "json") {
    std::printf("%s\n", report->ToJson().dump(2).c_str());
  } else if (options.format == "dot") {
    std::fputs(trust::RenderDot(*report, document->root).c_str(), stdout);
  } else {
    std::fputs(trust::RenderText(*report).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace

void RegisterAnalyzeCommand(CLI::App& app) {
  auto options = std::make_shared<AnalyzeOptions>();
  CLI::App* command = app.add_subcommand("analyze", "UWS 1.9.1 content-trust report (advisory; exit 0 with findings)");
  command->add_option("file", options->file, "UWS document (JSON or YAML; - for stdin)")->required();
  command->add_option("--format", options->format, "text (default), json, or dot (a Graphviz data-flow graph)")
      ->check(CLI::IsMember({"text", "json", "dot"}));
  command->add_flag("--v1.9.2", options->v192, "Apply the UWS 1.9.2 content-trust refinements");
  AddCommonOptions(command, options->common);
  SetAction(command, &options->common.json, [options] { return RunAnalyze(*options); });
}

}  // namespace udon::cli
