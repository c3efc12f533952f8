// The gate: the step table and Gate::Call (contract 4, the proposal's Gate rules); each
// step group lives in a gate_*.cc file beside this one, the run they share in
// internal/run.h.
#include "gate/gate.h"

#include <cstdio>
#include <utility>

#include "gate/internal/run.h"
#include "gate/state_store.h"

namespace udon::gate {
namespace internal {

// Where a gate's warnings go: GateEnvironment::warn, else stderr.
void WarnTo(const std::function<void(const std::string&)>& warn, const std::string& text) {
  if (warn) {
    warn(text);
  } else {
    std::fprintf(stderr, "udon-mcp: warning: %s\n", text.c_str());
  }
}

Status RecordEverywhere(InvalidationMemory& memory, StateStore& store, std::string_view manifest_sha256,
                        std::string_view server, std::string_view reason, std::int64_t at) {
  memory.Note(manifest_sha256, server, at);
  return store.Record(manifest_sha256, server, reason, at);
}

}  // namespace internal

using internal::Clock;
using internal::MillisecondsSince;
using internal::Refuse;
using internal::WarnTo;

Gate::Gate(GateEnvironment environment)
    : env_(std::move(environment)), pool_(env_.max_idle_per_server, env_.idle_close_after, env_.idle_clock) {
  if (!env_.manifests) env_.manifests = std::make_shared<manifest::ManifestCache>();
  if (!env_.connect) {
    env_.connect = [](const mcp::ServerConfig& server, const mcp::ClientOptions& options) {
      return mcp::Client::Connect(server, options);
    };
  }
  if (!env_.state) env_.state = std::make_shared<FileStateStore>(env_.state_dir);
  if (!env_.invalidations) env_.invalidations = std::make_shared<InvalidationMemory>();
}

Gate::~Gate() { CloseIdle(pool_.TakeAll()); }

void Gate::CloseIdle(std::vector<std::pair<std::string, std::shared_ptr<PooledConnection>>> idle) {
  for (auto& [server, pooled] : idle) {
    if (!ClosePooled(server, *pooled, "list_changed_while_idle").ok()) {
      Warn("the invalidation seen on an idle connection could not be recorded");
    }
  }
}

void Gate::Warn(const std::string& text) const { WarnTo(env_.warn, text); }

// Records the run's invalidation durably. The verdict that led here stands whether or not
// the record could be written (a refusal stays a refusal, an indeterminate outcome stays
// indeterminate); a failed write is said in details (stateWriteFailed) and on stderr.
void Gate::RecordInvalidation(Run& run, const char* reason) {
  run.invalidation = reason;
  NoteUnrecorded(run, internal::RecordEverywhere(*env_.invalidations, *env_.state, run.manifest->sha256(),
                                                 run.binding.server, reason, env_.clock()));
  if (env_.on_invalidated) env_.on_invalidated(run.binding.server, reason);
}

void Gate::NoteUnrecorded(Run& run, const Status& recorded) {
  if (recorded.ok()) return;
  run.invalidation_write_failure = recorded.error().code;
  Warn("the invalidation could not be recorded in the state directory; later processes will not know of it");
}

GateResult Gate::CheckStatic(const manifest::Binding& binding) {
  return Execute(binding, nullptr, CallOptions{}, Reach::kStatic);
}

GateResult Gate::Verify(const manifest::Binding& binding) {
  return Execute(binding, nullptr, CallOptions{}, Reach::kVerify);
}

GateResult Gate::Call(const manifest::Binding& binding, const json::Value& arguments,
                      const CallOptions& options) {
  return Execute(binding, &arguments, options, Reach::kCall);
}

GateResult Gate::Execute(const manifest::Binding& binding, const json::Value* arguments,
                         const CallOptions& options, Reach reach) {
  GateResult result;
  Run run;
  run.binding = binding;
  run.arguments = arguments;
  run.options = options;
  run.result = &result;
  run.reach = reach;

  using StepFn = Status (Gate::*)(Run&);
  std::vector<std::pair<const char*, StepFn>> steps = {
      {"digest", &Gate::StepDigest}, {"static", &Gate::StepStatic}};
  if (reach != Reach::kStatic) {
    steps.insert(steps.end(), {{"connect", &Gate::StepConnect},
                               {"list", &Gate::StepList},
                               {"compare", &Gate::StepCompare},
                               {"arguments", &Gate::StepArguments}});
  }
  if (reach == Reach::kCall) {
    steps.insert(steps.end(), {{"recheck", &Gate::StepRecheck}, {"dispatch", &Gate::Dispatch}});
  }

  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& [name, step] = steps[i];
    const auto start = Clock::now();
    const auto started = std::chrono::system_clock::now();
    Status status = (this->*step)(run);
    result.steps.push_back({name, status.ok() ? "ok" : status.error().code, MillisecondsSince(start), started});
    if (!status.ok()) {
      if (ReplaceDeadConnection(run, status.error())) {
        i = 1;  // on from "connect" (steps[2]), once
        continue;
      }
      Error error = std::move(status).error();
      if (RestartAfterRefusedToken(run, error)) {
        i = 1;  // on from "connect", with the refreshed token, once
        continue;
      }
      result.error = std::move(error);
      break;
    }
    if (env_.after_step && run.connection) env_.after_step(name, run.connection->client->connection());
  }
  Finish(run, result);
  return result;
}

// --timeout (env.call_timeout), else the server entry's "timeout" (milliseconds, as MCP
// clients configure it), else the policy's callTimeoutSeconds.
std::chrono::milliseconds Gate::CallTimeout(const std::string& server) const {
  if (env_.call_timeout.count() > 0) return env_.call_timeout;
  if (env_.config != nullptr) {
    auto entry = env_.config->servers.find(server);
    if (entry != env_.config->servers.end() && entry->second.timeout_ms) {
      return std::chrono::milliseconds(*entry->second.timeout_ms);
    }
  }
  return std::chrono::milliseconds(env_.policy.call_timeout_seconds * 1000LL);
}

}  // namespace udon::gate
