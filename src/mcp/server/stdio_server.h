// MCP over stdio, server side: newline-delimited JSON-RPC on two file descriptors. Only MCP
// messages are written to the output; diagnostics belong on stderr.
#pragma once

#include "mcp/protocol/jsonrpc.h"
#include "mcp/server/server.h"

namespace udon::mcp {

struct StdioServerOptions {
  int in_fd = 0;
  int out_fd = 1;
  MessageLimits limits;
  // When set: the server stops reading once this descriptor turns readable (or hangs up),
  // exactly as at the end of input (a signal handler writes to a pipe).
  int stop_fd = -1;
};

// Serves one session until the input ends (or stop_fd turns readable), then closes open subscriptions/listen streams
// (each gets its graceful closure response) and waits for calls still running. Tool calls
// and listen streams run off the reading thread, so that other requests and cancellations
// keep flowing meanwhile: on one of 8 threads kept between calls when one is free, else on
// a thread of their own (never queued); both eras share the one channel. Frames that are not valid
// JSON-RPC are answered with a JSON-RPC error without an id.
void RunStdioServer(Server& server, const StdioServerOptions& options = {});

}  // namespace udon::mcp
