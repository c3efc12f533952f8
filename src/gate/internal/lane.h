// Private to the gate's sources: coalesced verification (contract 4, "one verification for
// the calls that arrived before it"). Concurrent calls of one server share its connection
// (a lane); a call that reaches the listing while a verification is in flight waits for
// the next one, whose re-list (and stdio ping barrier) is sent only after every call it
// verifies has joined. gate_coalesce.cc holds the logic.
#ifndef UDON_GATE_INTERNAL_LANE_H_
#define UDON_GATE_INTERNAL_LANE_H_

#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/result.h"
#include "catalog/catalog.h"
#include "gate/connection_pool.h"
#include "gate/gate.h"
#include "mcp/client/tool_pages.h"

namespace udon::gate {

// One shared re-list and what it found, for every call that joined before it was sent.
struct Gate::Verification {
  // The connection its re-list and barrier go to, and the only one its members call on
  // (weak: a member's use count decides who closes a shared connection, see LeaveLane).
  std::weak_ptr<PooledConnection> connection;
  int unsettled = 0;  // members that have not yet compared their own Tool
  // The oldest event sequence any member had examined when it joined: the listing looks
  // for list_changed after it.
  std::uint64_t checked_through = std::numeric_limits<std::uint64_t>::max();
  bool done = false;
  bool barrier = false;
  std::optional<Error> error;  // the listing's or the barrier's: every member's refusal
  std::shared_ptr<const mcp::ToolPages> pages;
  catalog::ListingFacts facts;
  // The first catalog refusal a member's own comparison found (drift, a missing or
  // duplicated tool): it refuses every member, none of which dispatches before all compared.
  std::optional<Error> catalog_failure;
  // Its members wait here (under the lane's mutex), not on the lane's: for it to be done,
  // for the flight before it to end (one of them then leads it), and in Settle. So the
  // other group's start, end or settling wakes none of them (issue 41).
  std::condition_variable changed;
};

// A server's shared connection and its verifications. Guarded by `mutex`: which connection
// is shared, whether one is being opened, the in-flight and next verifications, and the
// shared connection's bound_since and retired flag.
struct Gate::Lane {
  std::mutex mutex;
  std::condition_variable changed;  // an open ended, or the next verification started
  std::shared_ptr<PooledConnection> connection;
  std::string opened_for;  // the manifest digest `connection` was opened (or taken) for
  // One open at a time: the calls that arrive meanwhile wait for it (a burst's start
  // costs one cold start, not one per arrival).
  bool connecting = false;
  std::string opening_for;           // the manifest digest of the open in progress
  std::uint64_t opens_ended = 0;     // how many opens through this lane have ended
  std::uint64_t failed_open = 0;     // the number of the last that failed; 0: none
  std::optional<Error> open_failure;  // its refusal, for the calls that waited for it
  std::shared_ptr<Verification> in_flight;
  std::shared_ptr<Verification> next;
};

}  // namespace udon::gate

#endif  // UDON_GATE_INTERNAL_LANE_H_
