#include "mcp/client/connection.h"

#include <limits>
#include <utility>

namespace udon::mcp {
namespace {

std::optional<std::int64_t> OurId(const json::Value& id) {
  if (id.is_number_unsigned()) {
    const auto value = id.get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(value);
  }
  if (id.is_number_integer()) return id.get<std::int64_t>();
  return std::nullopt;
}

Error WithSequence(Error error, std::uint64_t sequence_at_send) {
  error.details["sequenceAtSend"] = sequence_at_send;
  return error;
}

}  // namespace

std::string_view EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kNotification: return "notification";
    case EventKind::kServerRequest: return "server_request";
    case EventKind::kPing: return "ping";
    case EventKind::kIgnoredResponse: return "ignored_response";
    case EventKind::kRequestFailed: return "request_failed";
    case EventKind::kDisconnected: return "disconnected";
    case EventKind::kStreamEnded: return "stream_ended";
  }
  return "unknown";
}

Connection::Connection(std::unique_ptr<Transport> transport, ConnectionOptions options)
    : transport_(std::move(transport)), options_(options) {}

Connection::~Connection() { Close(); }

Status Connection::Start() {
  {
    std::lock_guard lock(mutex_);
    if (started_) return udon::MakeError("mcp.closed", "connection already started");
    started_ = true;
  }
  TransportCallbacks callbacks;
  callbacks.on_message = [this](Message message) { OnMessage(std::move(message)); };
  callbacks.on_request_failed = [this](const json::Value& id, Error error) {
    OnRequestFailed(id, std::move(error));
  };
  callbacks.on_closed = [this](Error error) { OnClosed(std::move(error)); };
  callbacks.lean_tool_lists = [this] { return lean_pending_.load(std::memory_order_acquire) > 0; };
  Status started = transport_->Start(std::move(callbacks));
  if (!started.ok()) {
    std::lock_guard lock(mutex_);
    if (!closed_) closed_ = started.error();
  }
  return started;
}

Result<std::int64_t> Connection::NextIdLocked() {
  if (closed_) {
    Error error = udon::MakeError("mcp.disconnected", "the connection is not open");
    error.details["cause"] = closed_->code;
    return error;
  }
  return next_id_++;
}

Result<Response> Connection::Request(const std::string& method, json::Value params,
                                     std::chrono::milliseconds timeout, bool cancellable,
                                     const RequestHeaders& headers) {
  return Exchange(method, std::move(params), timeout, cancellable, headers, /*lean=*/false);
}

Result<Response> Connection::RequestToolList(json::Value params, std::chrono::milliseconds timeout) {
  return Exchange("tools/list", std::move(params), timeout, /*cancellable=*/true, {}, /*lean=*/true);
}

Result<Response> Connection::Exchange(const std::string& method, json::Value params,
                                      std::chrono::milliseconds timeout, bool cancellable,
                                      const RequestHeaders& headers, bool lean) {
  if (timeout.count() <= 0) timeout = options_.default_timeout;
  auto pending = std::make_shared<Pending>();
  pending->lean = lean;
  std::int64_t id = 0;
  std::uint64_t sequence_at_send = 0;
  {
    std::lock_guard lock(mutex_);
    UDON_ASSIGN_OR_RETURN(id, NextIdLocked());
    pending_[id] = pending;
    sequence_at_send = last_sequence_;
  }
  // From before the request leaves until it is settled, frames are read lean; a whole
  // message that needs its tools is completed in Record.
  if (lean) lean_pending_.fetch_add(1, std::memory_order_acq_rel);
  struct LeanScope {
    std::atomic<int>* count;
    ~LeanScope() {
      if (count != nullptr) count->fetch_sub(1, std::memory_order_acq_rel);
    }
  } lean_scope{lean ? &lean_pending_ : nullptr};
  // HTTP runs the exchange here, on this thread, since it waits anyway (transport.h).
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Status sent = transport_->ExchangeNow(MakeRequest(id, method, std::move(params)), headers, deadline);
  if (!sent.ok()) {
    std::lock_guard lock(mutex_);
    pending_.erase(id);
    return WithSequence(std::move(sent).error(), sequence_at_send);
  }

  std::unique_lock lock(mutex_);
  bool first_check = true;
  const bool done = pending->settled.wait_until(lock, deadline, [&] {
    const bool settled = pending->response.has_value() || pending->failure.has_value();
    if (!settled && !first_check) ++stray_wakeups_;
    first_check = false;
    return settled;
  });
  pending_.erase(id);
  if (pending->response) {
    return Response{std::move(*pending->response), sequence_at_send,
                    pending->sequence_at_response};
  }
  if (pending->failure) return WithSequence(std::move(*pending->failure), sequence_at_send);
  (void)done;
  lock.unlock();
  if (cancellable) {
    // Best effort: the request may already be lost with the connection.
    (void)transport_->Send(MakeNotification(
        "notifications/cancelled", json::Value{{"requestId", id}, {"reason", "timeout"}}));
  }
  transport_->Abandon(json::Value(id));
  return WithSequence(udon::MakeError("mcp.timeout", "no response within the request timeout"),
                      sequence_at_send);
}

