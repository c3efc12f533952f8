// Host names looked up where their owner can stop waiting (issue 38). libpq resolves a
// host name inside PQconnectStart and PQconnectPoll (getaddrinfo), where neither a
// cancellation nor a deadline reaches it: a resolver that never answers holds the attempt
// for the resolver's own timeouts, and the command with it.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace udon::state_pg::internal {

using Clock = std::chrono::steady_clock;

// The addresses of each of `names` (numeric, in getaddrinfo's order; none for a name that
// cannot be resolved), looked up on a thread of its own. nullopt when `cancel_fd` (-1:
// none) became readable or `deadline` (nullopt: none) passed first: the lookup is then
// abandoned, and its thread frees what it finds and ends by itself.
std::optional<std::vector<std::vector<std::string>>> ResolveUnlessCancelled(
    const std::vector<std::string>& names, int cancel_fd, std::optional<Clock::time_point> deadline);

// Milliseconds until `deadline` for poll(): -1 without one, 0 once it has passed.
int PollMilliseconds(std::optional<Clock::time_point> deadline);

}  // namespace udon::state_pg::internal
