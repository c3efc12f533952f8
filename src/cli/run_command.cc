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
#include "workflow/workflow.h"

namespace udon::cli {
namespace {

struct RunOptions {
  std::string file;
  std::string inputs;
  std::string workflow;
  bool diagnostics = false;
  CommonOptions common;
};

// What the gate needs, opened only when the workflow is known to be runnable. `config` and
// `evidence` hold what the environment points to.
Result<gate::GateEnvironment> MakeGateEnvironment(const RunOptions& options, const manifest::Policy& policy,
                                                  std::optional<mcp::RuntimeConfig>& config,
                                                  std::unique_ptr<gate::EvidenceWriter>& evidence) {
  UDON_ASSIGN_OR_RETURN(config, LoadConfig(options.common));
  gate::GateEnvironment env;
  env.config = &*config;
  UDON_ASSIGN_OR_RETURN(env.state_dir, gate::ResolveStateDir(options.common.state_dir));
  UDON_ASSIGN_OR_RETURN(evidence, OpenEvidence(options.common, policy));
  env.evidence = evidence.get();
  // The policy's `state` member names the store when neither --state nor UDON_MCP_STATE does.
  env.policy = policy;
  UDON_RETURN_IF_ERROR(OpenState(options.common, env));
  env.command = "run";
  env.reuse_connections = true;  // contract 6: within one run, while the connection stays eligible
  env.call_timeout = TimeoutOption(options.common);
  if (options.diagnostics) env.diagnostics = [](const std::vector<mcp::Diagnostic>& d) { PrintDiagnostics(d, "a call"); };
  return env;
}

// A failed run: the error's exit status by where the run stopped (exit_codes.h), and the
// input it concerns.
int ReportStopped(const workflow::WorkflowOutcome& outcome, const RunOptions& options) {
  const bool json = options.common.json;
  const Error& error = *outcome.error;
  switch (outcome.stage) {
    case workflow::Stage::kCheck:
    case workflow::Stage::kPlan:
    case workflow::Stage::kContentTrust:
      return ReportError(error, json, ExitCodeFor(error), options.file);
    case workflow::Stage::kInputs:
      return ReportError(error, json, kExitInvalidInput, options.inputs);
    case workflow::Stage::kGate:
      return ReportError(error, json, kExitInvalidInput);
    case workflow::Stage::kRun:
      break;
  }
  const int code = ReportError(error, json, GatedExitCodeFor(error), "step " + outcome.run.step_path);
  if (!options.diagnostics) NoteDiagnostics(error);
  return code;
}

int RunCommand(const RunOptions& options) {
  const bool json = options.common.json;
  auto policy = LoadPolicy(options.common);
  if (!policy.ok()) return ReportError(policy.error(), json, kExitInvalidInput);
  workflow::WorkflowEnvironment environment;
  environment.policy = *policy;
  if (!options.workflow.empty()) environment.workflow = options.workflow;
  std::optional<mcp::RuntimeConfig> config;
  std::unique_ptr<gate::EvidenceWriter> evidence;
  environment.gate = [&] { return MakeGateEnvironment(options, *policy, config, evidence); };
  std::atomic<int> steps{0};
  if (ProgressWanted(json)) {
    environment.run.on_step = [&steps](const std::string& path) {
      PrintProgress("run: step " + std::to_string(++steps) + ": " + path);
    };
  }
  workflow::WorkflowOutcome outcome = workflow::RunWorkflow(options.file, options.inputs, environment);
  if (!outcome.ok()) return ReportStopped(outcome, options);
  if (json) {
    json::Value fields = {{"outputs", outcome.run.outputs}};
    if (outcome.run.ended) fields["ended"] = true;
    PrintJsonResult(std::move(fields));
  } else {
    PrintResultForPeople(outcome.run.outputs);
    if (outcome.run.ended) std::fprintf(stderr, "udon-mcp: note: an onFailure end action finished the run\n");
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
  SetAction(command, &options->common.json, [options] { return RunCommand(*options); });
}

}  // namespace udon::cli
