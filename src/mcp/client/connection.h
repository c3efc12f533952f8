// The JSON-RPC engine of the client: request ids, response correlation, per-request
// timeouts (with notifications/cancelled), answers to server requests, and an event log
// with monotonic sequence numbers over one Transport.
//
// Error codes (component-internal, besides the transport's, see transport.h):
//   mcp.timeout        no response within the timeout; notifications/cancelled was sent
//                      (never for initialize) and the transport told to abandon it
//   mcp.disconnected   the connection ended while the request was pending, or before it
//                      was sent; details.cause holds the transport's code
//   mcp.closed         the connection was closed locally
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "mcp/protocol/jsonrpc.h"
#include "mcp/client/transport.h"

namespace udon::mcp {

enum class EventKind {
  kNotification,      // a server notification: method, params
  kServerRequest,     // a server request other than ping, refused with -32601: method
  kPing,              // a server ping, answered {}
  kIgnoredResponse,   // a response with an unknown or expired id (late), ignored: id
  kRequestFailed,     // the transport failed one of our requests: error
  kDisconnected,      // the connection ended: error
  kStreamEnded,       // a long-lived request (subscriptions/listen) ended: id; params the
                      // final result or error object, or error when the stream broke off
};

struct Event {
  std::uint64_t sequence = 0;  // 1, 2, 3, ... in arrival order on this connection
  EventKind kind = EventKind::kNotification;
  std::string method;          // kNotification, kServerRequest, kPing
  json::Value id;              // kServerRequest, kPing, kIgnoredResponse
  json::Value params;          // kNotification
  std::optional<Error> error;  // kRequestFailed, kDisconnected
};

std::string_view EventKindName(EventKind kind);

struct ConnectionOptions {
  std::chrono::milliseconds default_timeout{60'000};
  // The oldest events are dropped beyond this many; first_retained_sequence() tells.
  std::size_t max_events = 100'000;
};

// A response to one of our requests, and where it fell in the event sequence: events with
// sequence in (sequence_at_send, sequence_at_response] arrived while it was in flight.
struct Response {
  Message message;  // kResult or kError
  std::uint64_t sequence_at_send = 0;
  std::uint64_t sequence_at_response = 0;
};

class Connection {
 public:
  Connection(std::unique_ptr<Transport> transport, ConnectionOptions options = {});
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  Status Start();

  // Sends a request and waits for its response (result or JSON-RPC error). A timeout of
  // zero uses the default. Fails with mcp.timeout / mcp.disconnected / mcp.closed /
  // mcp.send_failed; details.sequenceAtSend says where the request started.
  Result<Response> Request(const std::string& method, json::Value params = nullptr,
                           std::chrono::milliseconds timeout = std::chrono::milliseconds{0},
                           bool cancellable = true, const RequestHeaders& headers = {});
  // Request("tools/list", ...) whose answer keeps its Tool objects as bytes
  // (Message::lean_tools; result["tools"] an empty stand-in) for a caller that reads one
  // of them. Every other message stays whole, and so does this one if its result has no
  // tools array.
  Result<Response> RequestToolList(json::Value params, std::chrono::milliseconds timeout);
  // Sends a long-lived request whose answer is a stream of notifications (the modern
  // era's subscriptions/listen) and returns its id without waiting. Its end, graceful or
  // not, is recorded as a kStreamEnded event. Fails like Request when it cannot be sent.
  Result<std::int64_t> OpenStream(const std::string& method, json::Value params);
  // Ends a stream opened here: notifications/cancelled (stdio), transfer abandoned (HTTP).
  void CancelStream(std::int64_t id);
  Status Notify(const std::string& method, json::Value params = nullptr);

  Transport& transport() { return *transport_; }

  // The sequence number of the latest event (0 before any).
  std::uint64_t LastSequence() const;
  std::uint64_t FirstRetainedSequence() const;
  // Events with sequence > after, oldest first.
  std::vector<Event> EventsSince(std::uint64_t after) const;
  // Waits until an event with sequence > after exists or the timeout passes; true if one does.
  bool WaitForEventAfter(std::uint64_t after, std::chrono::milliseconds timeout) const;
  std::size_t ignored_responses() const;
  // Times a request's waiter woke and found its request still unsettled. Each waiter is
  // woken by its own answer only, so this stays near zero however many requests wait.
  std::size_t stray_wakeups() const;
  bool connected() const;

  // Observers hear of every event as it is logged, in order, on the thread that received
  // it and outside the connection's lock (they may call back into the connection). One may
  // still be running for a moment after RemoveEventObserver returns: capture shared state,
  // never a reference that may dangle.
  using EventObserver = std::function<void(const Event&)>;
  std::uint64_t AddEventObserver(EventObserver observer);
  void RemoveEventObserver(std::uint64_t id);

  // Closes the transport; pending requests fail with mcp.closed. Idempotent.
  void Close();

 private:
  struct Pending {
    bool lean = false;  // RequestToolList
    std::optional<Message> response;
    std::optional<Error> failure;
    std::uint64_t sequence_at_response = 0;
    // Its own: an answer wakes its one waiter, not every pending request's (issue 41).
    std::condition_variable settled;
  };

  Result<Response> Exchange(const std::string& method, json::Value params, std::chrono::milliseconds timeout,
                            bool cancellable, const RequestHeaders& headers, bool lean);
  // A fresh request id, or mcp.disconnected once the connection is closed.
  Result<std::int64_t> NextIdLocked();
  void OnMessage(Message message);
  // Logs a received message (or settles the request it answers: `answered`, whose waiter
  // is then to be woken); the reply it needs, if any.
  std::optional<Message> Record(Message message, std::shared_ptr<Pending>& answered);
  void OnRequestFailed(const json::Value& id, Error error);
  void OnClosed(Error error);
  void AppendEventLocked(Event event);
  // Hands the events logged since the last call to the observers (never under the lock).
  void NotifyObservers();
  void FailAllLocked(const Error& error);

  std::unique_ptr<Transport> transport_;
  ConnectionOptions options_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;  // an event was logged
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, std::shared_ptr<Pending>> pending_;
  std::atomic<int> lean_pending_{0};  // pending RequestToolList calls: frames are read lean
  std::set<std::int64_t> streams_;  // open long-lived requests
  std::deque<Event> events_;
  std::map<std::uint64_t, std::shared_ptr<const EventObserver>> observers_;
  std::uint64_t next_observer_ = 1;
  std::vector<Event> unobserved_;  // logged, not yet handed to the observers
  std::uint64_t last_sequence_ = 0;
  std::size_t ignored_responses_ = 0;
  std::size_t stray_wakeups_ = 0;
  std::optional<Error> closed_;
  bool started_ = false;
};

}  // namespace udon::mcp
