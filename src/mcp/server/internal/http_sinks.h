// Private to the Streamable HTTP server's sources: where a session's or a request's
// messages go (the legacy session's GET stream, a POST's SSE stream, JSON response mode,
// a modern request's channel to its HTTP response).
#ifndef UDON_MCP_SERVER_INTERNAL_HTTP_SINKS_H_
#define UDON_MCP_SERVER_INTERNAL_HTTP_SINKS_H_

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mcp/protocol/jsonrpc.h"
#include "mcp/protocol/sse.h"
#include "mcp/server/kept_connections.h"
#include "mcp/server/server.h"

namespace udon::mcp {

// The per-session stream of unsolicited messages: queued until a GET stream drains them.
class SessionStream : public MessageSink {
 public:
  explicit SessionStream(std::size_t max_queued) : max_queued_(max_queued) {}

  void Send(const Message& message) override { SendRaw(SerializeMessage(message)); }
  void SendRaw(const std::string& frame) override {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      if (queue_.size() >= max_queued_) queue_.pop_front();
      queue_.push_back(frame);
    }
    changed_.notify_all();
  }
  void Close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    changed_.notify_all();
  }
  // Opens the one GET stream: its generation, 0 when one is open already.
  std::uint64_t TryOpen() {
    std::lock_guard lock(mutex_);
    if (open_ || closed_) return 0;
    open_ = true;
    gone_ = false;
    return ++generation_;
  }
  void Release() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }
  // The client of GET stream `generation` left: its wait ends (a later stream is not hit).
  void Depart(std::uint64_t generation) {
    {
      std::lock_guard lock(mutex_);
      if (generation != generation_) return;
      gone_ = true;
    }
    changed_.notify_all();
  }
  // Waits for queued frames; empty when the wait timed out, the stream closed (`closed`) or
  // its client left (`gone`; the frames stay queued for the next GET stream).
  std::deque<std::string> Take(std::chrono::milliseconds wait, bool& closed, bool& gone) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, wait, [this] { return closed_ || gone_ || !queue_.empty(); });
    closed = closed_;
    gone = gone_;
    std::deque<std::string> out;
    if (!gone_) out.swap(queue_);
    return out;
  }

 private:
  const std::size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;
  bool open_ = false;
  bool closed_ = false;
  bool gone_ = false;  // the open stream's client left
  std::uint64_t generation_ = 0;
};

struct HttpSession {
  std::shared_ptr<SessionStream> stream;
  std::unique_ptr<ServerSession> core;
  std::atomic<std::uint64_t> next_stream{1};
  // Requests in flight, an open GET stream included: a busy session is never expired or
  // evicted. Raised under the session table's lock, so a session found there stays.
  std::atomic<int> busy{0};
  // When a request last began or ended (steady clock, nanoseconds): idle time and LRU order.
  std::atomic<std::int64_t> last_used{0};
  std::string subject;  // the authenticated caller that opened it (authenticate hook), else empty
};

// A POST response stream: events written straight to the connection while the request is
// handled. Detached when the response ends; later writes are dropped.
class PostStream : public MessageSink {
 public:
  PostStream(httplib::DataSink* sink, std::string id_prefix)
      : sink_(sink), id_prefix_(std::move(id_prefix)) {}
  // The answer is the stream's last message: it, and the stream's end, go out with the
  // response in one send (ConnectionStream), when sent from the thread writing the response.
  void Send(const Message& message) override {
    if (message.IsResponse() && connection_ != nullptr && ServingStream() == connection_) {
      connection_->HoldUntilResponseEnds();
    }
    SendRaw(SerializeMessage(message));
  }
  void SendRaw(const std::string& frame) override {
    std::lock_guard lock(mutex_);
    if (sink_ == nullptr) return;
    // The priming event goes out in the same write as the first message: one chunk (one
    // segment, one wake-up of the client) for the common answer of one message.
    std::string event = std::move(priming_);
    priming_.clear();
    event += FormatSseEvent(frame, NextId(), "message");
    if (!sink_->write(event.data(), event.size())) sink_ = nullptr;
  }
  // The priming event (an id, empty data and retry:): first on the stream, with the first
  // message or, when none comes, at Detach.
  void Prime(long retry_ms) {
    std::lock_guard lock(mutex_);
    priming_ = FormatSseEvent("", NextId(), {}, retry_ms);
  }
  void Detach() {
    std::lock_guard lock(mutex_);
    if (sink_ != nullptr && !priming_.empty()) sink_->write(priming_.data(), priming_.size());
    sink_ = nullptr;
  }

