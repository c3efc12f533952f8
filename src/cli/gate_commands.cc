// verify and call: the gate, live, from the command line.
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "gate/gate.h"
#include "gate/state.h"
#include "base/file.h"

namespace udon::cli {
namespace {

struct GateCommandOptions {
  BindingOptions bound;
  bool expect_output = false;
  bool diagnostics = false;
  CommonOptions common;
};

int Report(const gate::GateResult& result, const GateCommandOptions& o, bool call) {
  if (!result.ok()) {
    json::Value details = result.error->details;
    details["steps"] = result.evidence.ToJson()["steps"];
    Error error = *result.error;
    error.details = std::move(details);
    const int code = ReportErrorShowing(error, o.common.json, GatedExitCodeFor(error), result.for_people);
    if (!o.diagnostics) NoteDiagnostics(error);
    return code;
  }
  if (o.common.json) {
    const json::Value record = result.evidence.ToJson();
    json::Value fields = {{"steps", record["steps"]}, {"manifestSha256", record["manifestSha256"]}};
    if (call) fields["structuredContent"] = result.output;
    PrintJsonResult(std::move(fields));
  } else if (call) {
    PrintResultForPeople(result.output);
    if (result.output.is_null() && result.content_blocks > 0) {
      // Content never becomes the result (the proposal): say so instead of a bare null.
      std::fprintf(stderr,
                   "udon-mcp: note: %zu content block(s) not shown: the tool declares no outputSchema, so "
                   "only validated structuredContent is ever a result\n",
                   result.content_blocks);
    }
  } else {
    std::printf("ok: %s/%s matches the reviewed manifest\n", o.bound.server.c_str(), o.bound.tool.c_str());
  }
  return kExitOk;
}

int RunGate(const GateCommandOptions& o, bool call) {
  const bool json = o.common.json;
  auto prepared = PrepareGate(o.common, call ? "call" : "verify", o.diagnostics);
  if (!prepared.ok()) return ReportError(prepared.error(), json, ExitCodeFor(prepared.error()));
  const manifest::Binding binding = o.bound.binding();
  gate::Gate gate((*prepared)->env);
  if (!call) return Report(gate.Verify(binding), o, false);
  auto arguments = ReadToolArguments(o.bound.args, o.bound.args_file);
  if (!arguments.ok()) return ReportError(arguments.error(), json, kExitInvalidInput);
  gate::CallOptions options;
  options.expect_output = o.expect_output;
  return Report(gate.Call(binding, *arguments, options), o, true);
}

CLI::App* AddGateOptions(CLI::App& app, const char* name, const char* help, GateCommandOptions& o) {
  CLI::App* command = app.add_subcommand(name, help);
  AddBindingOptions(command, o.bound);
  AddCommonOptions(command, o.common);
  AddDiagnosticsFlag(command, o.diagnostics);
  return command;
}

}  // namespace

void RegisterVerifyCommand(CLI::App& app) {
  auto o = std::make_shared<GateCommandOptions>();
  CLI::App* command = AddGateOptions(app, "verify", "Run the whole pre-call gate live; call nothing", *o);
  SetAction(command, &o->common.json, [o] { return RunGate(*o, false); });
}

void RegisterCallCommand(CLI::App& app) {
  auto o = std::make_shared<GateCommandOptions>();
  CLI::App* command = AddGateOptions(app, "call", "One gated tools/call; prints validated structuredContent", *o);
  AddArgumentOptions(command, o->bound, "Arguments as a JSON object");
  command->add_flag("--expect-output", o->expect_output,
                    "Require structuredContent valid against the reviewed outputSchema");
  SetAction(command, &o->common.json, [o] { return RunGate(*o, true); });
}

}  // namespace udon::cli
