// Coalesced verification (contract 4): concurrent calls of one server share its
// connection, and one re-list sent after all of them arrived verifies them all, the way a
// database commits a group of transactions with one log flush. What stays each call's own:
// the static checks and argument validation (step 2), the comparison of its own Tool (step
// 5), the event check and recheck (steps 6, 7) and the last look right before its send.
#include <algorithm>
#include <utility>

#include "gate/gate.h"
#include "gate/internal/lane.h"
#include "gate/internal/run.h"

namespace udon::gate {

using internal::Refuse;

bool Gate::Coalesced(const Run& run) const {
  return env_.coalesce_verification && env_.reuse_connections && run.reach == Reach::kCall;
}

std::shared_ptr<Gate::Lane> Gate::LaneFor(const std::string& server) {
  std::lock_guard<std::mutex> guard(lanes_mutex_);
  std::shared_ptr<Lane>& lane = lanes_[server];
  if (!lane) lane = std::make_shared<Lane>();
  return lane;
}

// Step 3, coalesced: the server's shared connection while it stays eligible (JudgeReuse,
// as for a pooled one; one opened for the same manifest and not yet bound is shared too,
// its first group binds it); else this run opens (or takes from the pool) the next shared
// one while later arrivals wait for it. A list_changed the shared connection saw since its
// binding refuses, as on a pooled connection.
Status Gate::ConnectThroughLane(Run& run, const RecordedServer& recorded, const mcp::ServerConfig& server) {
  std::shared_ptr<Lane> lane = LaneFor(run.binding.server);
  {
    std::unique_lock<std::mutex> lock(lane->mutex);
    UDON_RETURN_IF_ERROR(AwaitLaneOpen(run, *lane, lock));
    if (lane->connection) {
      PooledConnection& shared = *lane->connection;
      // Unbound, a connection has no manifest of its own yet: the one it was opened for stands in.
      const bool opened_for_this = !shared.bound_since && lane->opened_for == run.manifest->sha256();
      const ReuseVerdict verdict =
          JudgeReuse(shared, {recorded.protocol_version, recorded.server_info_sha256,
                              opened_for_this ? shared.manifest_sha256 : run.manifest->sha256()});
      if (verdict.reusable()) {
        run.connection = lane->connection;
        run.lane = lane;
        run.reused = true;
        run.checked_through = run.connection->client->connection().LastSequence();
        return OkStatus();
      }
      // Its users finish on it; the last one closes it (and records what it saw).
      const bool same_binding = verdict.list_changed && shared.bound_since &&
                                shared.manifest_sha256 == run.manifest->sha256();
      shared.retired = true;
      lane->connection.reset();
      if (same_binding) {
        lock.unlock();
        run.reuse_refused = "list_changed";
        RecordInvalidation(run, "list_changed_between_calls");
        return Refuse("binding.invalidated", "list_changed arrived on the shared connection after its binding");
      }
    }
    lane->connecting = true;
    lane->opening_for = run.manifest->sha256();
  }
  return OpenThroughLane(run, lane, recorded, server);
}

// While another call opens the server's shared connection, waits for it. When that open
// fails, the calls for the same manifest that waited for it are refused with its error
// rather than each opening another (a server that does not start is not started N times).
// Errors: the failed open's (server.connect_failed, binding.invalidated, ...).
Status Gate::AwaitLaneOpen(const Run& run, Lane& lane, std::unique_lock<std::mutex>& lock) {
  while (lane.connecting) {
    const std::uint64_t awaited = lane.opens_ended + 1;
    const bool same_manifest = lane.opening_for == run.manifest->sha256();
    if (env_.on_open_awaited) env_.on_open_awaited();
    lane.changed.wait(lock, [&] { return lane.opens_ended >= awaited; });
    if (same_manifest && lane.failed_open == awaited) {
      Error error = *lane.open_failure;
      error.message = "the shared connection this call waited for could not be opened: " + error.message;
      return error;
    }
  }
  return OkStatus();
}

// The opener's part: its own connection (or a pooled one) becomes the shared one, or its
// refusal is left for the calls that waited.
Status Gate::OpenThroughLane(Run& run, const std::shared_ptr<Lane>& shared_lane, const RecordedServer& recorded,
                             const mcp::ServerConfig& server) {
  Status connected = ConnectOwn(run, recorded, server);
  Lane& lane = *shared_lane;
  std::lock_guard<std::mutex> guard(lane.mutex);
  lane.connecting = false;
  ++lane.opens_ended;
  if (connected.ok()) {
    lane.connection = run.connection;
    lane.opened_for = lane.opening_for;
    run.lane = shared_lane;
  } else {
    lane.failed_open = lane.opens_ended;
    lane.open_failure = connected.error();
  }
  lane.changed.notify_all();
  return connected;
}

// Step 4, coalesced: the verification this run joined lists for it; its own Tool is then
// selected from that listing.
Status Gate::ListShared(Run& run) {
  run.verification = JoinVerification(run);
  const Verification& verification = *run.verification;
  run.listings += verification.facts.listings;
  run.disturbed_listings += verification.facts.disturbed_listings;
  run.list_changed_before_binding += verification.facts.list_changed_before_binding;
  run.server_requests.insert(run.server_requests.end(), verification.facts.server_requests.begin(),
                             verification.facts.server_requests.end());
  run.checked_through = verification.facts.checked_through;
  run.barrier = verification.barrier;
  if (verification.error) {
    if (verification.error->code == "binding.invalidated") {
      RecordInvalidation(run, verification.error->details.value("reason", "list_changed_after_binding").c_str());
    }
    return *verification.error;
  }
  Status selected = SelectLiveTool(run, *verification.pages);
  if (!selected.ok()) return Settle(run, std::move(selected));
  return OkStatus();
}

// Joins the verification that has not started yet (the next one); the first member to
// find none in flight lists for every member that joined so far, and the group closes as
// its listing starts, so that listing was sent after each member arrived. A group lists on
// one connection and verifies only calls on that one: a run whose connection is another
// (the lane's was replaced while it was unbound or retired) waits for a group of its own,
// since another connection's re-list, barrier and event sequence say nothing about its own.
std::shared_ptr<Gate::Verification> Gate::JoinVerification(Run& run) {
  Lane& lane = *run.lane;
  std::unique_lock<std::mutex> lock(lane.mutex);
  if (env_.on_verification_joined) env_.on_verification_joined();
  while (lane.next && lane.next->connection.lock() != run.connection) lane.changed.wait(lock);
  if (!lane.next) {
    lane.next = std::make_shared<Verification>();
    lane.next->connection = run.connection;
  }
  std::shared_ptr<Verification> mine = lane.next;
  ++mine->unsettled;
  mine->checked_through = std::min(mine->checked_through, run.checked_through);
  bool woken = false;
  while (!mine->done) {
    if (lane.in_flight) {
      if (woken && env_.on_lane_stray_wakeup) env_.on_lane_stray_wakeup();
      mine->changed.wait(lock);
      woken = true;
      continue;
    }
    lane.in_flight = mine;
    lane.next.reset();
    lane.changed.notify_all();  // a run of another connection may now open the next group
    PooledConnection& connection = *run.connection;
    const std::optional<std::uint64_t> binding_from =
        connection.bound_since ? connection.bound_since : connection.listed_through;
    lock.unlock();
    ListForAll(run, *mine, binding_from);
    lock.lock();
    if (!mine->error && !connection.listed_through) connection.listed_through = mine->facts.checked_through;
    mine->done = true;
    lane.in_flight.reset();
    mine->changed.notify_all();
    if (lane.next) lane.next->changed.notify_one();  // one member of the next group leads it
  }
  return mine;
}

// The leader's part: the exhaustive re-list, then on an ordered transport one ping barrier
// for every member (each examines the events up to it in step 6). With `binding_from` the
// connection is bound (or an earlier group's comparisons are binding it): a list_changed
// after it refuses; one before it was seen by that group's listing, before any binding.
void Gate::ListForAll(Run& leader, Verification& verification, std::optional<std::uint64_t> binding_from) {
  catalog::ListingRules rules = catalog::ListingRulesFor(env_.policy, /*for_gate=*/true);
  rules.bound = binding_from.has_value();
  verification.facts.checked_through = std::max(verification.checked_through, binding_from.value_or(0));
  auto pages = catalog::ListStable(*leader.connection->client, rules, verification.facts);
  if (!pages.ok()) {
    verification.error = std::move(pages).error();
    return;
  }
  verification.pages = std::make_shared<const mcp::ToolPages>(std::move(pages).value());
  Status barrier = Barrier(leader);
  if (!barrier.ok()) verification.error = std::move(barrier).error();
  verification.barrier = leader.barrier;
}

// Waits until every member of the verification compared its own Tool. A catalog refusal
// of one refuses all: the others with the same code and details.reason "shared_verification"
// (another call's Tool is not theirs to describe).
Status Gate::Settle(Run& run, Status compared) {
  Lane& lane = *run.lane;
  Verification& verification = *run.verification;
  std::unique_lock<std::mutex> lock(lane.mutex);
  if (!compared.ok() && !verification.catalog_failure) verification.catalog_failure = compared.error();
  if (--verification.unsettled == 0) verification.changed.notify_all();
  bool woken = false;
  while (verification.unsettled != 0) {
    if (woken && env_.on_lane_stray_wakeup) env_.on_lane_stray_wakeup();
    verification.changed.wait(lock);
    woken = true;
  }
  if (!compared.ok() || !verification.catalog_failure) return compared;
  Error error = Refuse(verification.catalog_failure->code.c_str(),
                       "the shared re-list that was to verify this call found another call's Tool changed or missing");
  error.details["reason"] = "shared_verification";
  return error;
}

// The binding of a connection starts at its first successful comparison.
void Gate::BindConnection(Run& run) {
  std::unique_lock<std::mutex> lock;
  if (run.lane) lock = std::unique_lock<std::mutex>(run.lane->mutex);
  run.bound_sequence = run.checked_through;
  if (!run.connection->bound_since) {
    run.connection->bound_since = run.bound_sequence;
    run.connection->manifest_sha256 = run.manifest->sha256();
  }
}

// A dead shared connection: no further call joins it.
void Gate::LeaveLaneOnDeath(Run& run) {
  if (!run.lane) return;
  std::lock_guard<std::mutex> guard(run.lane->mutex);
  run.connection->retired = true;
  if (run.lane->connection == run.connection) run.lane->connection.reset();
  run.lane.reset();
}

// A run that leaves with a doubt (keep false) retires the shared connection; the last
// user keeps it (back to the pool) or closes it. A retired one is closed the way a pooled
// one is, so a list_changed it saw after its binding is recorded.
bool Gate::LeaveLane(Run& run, bool& keep) {
  std::shared_ptr<PooledConnection> connection;
  {
    std::lock_guard<std::mutex> guard(run.lane->mutex);
    if (!keep) run.connection->retired = true;
    if (run.connection->retired && run.lane->connection == run.connection) run.lane->connection.reset();
    const long lane_holds = run.lane->connection == run.connection ? 1 : 0;
    if (run.connection.use_count() - lane_holds > 1) {
      run.connection.reset();  // under the lock: use_count is read only here
      return false;
    }
    if (run.lane->connection == run.connection) run.lane->connection.reset();
    keep = keep && !run.connection->retired;
    if (keep) return true;
    connection = std::move(run.connection);
  }
  NoteUnrecorded(run, ClosePooled(run.binding.server, *connection, "list_changed_between_calls"));
  return false;
}

}  // namespace udon::gate
