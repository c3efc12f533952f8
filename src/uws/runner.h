// The runner: executes a planned UWS workflow. Memoized records per workflow invocation
// (and per loop iteration), dependsOn on demand, when, timeouts, sequence / parallel /
// switch / loop structures, workflow-call steps, simple successCriteria and onFailure
// retry / end. Every leaf goes through a LeafExecutor; the real one is the gate
// (workflow::GateLeafExecutor).
//
// Decisions (docs/uws.md): step inputs are evaluated eagerly in the enclosing scope; step
// outputs see $outputs seeded with the callee's outputs; a step without outputs passes the
// callee's outputs through; criteria never read $outputs. An indeterminate outcome
// (IsIndeterminate) is never retried.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "json/json.h"
#include "base/result.h"
#include "uws/binding.h"
#include "uws/plan.h"

namespace udon::uws {

struct LeafOutcome {
  std::optional<Error> error;  // nullopt: success
  json::Value body;  // validated structuredContent, or null
};

// Must be safe to call from several threads at once (parallel steps).
class LeafExecutor {
 public:
  virtual ~LeafExecutor() = default;
  virtual LeafOutcome Execute(const McpOperation& operation, const json::Value& arguments) = 0;
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
  std::string step_path;  // e.g. main/fetch or main/each[2]/convert
  json::Value outputs = json::Value::object();
  bool ended = false;  // an onFailure end action finished the run

  bool ok() const { return !error.has_value(); }
};

// Runtime codes beyond the leaf's: uws.expression_failed, uws.criteria_unsatisfied,
// uws.timeout, uws.unsupported for an end action inside parallel.
//
// Whether a failure leaves the outcome of a call unknown, so it may have had effects and is
// never retried: the gate's call.indeterminate, or a timeout that elapsed around a call
// (uws.timeout).
bool IsIndeterminate(std::string_view code);

RunOutcome Run(const Plan& plan, const json::Value& inputs, LeafExecutor& leaf, const RunOptions& options = {});

}  // namespace udon::uws
