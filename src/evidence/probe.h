// The determinism probe (issue 10): N gated calls with identical arguments, K at a time,
// each recorded as value-free evidence, and a verdict on whether the results contradict
// the review (modelBacked false, yet the result digests differ).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "gate/evidence.h"
#include "gate/gate.h"
#include "json/json.h"
#include "base/result.h"

namespace udon::evidence {

struct ProbeOptions {
  int repeat = 1;        // N >= 1
  int concurrency = 1;   // K >= 1: calls in flight at once (serialize tools still never
                         // overlap at dispatch: the gate's lock holds them apart)
  bool fresh_connections = false;   // off: the gate reuses eligible connections
  bool allow_side_effects = false;  // a reviewed non-empty sideEffects list needs this
  std::string run_id;    // empty: a random one
  // Progress: a repetition finished (done of total); called from the calling threads.
  std::function<void(int done, int total)> on_progress;
};

// Exit status 1 when a finding contradicts the review.
inline constexpr int kExitFinding = 1;
// A probe that would repeat side effects without --allow-side-effects (a refusal).
inline constexpr const char* kSideEffectsRefused = "probe.side_effects_refused";
// Finding: results differ across identical calls of a tool reviewed modelBacked false.
inline constexpr const char* kNondeterministicNotModelBacked = "probe.nondeterministic_not_model_backed";

struct ProbeOutcome {
  std::optional<Error> refusal;  // set when nothing was called (side-effect refusal)
  // The value-free report (see docs/experiment.md). Its "exit" is the probe's verdict as an
  // exit status: 5 stopped on an indeterminate call, kExitFinding on a finding, else the
  // first failed call's recorded exit (gate::DecisionExit), 0 when all succeeded.
  json::Value report;
};

// Runs the probe. env.command is set to "probe" and env.reuse_connections follows
// options; every call's record (the gate's record plus a "probe" object) goes to
// `evidence` when it is not null, as each call completes.
ProbeOutcome RunProbe(gate::GateEnvironment env, gate::EvidenceWriter* evidence,
                      const manifest::Binding& binding, const json::Value& arguments,
                      const ProbeOptions& options);

// The report for people: outcomes, digests, comparisons, findings.
std::string ProbeReportText(const json::Value& report);

}  // namespace udon::evidence
