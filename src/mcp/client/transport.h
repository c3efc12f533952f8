// The transport seam under the JSON-RPC engine: a Transport moves whole messages to and
// from one MCP server. Implementations: StdioTransport (a child process), HttpTransport
// (Streamable HTTP over libcurl) and, for tests only, MemoryTransport (an in-process
// scripted peer, mcp/testing/).
//
// Error codes a transport reports (component-internal; the Client maps them to contract
// codes):
//   mcp.spawn_failed        the server command could not be started
//   mcp.message_too_large   a frame (stdio line, HTTP body, SSE event) exceeded the limit;
//                           the connection fails, the frame is never buffered whole
//   mcp.malformed_message   a frame that is not a valid JSON-RPC message (fails closed)
//   mcp.send_failed         the message could not be written / POSTed
//   mcp.http_status         an unexpected HTTP status (details.status)
//   mcp.session_expired     HTTP 404 (or 400) for a session the server has ended
//   mcp.stream_ended        an SSE stream ended before the response and cannot resume
//   mcp.server_exited       the server closed its output (process exit, EOF)
//   mcp.closed              the transport was closed locally
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "mcp/protocol/jsonrpc.h"
#include "mcp/protocol/protocol.h"  // RequestHeaders

namespace udon::mcp {

// The state of an HTTP server-notification stream (legacy era).
enum class NotificationStream {
  kNone,         // the transport has no such stream (stdio, modern era), or none was asked for
  kPending,      // asked for; no answer yet
  kEstablished,  // the server answered with an event stream
  kDeclined,     // the server answered without one (405, 404, another status or type)
  kFailed,       // the request failed (connection refused, reset)
};
const char* NotificationStreamName(NotificationStream state);

// Callbacks a transport invokes, possibly from several of its own threads at once; the
// receiver must be thread-safe. on_message gets every valid message in arrival order per
// stream. on_request_failed fails one request the transport could not complete (HTTP).
// on_closed is called at most once, when the connection is gone for good.
struct TransportCallbacks {
  std::function<void(Message)> on_message;
  std::function<void(const json::Value& id, Error)> on_request_failed;
  std::function<void(Error)> on_closed;
  // Asked before each received frame is parsed: true reads a tools/list result lean
  // (Message::lean_tools). Every transport parses with ParseFrame(frame, limit, callbacks)
  // so that a RequestToolList answer is always read lean. Unset: every frame is read whole.
  std::function<bool()> lean_tool_lists;
};

class Transport {
 public:
  virtual ~Transport() = default;

  // Connects (spawns, opens) and starts delivering to callbacks.
  virtual Status Start(TransportCallbacks callbacks) = 0;
  // Sends one message. Requests are answered through on_message.
  virtual Status Send(const Message& message) = 0;
  // Sends a request with extra HTTP headers; transports without headers ignore them.
  virtual Status SendRequest(const Message& request, const RequestHeaders& headers) {
    (void)headers;
    return Send(request);
  }
  // Sends a request its caller is about to wait for, until `deadline`. HTTP runs the whole
  // exchange on the calling thread and returns once the answer was delivered (on_message or
  // on_request_failed), the deadline passed or the transfer was aborted (Abandon, Close,
  // the connection failing): no hand-off to a worker and back. Others send as SendRequest.
  virtual Status ExchangeNow(const Message& request, const RequestHeaders& headers,
                             std::chrono::steady_clock::time_point deadline) {
    (void)deadline;
    return SendRequest(request, headers);
  }
  // The handshake completed at this protocol version (HTTP adds the version header to
  // every later request and may open its server-notification stream).
  virtual void OnInitialized(const std::string& /*protocol_version*/) {}
  // Whether the server's messages arrive in the order it sent them, on one channel (stdio,
  // in-process): then a request's response comes after everything the server sent before
  // answering it, which makes a ping round trip a barrier.
  virtual bool ordered() const { return false; }
  // Streamable HTTP, where the stdio-only revision (2024-11-05) is neither offered nor accepted.
  virtual bool streamable_http() const { return false; }
  // HTTP: waits until the GET stream for server notifications opened after initialization
  // is established or was declined. Other transports have none.
  virtual NotificationStream AwaitNotificationStream(std::chrono::milliseconds /*timeout*/) {
    return NotificationStream::kNone;
  }
  // The engine gave up waiting for this request (timeout): stop any transfer for it.
  virtual void Abandon(const json::Value& /*id*/) {}
  // Shuts down and releases everything (processes reaped, threads joined). Idempotent.
  virtual void Close() = 0;
};

}  // namespace udon::mcp

namespace udon::mcp {

// Parses one received frame under the size limit, mapping the parser's codes to
// mcp.message_too_large / mcp.malformed_message (details.cause keeps the rpc.* code).
// `memo` (optional): the reader's, see ParseMessage.
Result<Message> ParseFrame(std::string_view frame, std::size_t max_message_bytes, bool lean_tool_list = false,
                           json::ElementsMemo* memo = nullptr);
// ParseFrame as the callbacks ask (lean_tool_lists).
Result<Message> ParseFrame(std::string_view frame, std::size_t max_message_bytes, const TransportCallbacks& callbacks,
                           json::ElementsMemo* memo = nullptr);

}  // namespace udon::mcp
