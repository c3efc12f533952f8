#include "workflow/workflow.h"

#include <memory>
#include <utility>

#include "base/file.h"
#include "json/yaml.h"
#include "trust/mcp_resolver.h"
#include "uws/check.h"
#include "uws/plan.h"
#include "workflow/gate_leaf.h"

namespace udon::workflow {
namespace {

constexpr std::size_t kMaxInputsBytes = 16u << 20;

Result<json::Value> ReadInputs(const std::string& path) {
  if (path.empty()) return json::Value::object();
  UDON_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path, kMaxInputsBytes));
  auto value = json::ParseJsonOrYaml(text);
  if (!value.ok()) return value.error().WithCode("usage.invalid");
  return value;
}

// Always analyzed, so every run (and the demo) sees its findings; they stop the run only
// when the policy's blockOnFindings says so. An analysis that fails stops it only then too:
// under a policy that never blocks, findings are advisory and so is their absence.
Status CheckContentTrust(const uws::Document& document, const manifest::Policy& policy,
                         std::shared_ptr<manifest::ManifestCache> manifests, WorkflowOutcome& outcome) {
  const trust::McpResolver resolver(policy, std::move(manifests));
  auto report = trust::Analyze(document, {&resolver});
  const bool blocking = policy.block_on_findings != manifest::FindingsBlock::kNone;
  if (!report.ok()) return blocking ? Status(std::move(report).error()) : OkStatus();
  outcome.content_trust = std::move(report).value();
  return trust::CheckFindingsPolicy(*outcome.content_trust, policy.block_on_findings);
}

WorkflowOutcome Stop(WorkflowOutcome outcome, Stage stage, Error error) {
  outcome.stage = stage;
  outcome.error = std::move(error);
  return outcome;
}

}  // namespace

WorkflowOutcome RunWorkflow(const std::string& path, const std::string& inputs_path,
                            const WorkflowEnvironment& environment) {
  WorkflowOutcome outcome;
  // One manifest cache for the run: the static checks and content trust read each manifest
  // once; the gate reads it again before every call and reuses the parse of equal bytes.
  auto manifests = std::make_shared<manifest::ManifestCache>();
  uws::CheckedDocument checked = uws::CheckDocument(path, environment.policy, *manifests);
  if (!checked.ok()) return Stop(std::move(outcome), Stage::kCheck, std::move(*checked.error));
  outcome.operations = checked.bindings.operations.size();
  auto plan = uws::MakePlan(*checked.document, checked.bindings, environment.workflow);
  if (!plan.ok()) return Stop(std::move(outcome), Stage::kPlan, std::move(plan).error());
  if (Status trusted = CheckContentTrust(*checked.document, environment.policy, manifests, outcome); !trusted.ok()) {
    return Stop(std::move(outcome), Stage::kContentTrust, std::move(trusted).error());
  }
  auto inputs = ReadInputs(inputs_path);
  if (!inputs.ok()) return Stop(std::move(outcome), Stage::kInputs, std::move(inputs).error());
  if (Status valid = uws::CheckEntryInputs(*plan, *inputs); !valid.ok()) {
    return Stop(std::move(outcome), Stage::kInputs, std::move(valid).error());
  }
  if (!environment.gate) return Stop(std::move(outcome), Stage::kGate, MakeError("internal.error", "no gate"));
  auto env = environment.gate();
  if (!env.ok()) return Stop(std::move(outcome), Stage::kGate, std::move(env).error());
  env->policy = environment.policy;
  env->manifests = manifests;
  gate::Gate gate(std::move(env).value());
  GateLeafExecutor leaf(gate);
  outcome.stage = Stage::kRun;
  outcome.run = uws::Run(*plan, *inputs, leaf, environment.run);
  outcome.error = outcome.run.error;
  return outcome;
}

}  // namespace udon::workflow
