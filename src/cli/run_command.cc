// run: executes a UWS workflow whose operations are gated MCP tool calls. Prints the
// workflow's outputs as JSON; on failure the code and the failing step's path.
#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "gate/gate.h"
#include "gate/state.h"
#include "json/file.h"
#include "json/yaml.h"
#include "trust/analyzer.h"
#include "trust/mcp_resolver.h"
#include "uws/check.h"
#include "uws/plan.h"
#include "uws/runner.h"

namespace udon::cli {
namespace {

struct RunOptions {
  std::string file;
  std::string inputs;
  std::string workflow;
  bool diagnostics = false;
  CommonOptions common;
};

Result<json::Value> ReadInputs(const std::string& path) {
  if (path.empty()) return json::Value::object();
  UDON_ASSIGN_OR_RETURN(std::string text, json::ReadFile(path, 16u << 20));
  auto value = json::ParseJsonOrYaml(text);
  if (!value.ok()) return value.error().WithCode("usage.invalid");
  return value;
}

// Policy blockOnFindings: content-trust findings at or above the level stop the run before
// anything executes.
Status CheckContentTrust(const uws::Document& document, const manifest::Policy& policy) {
  if (policy.block_on_findings == manifest::FindingsBlock::kNone) return OkStatus();
  const trust::McpResolver resolver(policy);
  UDON_ASSIGN_OR_RETURN(trust::Report report, trust::Analyze(document, {&resolver}));
  return trust::CheckFindingsPolicy(report, policy.block_on_findings);
}

int RunWorkflow(const RunOptions& options) {
  const bool json = options.common.json;
  auto policy = LoadPolicy(options.common);
  if (!policy.ok()) return ReportError(policy.error(), json, kExitInvalidInput);
  uws::CheckedDocument checked = uws::CheckDocument(options.file, *policy);
  if (!checked.ok()) return ReportError(*checked.error, json, checked.exit_code, options.file);
  const uws::Document& document = *checked.document;
  std::optional<std::string> workflow;
  if (!options.workflow.empty()) workflow = options.workflow;
  auto plan = uws::MakePlan(document, checked.bindings, workflow);
  if (!plan.ok()) return ReportError(plan.error(), json, gate::ExitCodeFor(plan.error().code), options.file);
  if (Status trusted = CheckContentTrust(document, *policy); !trusted.ok()) {
    return ReportError(trusted.error(), json, gate::ExitCodeFor(trusted.error().code), options.file);
  }
  auto inputs = ReadInputs(options.inputs);
  if (!inputs.ok()) return ReportError(inputs.error(), json, kExitInvalidInput, options.inputs);
  if (Status valid = uws::CheckEntryInputs(*plan, *inputs); !valid.ok()) {
    return ReportError(valid.error(), json, kExitInvalidInput, options.inputs);
  }

  auto config = LoadConfig(options.common);
  if (!config.ok()) return ReportError(config.error(), json, kExitInvalidInput);
  gate::GateEnvironment env;
  env.policy = *policy;
  env.config = &*config;
  auto state_dir = gate::ResolveStateDir(options.common.state_dir);
  if (!state_dir.ok()) return ReportError(state_dir.error(), json, kExitInvalidInput);
  env.state_dir = *state_dir;
  if (Status state = OpenState(options.common, env); !state.ok()) {
    return ReportError(state.error(), json, kExitInvalidInput);
  }
  auto evidence = OpenEvidence(options.common);
  if (!evidence.ok()) return ReportError(evidence.error(), json, kExitInvalidInput);
  env.evidence = evidence->get();
  env.command = "run";
  env.reuse_connections = true;  // contract 6: within one run, while the connection stays eligible
  env.call_timeout = TimeoutOption(options.common);
  if (options.diagnostics) env.diagnostics = [](const std::vector<mcp::Diagnostic>& d) { PrintDiagnostics(d, "a call"); };
  gate::Gate gate(std::move(env));
  uws::GateLeafExecutor leaf(gate);
  uws::RunOptions run_options;
  std::atomic<int> steps{0};
  if (ProgressWanted(json)) {
    run_options.on_step = [&steps](const std::string& path) {
      PrintProgress("run: step " + std::to_string(++steps) + ": " + path);
    };
  }
  uws::RunOutcome outcome = uws::Run(*plan, *inputs, leaf, run_options);
  if (!outcome.ok()) {
    const int code = ReportError(*outcome.error, json, outcome.exit_code, "step " + outcome.step_path);
    if (!options.diagnostics) NoteDiagnostics(*outcome.error);
    return code;
  }
  if (json) {
    json::Value fields = {{"outputs", outcome.outputs}};
    if (outcome.ended) fields["ended"] = true;
    PrintJsonResult(std::move(fields));
  } else {
    PrintResultForPeople(outcome.outputs);
    if (outcome.ended) std::fprintf(stderr, "udon-mcp: note: an onFailure end action finished the run\n");
  }
  return kExitOk;
}

}  // namespace

void RegisterRunCommand(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand("run", "Execute a UWS workflow; prints its outputs as JSON");
  command->add_option("file", options->file, "UWS document (JSON or YAML)")->required();
  command->add_option("--inputs", options->inputs, "The workflow inputs (JSON or YAML object; - for stdin)");
  command->add_option("--workflow", options->workflow, "The workflow to run (default: the only one, or main)");
  AddCommonOptions(command, options->common);
  AddDiagnosticsFlag(command, options->diagnostics);
  SetAction(command, &options->common.json, [options] { return RunWorkflow(*options); });
}

}  // namespace udon::cli
