// One workflow run, the same for `udon-mcp run` and `udon-mcp demo`: load and check the
// document (uws::CheckDocument), plan it, analyze its content trust under the policy's
// blockOnFindings, read and check the entry inputs, then run every step through one gate.
// Stages stop at the first failure; the outcome says which stage, and the command line
// turns the error into its exit status (cli/exit_codes.h).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "gate/gate.h"
#include "json/json.h"
#include "base/result.h"
#include "manifest/policy.h"
#include "trust/analyzer.h"
#include "uws/runner.h"

namespace udon::workflow {

enum class Stage {
  kCheck,         // load, validate, static binding checks (uws.*, manifest.*, review.*, io.*, yaml.*)
  kPlan,          // uws.unsupported, uws.invalid (no entry workflow)
  kContentTrust,  // content_trust.blocked
  kInputs,        // reading or checking the entry inputs (usage.invalid, io.*)
  kGate,          // the gate's environment could not be made (config, state, evidence)
  kRun,           // a step failed (the gate's codes, uws.expression_failed, ...), or done
};

struct WorkflowEnvironment {
  manifest::Policy policy;              // for the checks, content trust and the gate
  std::optional<std::string> workflow;  // the entry; default: the only one, or main
  // Makes the gate's environment; asked only once the document, plan, content trust and
  // inputs passed, so a document's own errors come before any configuration, state or
  // evidence problem. Its policy is replaced by `policy`.
  std::function<Result<gate::GateEnvironment>()> gate;
  uws::RunOptions run;
};

struct WorkflowOutcome {
  Stage stage = Stage::kCheck;  // where it stopped; kRun when it ran to the end
  std::optional<Error> error;
  std::size_t operations = 0;   // MCP operations bound (once checked)
  // The content-trust analysis (advisory unless the policy blocks); unset when it did not
  // get that far or, under a policy that never blocks, could not analyze.
  std::optional<trust::Report> content_trust;
  uws::RunOutcome run;  // kRun: outputs, ended, the failing step's path

  bool ok() const { return !error.has_value(); }
};

// `inputs_path`: a JSON or YAML object ("-": stdin; empty: no inputs, {}).
WorkflowOutcome RunWorkflow(const std::string& path, const std::string& inputs_path,
                            const WorkflowEnvironment& environment);

}  // namespace udon::workflow
