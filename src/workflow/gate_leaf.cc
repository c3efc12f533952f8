#include "workflow/gate_leaf.h"

namespace udon::workflow {

uws::LeafOutcome GateLeafExecutor::Execute(const uws::McpOperation& operation, const json::Value& arguments) {
  gate::CallOptions options;
  options.expect_output = operation.expects_output;
  options.bound_paths = operation.bound_paths;
  gate::GateResult result = gate_.Call(operation.binding, arguments, options);
  uws::LeafOutcome outcome;
  outcome.error = std::move(result.error);
  outcome.body = std::move(result.output);
  return outcome;
}

}  // namespace udon::workflow
