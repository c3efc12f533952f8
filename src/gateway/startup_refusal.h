// A gateway that refuses to start (a wrong pin, an unreadable manifest) says why to the host
// too, not only on its own stderr: a host shows its user what its server answered, and a
// bare end of the connection reads as "Connection closed". docs/contract.md 7.16.
#pragma once

#include <chrono>
#include <cstddef>

#include "base/result.h"

namespace udon::gateway {

// The JSON-RPC error code of a start-up refusal: JSON-RPC's "internal error", which every
// host knows; the contract's code travels in the message and in data.code.
inline constexpr int kStartUpRefusedCode = -32603;

struct StartUpRefusalOptions {
  int in_fd = 0;   // the host's requests (stdin)
  int out_fd = 1;  // the answers (stdout, the MCP channel)
  // How long a host may take to ask: one that never sends initialize does not keep the
  // refusing gateway alive.
  std::chrono::milliseconds wait{10'000};
};

// Answers each request the host sends (initialize, server/discover, anything else) with a
// JSON-RPC error whose message is "CODE: fixed message" and whose data is {code, exit},
// until it has answered initialize, `in_fd` ends or is a terminal, a frame is unreadable or
// over 1 MiB, or `wait` has passed. Notifications and anything that is not a request are
// skipped. Write errors end it (the caller ignores SIGPIPE). Returns the requests answered.
std::size_t AnswerStartUpRefusal(const Error& error, int exit, const StartUpRefusalOptions& options = {});

}  // namespace udon::gateway