Result<std::int64_t> Connection::OpenStream(const std::string& method, json::Value params) {
  std::int64_t id = 0;
  {
    std::lock_guard lock(mutex_);
    UDON_ASSIGN_OR_RETURN(id, NextIdLocked());
    streams_.insert(id);
  }
  Status sent = transport_->Send(MakeRequest(id, method, std::move(params)));
  if (!sent.ok()) {
    std::lock_guard lock(mutex_);
    streams_.erase(id);
    return std::move(sent).error();
  }
  return id;
}

void Connection::CancelStream(std::int64_t id) {
  {
    std::lock_guard lock(mutex_);
    if (streams_.erase(id) == 0 || closed_) return;
  }
  (void)transport_->Send(MakeNotification("notifications/cancelled",
                                          json::Value{{"requestId", id}, {"reason", "done"}}));
  transport_->Abandon(json::Value(id));
}

Status Connection::Notify(const std::string& method, json::Value params) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return udon::MakeError("mcp.disconnected", "the connection is not open");
  }
  return transport_->Send(MakeNotification(method, std::move(params)));
}

void Connection::OnMessage(Message message) {
  std::shared_ptr<Pending> answered;
  std::optional<Message> reply = Record(std::move(message), answered);
  // Outside the lock: the woken caller finds the mutex free instead of blocking on it again.
  if (answered) answered->settled.notify_one();
  NotifyObservers();
  if (reply) (void)transport_->Send(*reply);
}

std::optional<Message> Connection::Record(Message message, std::shared_ptr<Pending>& answered) {
  std::optional<Message> reply;
  {
    std::lock_guard lock(mutex_);
    if (message.IsResponse()) {
      auto id = OurId(message.id);
      // Read lean while a RequestToolList waited: only its own answer stays lean.
      if (message.lean_tools) {
        auto it = id ? pending_.find(*id) : pending_.end();
        if (it == pending_.end() || !it->second->lean) CompleteLeanResult(message);
      }
      if (id && streams_.erase(*id) > 0) {
        Event event;
        event.kind = EventKind::kStreamEnded;
        event.id = message.id;
        event.params = message.kind == MessageKind::kError ? std::move(message.error)
                                                           : std::move(message.result);
        AppendEventLocked(std::move(event));
        return std::nullopt;
      }
      auto it = id ? pending_.find(*id) : pending_.end();
      if (it == pending_.end() || it->second->response || it->second->failure) {
        ++ignored_responses_;
        Event event;
        event.kind = EventKind::kIgnoredResponse;
        event.id = message.id;
        AppendEventLocked(std::move(event));
        return std::nullopt;
      }
      it->second->sequence_at_response = last_sequence_;
      it->second->response = std::move(message);
      answered = it->second;
      return std::nullopt;
    }
    Event event;
    event.method = message.method;
    if (message.kind == MessageKind::kRequest) {
      event.id = message.id;
      if (message.method == "ping") {
        event.kind = EventKind::kPing;
        reply = MakeResult(message.id, json::Value::object());
      } else {
        // A tools-only client declares no capabilities: sampling, elicitation, roots and
        // anything else are refused, and the caller sees that it happened.
        event.kind = EventKind::kServerRequest;
        reply = MakeError(message.id, kMethodNotFound, "Method not found");
      }
    } else {
      event.kind = EventKind::kNotification;
      event.params = std::move(message.params);
    }
    AppendEventLocked(std::move(event));
  }
  return reply;
}

