// The gate as the UWS runner's leaf: every MCP operation of a workflow is one gated call.
// It lives here, not in uws, so the document layer (validate, analyze) links no gate and
// no network code.
#pragma once

#include "gate/gate.h"
#include "uws/runner.h"

namespace udon::workflow {

// expect_output when the operation declares outputs, bound_paths from the body; the leaf's
// error is the gate's, its body the validated structuredContent.
class GateLeafExecutor : public uws::LeafExecutor {
 public:
  explicit GateLeafExecutor(gate::Gate& gate) : gate_(gate) {}
  uws::LeafOutcome Execute(const uws::McpOperation& operation, const json::Value& arguments) override;

 private:
  gate::Gate& gate_;
};

}  // namespace udon::workflow
