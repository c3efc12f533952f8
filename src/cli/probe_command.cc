// probe: the determinism probe (docs/experiment.md) — N gated calls with identical
// arguments, K at a time, and whether their results contradict the review.
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "evidence/probe.h"
#include "gate/gate.h"
#include "gate/state.h"
#include "base/file.h"

namespace udon::cli {
namespace {

struct ProbeCommandOptions {
  BindingOptions bound;
  int repeat = 0;
  int concurrency = 1;
  bool fresh_connections = false;
  bool allow_side_effects = false;
  bool diagnostics = false;
  CommonOptions common;
};

int RunProbe(const ProbeCommandOptions& o) {
  const bool json = o.common.json;
  auto arguments = ReadToolArguments(o.bound.args, o.bound.args_file);
  if (!arguments.ok()) return ReportError(arguments.error(), json, kExitInvalidInput);
  gate::GateEnvironment env;
  auto policy = LoadPolicy(o.common);
  if (!policy.ok()) return ReportError(policy.error(), json, ExitCodeFor(policy.error()));
  env.policy = std::move(policy).value();
  // As for call: an absent configuration surfaces as an unknown server at the connect step.
  mcp::RuntimeConfig config;
  auto loaded = LoadConfig(o.common);
  if (!loaded.ok() && loaded.error().code != "config.unreadable") {
    return ReportError(loaded.error(), json, ExitCodeFor(loaded.error()));
  }
  if (loaded.ok()) config = std::move(loaded).value();
  env.config = &config;
  auto state_dir = gate::ResolveStateDir(o.common.state_dir);
  if (!state_dir.ok()) return ReportError(state_dir.error(), json, ExitCodeFor(state_dir.error()));
  env.state_dir = *state_dir;
  if (Status state = OpenState(o.common, env); !state.ok()) {
    return ReportError(state.error(), json, kExitInvalidInput);
  }
  auto writer = OpenEvidence(o.common, env.policy);
  if (!writer.ok()) return ReportError(writer.error(), json, kExitInternal);
  env.call_timeout = TimeoutOption(o.common);

  // Diagnostics never enter the report: each distinct set is printed once, as it happens.
  auto printed = std::make_shared<std::pair<std::mutex, std::set<std::string>>>();
  if (o.diagnostics) {
    env.diagnostics = [printed](const std::vector<mcp::Diagnostic>& diagnostics) {
      std::string key;
      for (const auto& d : diagnostics) key += d.what + '\0' + d.text + '\0';
      std::lock_guard<std::mutex> guard(printed->first);
      if (printed->second.insert(key).second) PrintDiagnostics(diagnostics, "a repetition");
    };
  }

  evidence::ProbeOptions options;
  if (ProgressWanted(json)) {
    options.on_progress = [](int done, int total) {
      PrintProgress("probe: " + std::to_string(done) + "/" + std::to_string(total) + " repetition(s) done");
    };
  }
  options.repeat = o.repeat;
  options.concurrency = o.concurrency;
  options.fresh_connections = o.fresh_connections;
  options.allow_side_effects = o.allow_side_effects;
  const manifest::Binding binding = o.bound.binding();
  evidence::ProbeOutcome outcome = evidence::RunProbe(std::move(env), writer->get(), binding, *arguments, options);
  if (outcome.refusal) return ReportError(*outcome.refusal, json, ExitCodeFor(*outcome.refusal));
  bool failed_calls = false;
  if (outcome.report.contains("outcomes") && outcome.report["outcomes"].is_object()) {
    for (const auto& [code, count] : outcome.report["outcomes"].items()) failed_calls |= code != "ok";
  }
  if (!o.diagnostics && failed_calls) {
    std::fprintf(stderr, "udon-mcp: note: --diagnostics shows why calls failed (the tool's error text, the server's "
                         "stderr and the transport's cause)\n");
  }
  if (json) {
    PrintJsonResult(outcome.report);
  } else {
    const std::string text = evidence::ProbeReportText(outcome.report);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return outcome.report["exit"].get<int>();
}

}  // namespace

void RegisterProbeCommand(CLI::App& app) {
  auto o = std::make_shared<ProbeCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "probe", "Repeat one gated call N times, K at a time; report result digests against the review");
  AddBindingOptions(command, o->bound);
  AddArgumentOptions(command, o->bound, "Arguments as a JSON object (the same for every call)");
  command->add_option("--repeat", o->repeat, "Number of calls")->required()->check(CLI::Range(1, 100000));
  command->add_option("--concurrency", o->concurrency, "Calls in flight at once (default 1)")
      ->check(CLI::Range(1, 256));
  command->add_flag("--fresh-connections", o->fresh_connections, "A new connection for every call (default: reuse)");
  command->add_flag("--allow-side-effects", o->allow_side_effects,
                    "Probe a tool whose review lists side effects (they are repeated N times)");
  AddCommonOptions(command, o->common);
  AddDiagnosticsFlag(command, o->diagnostics);
  SetAction(command, &o->common.json, [o] { return RunProbe(*o); });
}

}  // namespace udon::cli