void Connection::OnRequestFailed(const json::Value& id, Error error) {
  {
    std::lock_guard lock(mutex_);
    auto our = OurId(id);
    Event event;
    event.kind = our && streams_.erase(*our) > 0 ? EventKind::kStreamEnded : EventKind::kRequestFailed;
    event.id = id;
    event.error = error;
    AppendEventLocked(std::move(event));
    auto it = our ? pending_.find(*our) : pending_.end();
    if (it != pending_.end() && !it->second->response && !it->second->failure) {
      it->second->failure = std::move(error);
      it->second->settled.notify_one();
    }
  }
  NotifyObservers();
}

void Connection::OnClosed(Error error) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = error;
    Event event;
    event.kind = EventKind::kDisconnected;
    event.error = error;
    AppendEventLocked(std::move(event));
    Error failure = udon::MakeError("mcp.disconnected", "the connection ended while waiting");
    failure.details["cause"] = error.code;
    FailAllLocked(failure);
  }
  NotifyObservers();
}

void Connection::FailAllLocked(const Error& error) {
  for (auto& [id, pending] : pending_) {
    if (!pending->response && !pending->failure) {
      pending->failure = error;
      pending->settled.notify_one();
    }
  }
}

void Connection::AppendEventLocked(Event event) {
  event.sequence = ++last_sequence_;
  if (!observers_.empty()) unobserved_.push_back(event);
  events_.push_back(std::move(event));
  while (events_.size() > options_.max_events) events_.pop_front();
  changed_.notify_all();
}

std::uint64_t Connection::AddEventObserver(EventObserver observer) {
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_observer_++;
  observers_.emplace(id, std::make_shared<const EventObserver>(std::move(observer)));
  return id;
}

void Connection::RemoveEventObserver(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  observers_.erase(id);
}

void Connection::NotifyObservers() {
  std::vector<Event> events;
  std::vector<std::shared_ptr<const EventObserver>> observers;
  {
    std::lock_guard lock(mutex_);
    if (unobserved_.empty()) return;
    events.swap(unobserved_);
    for (const auto& [id, observer] : observers_) observers.push_back(observer);
  }
  for (const Event& event : events) {
    for (const auto& observer : observers) (*observer)(event);
  }
}

std::uint64_t Connection::LastSequence() const {
  std::lock_guard lock(mutex_);
  return last_sequence_;
}

std::uint64_t Connection::FirstRetainedSequence() const {
  std::lock_guard lock(mutex_);
  return events_.empty() ? last_sequence_ + 1 : events_.front().sequence;
}

std::vector<Event> Connection::EventsSince(std::uint64_t after) const {
  std::lock_guard lock(mutex_);
  std::vector<Event> out;
  for (const Event& event : events_) {
    if (event.sequence > after) out.push_back(event);
  }
  return out;
}

bool Connection::WaitForEventAfter(std::uint64_t after, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return last_sequence_ > after; });
}

std::size_t Connection::ignored_responses() const {
  std::lock_guard lock(mutex_);
  return ignored_responses_;
}

std::size_t Connection::stray_wakeups() const {
  std::lock_guard lock(mutex_);
  return stray_wakeups_;
}

bool Connection::connected() const {
  std::lock_guard lock(mutex_);
  return started_ && !closed_;
}

void Connection::Close() {
  {
    std::lock_guard lock(mutex_);
    if (!closed_) {
      closed_ = udon::MakeError("mcp.closed", "the connection was closed locally");
      Error failure = udon::MakeError("mcp.closed", "the connection was closed locally");
      FailAllLocked(failure);
    }
  }
  // Outside the lock: the transport's threads may still be delivering into us.
  transport_->Close();
}

}  // namespace udon::mcp
