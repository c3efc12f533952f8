// The runner: executes a planned UWS workflow. Memoized records per workflow invocation
// (and per loop iteration), dependsOn on demand, when, timeouts, sequence / parallel /
// switch / loop structures, workflow-call steps, simple successCriteria and onFailure
// retry / end. Every leaf goes through a LeafExecutor; the real one is the gate.
//
// Decisions (docs/uws.md): step inputs are evaluated eagerly in the enclosing scope; step
// outputs see $outputs seeded with the callee's outputs; a step without outputs passes the
// callee's outputs through; criteria never read $outputs. An indeterminate outcome (exit 5)
// is never retried.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "gate/gate.h"
#include "json/json.h"
#include "json/result.h"
#include "uws/binding.h"
#include "uws/plan.h"

namespace udon::uws {

struct LeafOutcome {
  std::optional<Error> error;  // nullopt: success
  int exit_code = 0;
  json::Value body;  // validated structuredContent, or null
};

// Must be safe to call from several threads at once (parallel steps).
class LeafExecutor {
 public:
  virtual ~LeafExecutor() = default;
  virtual LeafOutcome Execute(const McpOperation& operation, const json::Value& arguments) = 0;
};

// The gate: expect_output when the operation declares outputs, bound_paths from the body.
class GateLeafExecutor : public LeafExecutor {
 public:
  explicit GateLeafExecutor(gate::Gate& gate) : gate_(gate) {}
  LeafOutcome Execute(const McpOperation& operation, const json::Value& arguments) override;

 private:
  gate::Gate& gate_;
};

struct RunOptions {
  // How retryAfter waits; the default sleeps, and stops early when the run is cancelled.
  std::function<void(std::chrono::milliseconds)> sleep;
  // Test seam: runs when a parallel block cancels its remaining siblings.
  std::function<void()> on_cancel;
  // Progress: a step begins (not skipped), with its path (e.g. main/fetch). Parallel
  // branches call it from their own threads.
  std::function<void(const std::string& step_path)> on_step;
};

struct RunOutcome {
  std::optional<Error> error;  // details.step holds the failing step path
  int exit_code = 0;
  std::string step_path;  // e.g. main/fetch or main/each[2]/convert
  json::Value outputs = json::Value::object();
  bool ended = false;  // an onFailure end action finished the run

  bool ok() const { return !error.has_value(); }
};

// Runtime codes beyond the gate's: uws.expression_failed (2), uws.criteria_unsatisfied
// (4), uws.timeout (5), uws.unsupported for an end action inside parallel (2).
int RunExitCodeFor(const std::string& code);

RunOutcome Run(const Plan& plan, const json::Value& inputs, LeafExecutor& leaf, const RunOptions& options = {});

}  // namespace udon::uws
