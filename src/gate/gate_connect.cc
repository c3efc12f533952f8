// Step 3: a pooled connection while it may be reused, else a fresh one at exactly the
// recorded version and serverInfo; and the pool's side: what a connection saw while idle.
#include "gate/gate.h"

#include <mutex>
#include <utility>

#include "catalog/catalog.h"
#include "gate/comparison.h"
#include "gate/internal/details.h"
#include "gate/internal/run.h"
#include "gate/state_store.h"
#include "mcp/client/www_authenticate.h"


namespace udon::gate {

using internal::DriftDetails;
using internal::Refuse;
using internal::ServerInfoDifferences;
using internal::WarnTo;

// A list_changed that reached a bound connection while it sat idle is still a change of
// the bound catalog: recorded when the pool lets the connection go, so the next process
// refuses too. Errors: state.write_failed.
Status Gate::ClosePooled(const std::string& server, PooledConnection& pooled, const char* reason) {
  Status recorded = OkStatus();
  if (pooled.idle_watch) pooled.client->connection().RemoveEventObserver(*pooled.idle_watch);
  if (ListChangedSinceBinding(pooled)) {
    recorded = internal::RecordEverywhere(*env_.invalidations, *env_.state, pooled.manifest_sha256, server, reason,
                                          env_.clock());
    if (env_.on_invalidated) env_.on_invalidated(server, reason);
  }
  pooled.client->Close();
  return recorded;
}

void Gate::WatchWhileIdle(const std::string& server, PooledConnection& pooled) {
  if (!pooled.bound_since) return;
  struct Watch {
    std::shared_ptr<StateStore> state;
    std::shared_ptr<InvalidationMemory> invalidations;
    std::function<manifest::Seconds()> clock;
    std::function<void(const std::string&, const std::string&)> on_invalidated;
    std::function<void(const std::string&)> warn;
    std::string manifest_sha256;
    std::string server;
    std::once_flag once;
  };
  auto watch = std::make_shared<Watch>();
  watch->state = env_.state;
  watch->invalidations = env_.invalidations;
  watch->clock = env_.clock;
  watch->on_invalidated = env_.on_invalidated;
  watch->warn = env_.warn;
  watch->manifest_sha256 = pooled.manifest_sha256;
  watch->server = server;
  // Captures only shared state: the observer may outlive this gate by a moment.
  pooled.idle_watch = pooled.client->connection().AddEventObserver([watch](const mcp::Event& event) {
    if (!catalog::IsListChanged(event)) return;
    std::call_once(watch->once, [&watch] {
      const char* reason = "list_changed_while_idle";
      if (!internal::RecordEverywhere(*watch->invalidations, *watch->state, watch->manifest_sha256, watch->server,
                                      reason, watch->clock())
               .ok()) {
        WarnTo(watch->warn, "the invalidation seen on an idle connection could not be recorded");
      }
      if (watch->on_invalidated) watch->on_invalidated(watch->server, reason);
    });
  });
}

// Contract 6: a pooled connection is reused only while it speaks the manifest's version
// with its serverInfo, is alive, and nothing changed the bound catalog since its binding
// began (JudgeReuse). A list_changed in that time invalidates (the binding began at its
// first comparison, so the proposal's rule applies even while it sat idle between calls).
// Not reused: run.connection stays empty and run.reuse_refused says why.
Status Gate::ReuseFromPool(Run& run, const RecordedServer& recorded) {
  std::shared_ptr<PooledConnection> pooled = pool_.Take(run.binding.server);
  if (!pooled) return OkStatus();
  if (pooled->idle_watch) {
    // In use again: this run's own checks see every event from here on.
    pooled->client->connection().RemoveEventObserver(*pooled->idle_watch);
    pooled->idle_watch.reset();
  }
  const ReuseVerdict verdict =
      JudgeReuse(*pooled, {recorded.protocol_version, recorded.server_info_sha256, run.manifest->sha256()});
  if (verdict.list_changed) {
    // Recorded for the manifest the connection was bound for; this run's refusal follows
    // from it when that is the same manifest, and the run goes on fresh otherwise.
    NoteUnrecorded(run, ClosePooled(run.binding.server, *pooled, "list_changed_between_calls"));
    if (pooled->manifest_sha256 == run.manifest->sha256()) {
      run.reuse_refused = "list_changed";
      run.invalidation = "list_changed_between_calls";
      return Refuse("binding.invalidated", "list_changed arrived on the reused connection after its binding");
    }
    run.reuse_refused = "other_manifest";
    return OkStatus();
  }
  if (!verdict.reusable()) {
    run.reuse_refused = verdict.refused;
    pooled->client->Close();
    return OkStatus();
  }
  run.connection = std::move(pooled);
  run.reused = true;
  run.checked_through = run.connection->client->connection().LastSequence();
  return OkStatus();
}

// Contract 6: a reused connection the server no longer knows (HTTP 404 on its session, its
// connection or stdio process ended) says nothing about the server as it is now, which may
// have restarted with other tools: before dispatch the run goes on from step 3 on a fresh
// connection, once, and every step decides on that one. A live connection's failure, a
// refusal of what the server said, and anything after dispatch stand as they are.
bool Gate::ReplaceDeadConnection(Run& run, const Error& error) {
  if (!run.reused || run.replaced || run.result->dispatched || !run.connection) return false;
  if (error.code != "server.connect_failed" || run.connection->client->connection().connected()) return false;
  LeaveLaneOnDeath(run);
  // A list_changed the dead connection saw after its binding is recorded, and refuses.
  const bool changed = ListChangedSinceBinding(*run.connection);
  NoteUnrecorded(run, ClosePooled(run.binding.server, *run.connection, "list_changed_between_calls"));
  run.connection.reset();
  if (changed) {
    run.invalidation = "list_changed_between_calls";
    return false;
  }
  run.replaced = true;
  run.reused = false;
  run.reuse_refused = "connection_lost";
  run.checked_through = run.bound_sequence = 0;
  run.barrier = false;
  return true;
}

// Contract 7.23: an HTTP 401 or 403 answers before the server processed anything, so it is
// no dispatch. A 401 refreshes the stored login once and the run starts again from step 3
// on a fresh connection (the re-list, the comparison, the ping: every check again); a
// second 401, a 403, or a 401 no login can answer ends with its auth.* refusal.
bool Gate::RestartAfterRefusedToken(Run& run, Error& error) {
  const std::optional<long> status = mcp::RefusedCredentialStatus(error);
  if (!status || run.result->dispatched) return false;
  if (run.connection) {
    LeaveLaneOnDeath(run);
    const bool changed = ListChangedSinceBinding(*run.connection);
    NoteUnrecorded(run, ClosePooled(run.binding.server, *run.connection, "list_changed_between_calls"));
    run.connection.reset();
    if (changed) run.invalidation = "list_changed_between_calls";
  }
  const Error refused = mcp::RefusedCredentialError(error, run.binding.server);
  if (*status != 401 || run.reauthorized || !run.server_config || env_.config == nullptr ||
      !env_.config->reauthorize_http || !run.invalidation.empty()) {
    error = refused;
    return false;
  }
  Result<bool> refreshed = env_.config->reauthorize_http(*run.server_config);
  if (!refreshed.ok()) {
    error = std::move(refreshed).error();  // auth.login_expired and the store's codes
    return false;
  }
  if (!*refreshed) {
    error = refused;
    return false;
  }
  run.reauthorized = true;
  run.reused = false;
  run.replaced = true;  // never a pooled connection again: it carries the refused token
  run.checked_through = run.bound_sequence = 0;
  run.barrier = false;
  return true;
}

// Starts or reaches the server (env_.connect). Errors: server.connect_failed (the client's
// own, or details.cause naming the client's code).
Status Gate::OpenFresh(Run& run, const mcp::ServerConfig& server) {
  auto client = env_.connect(server, catalog::ClientOptionsFor(env_.policy, CallTimeout(run.binding.server)));
  if (!client.ok()) {
    // The client's server.connect_failed already says why (a missing command, its OS error).
    if (client.error().code == "server.connect_failed") return std::move(client).error();
    Error error = Refuse("server.connect_failed", "the server could not be started or reached");
    error.details["cause"] = client.error().code;
    return error;
  }
  run.connection = std::make_shared<PooledConnection>();
  run.connection->client = std::move(client).value();
  return OkStatus();
}

// The manifest's revision decides the wire: initialize (legacy) or server/discover
// (modern), at exactly the recorded version. Errors: server.protocol_version_mismatch and
// server.connect_failed (details.recorded, and the server's exit), server.server_info_mismatch
// (discovery named no serverInfo), server.connect_failed (details.cause).
Result<mcp::InitializeResult> Gate::Handshake(Run& run, const RecordedServer& recorded) {
  auto init = run.connection->client->Open(recorded.protocol_version);
  if (init.ok()) return init;
  // The client's contract codes carry the engine's cause (and transportCause) already.
  if (init.error().code == "server.protocol_version_mismatch" || init.error().code == "server.connect_failed") {
    Error error = std::move(init).error();
    error.details["recorded"] = recorded.protocol_version;
    mcp::AddServerExit(error, *run.connection->client);
    return error;
  }
  if (init.error().code == "mcp.server_info_missing") {
    run.server_info_drift = DriftDetails(json::Diff(*recorded.server_info, json::Value()));
    Error error = Refuse("server.server_info_mismatch", "discovery named no serverInfo; the reviewed one is required");
    error.details["pointers"] = run.server_info_drift;
    return error;
  }
  Error error = Refuse("server.connect_failed", mcp::IsModernProtocolVersion(recorded.protocol_version)
                                                    ? "server/discover failed"
                                                    : "initialize failed");
  error.details["cause"] = init.error().code;
  mcp::AddServerExit(error, *run.connection->client);
  return error;
}

// Gate 3: exactly the recorded version and serverInfo. Errors:
// server.protocol_version_mismatch (details.recorded, negotiated), server.server_info_mismatch
// (details.pointers; the values only in for_people).
Status Gate::CheckNegotiated(Run& run, const RecordedServer& recorded, const mcp::InitializeResult& init) {
  Status same = CompareNegotiated(recorded.protocol_version, *recorded.server_info, init.protocol_version,
                                  init.server_info);
  if (!same.ok() && same.error().code == "server.server_info_mismatch") {
    run.server_info_drift = same.error().details["pointers"];
    // Values stay out of details (--json, evidence): only the text for people shows them.
    run.result->for_people["serverInfo"] = ServerInfoDifferences(*recorded.server_info, init.server_info);
  }
  return same;
}

// Modern era: tool-list changes arrive only on a subscription, so it must stand before
// the listing that the comparison relies on (a no-op for legacy connections).
// Errors: server.connect_failed (details.cause, and the client's details.reason).
Status Gate::SubscribeToToolList(Run& run) {
  Status subscribed = run.connection->client->Subscribe();
  if (subscribed.ok()) return OkStatus();
  Error error = Refuse("server.connect_failed", "the tool-list subscription could not be established");
  error.details["cause"] = subscribed.error().code;
  if (subscribed.error().details.contains("reason")) error.details["reason"] = subscribed.error().details["reason"];
  return error;
}

// Step 3: a pooled connection while it stays eligible, else a fresh one at exactly the
// recorded version and serverInfo, subscribed to the tool list in the modern era.
Status Gate::StepConnect(Run& run) {
  if (env_.config == nullptr) {
    return Refuse("config.server_unknown", "no runtime configuration names this server");
  }
  auto server_config = env_.config->Find(run.binding.server);
  if (!server_config.ok()) return std::move(server_config).error();
  run.server_config = *server_config;
  const json::Value& recorded_info = *run.manifest->server_info(run.binding.server);
  const RecordedServer recorded{*run.manifest->protocol_version(), &recorded_info,
                                run.bound_facts->server_info_sha256};
  if (Coalesced(run)) return ConnectThroughLane(run, recorded, *server_config);
  return ConnectOwn(run, recorded, *server_config);
}

// A pooled connection while it stays eligible, else a fresh one (this run's own).
Status Gate::ConnectOwn(Run& run, const RecordedServer& recorded, const mcp::ServerConfig& server) {
  if (env_.reuse_connections && !run.replaced) {
    UDON_RETURN_IF_ERROR(ReuseFromPool(run, recorded));
    if (run.reused) return OkStatus();
  }
  UDON_RETURN_IF_ERROR(OpenFresh(run, server));
  UDON_ASSIGN_OR_RETURN(mcp::InitializeResult init, Handshake(run, recorded));
  UDON_RETURN_IF_ERROR(CheckNegotiated(run, recorded, init));
  UDON_RETURN_IF_ERROR(SubscribeToToolList(run));
  run.connection->protocol_version = recorded.protocol_version;
  run.connection->server_info_sha256 = recorded.server_info_sha256;
  return OkStatus();
}

}  // namespace udon::gate