 private:
  std::string NextId() { return id_prefix_ + std::to_string(next_++); }
  std::mutex mutex_;
  httplib::DataSink* sink_;
  ConnectionStream* const connection_ = ServingStream();  // the response's, if on a kept connection
  std::string id_prefix_;
  std::string priming_;
  std::uint64_t next_ = 0;
};

// JSON response mode: the response becomes the body; anything else related to the request
// goes to the session's GET stream.
class JsonCollector : public MessageSink {
 public:
  explicit JsonCollector(std::shared_ptr<MessageSink> standalone)
      : standalone_(std::move(standalone)) {}
  void Send(const Message& message) override {
    if (!message.IsResponse()) {
      standalone_->Send(message);
      return;
    }
    std::lock_guard lock(mutex_);
    body_ = SerializeMessage(message);
  }
  void SendRaw(const std::string& frame) override { standalone_->SendRaw(frame); }
  std::string body() {
    std::lock_guard lock(mutex_);
    return body_;
  }

 private:
  std::shared_ptr<MessageSink> standalone_;
  std::mutex mutex_;
  std::string body_;
};

// Nothing unsolicited exists in the modern era: a per-request session's standalone stream.
class NullSink : public MessageSink {
 public:
  void Send(const Message&) override {}
  void SendRaw(const std::string&) override {}
};

// A modern request's messages, from the thread that handles it to the HTTP response: held
// until the first one shows whether the answer is a single response (then its status code
// can still follow the error) or a stream (progress, logs, a listen stream).
class RequestChannel : public MessageSink {
 public:
  struct Frame {
    std::string data;
    bool response = false;
    bool keep_alive = false;
    std::optional<int> error_code;  // a JSON-RPC error response's code, for the HTTP status
  };

  // The error code is taken from the message, so a large answer is never parsed back.
  void Send(const Message& message) override {
    std::optional<int> error_code;
    if (message.kind == MessageKind::kError && message.error.is_object()) {
      auto code = message.error.find("code");
      if (code != message.error.end() && code->is_number_integer()) error_code = code->get<int>();
    }
    Push({SerializeMessage(message), message.IsResponse(), false, error_code});
  }
  void SendRaw(const std::string& frame) override { Push({frame, false, false, std::nullopt}); }
  void KeepAlive() override { Push({{}, false, true, std::nullopt}); }
  bool Open() const override {
    std::lock_guard lock(mutex_);
    return !closed_;
  }
  // The handling thread is done.
  void Finish() {
    {
      std::lock_guard lock(mutex_);
      finished_ = true;
    }
    changed_.notify_all();
  }
  // The client is gone: later messages are dropped.
  void Close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      frames_.clear();
    }
    changed_.notify_all();
  }
  // Waits until a frame other than the response is queued (true: stream it) or the handling
  // thread finished or the client left (false: answer with what is queued).
  bool WaitForStream() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return finished_ || closed_ || HasStreamFrame(); });
    return HasStreamFrame();
  }
  // `finished`: nothing more will come (the handling thread is done or the client left).
  std::vector<Frame> Take(std::chrono::milliseconds wait, bool& finished) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, wait, [this] { return finished_ || closed_ || !frames_.empty(); });
    finished = finished_ || closed_;
    std::vector<Frame> out(std::make_move_iterator(frames_.begin()),
                           std::make_move_iterator(frames_.end()));
    frames_.clear();
    return out;
  }

 private:
  void Push(Frame frame) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      frames_.push_back(std::move(frame));
    }
    changed_.notify_all();
  }
  bool HasStreamFrame() const {
    return std::any_of(frames_.begin(), frames_.end(), [](const Frame& f) { return !f.response; });
  }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Frame> frames_;
  bool finished_ = false;
  bool closed_ = false;
};

}  // namespace udon::mcp

#endif  // UDON_MCP_SERVER_INTERNAL_HTTP_SINKS_H_
