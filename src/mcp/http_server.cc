#include "mcp/http_server.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <string_view>
#include <utility>

#include "mcp/sse.h"

namespace udon::mcp {
namespace {

constexpr char kSessionHeader[] = "Mcp-Session-Id";
constexpr char kVersionHeader[] = "MCP-Protocol-Version";
constexpr auto kKeepAliveInterval = std::chrono::seconds(5);

bool IsLoopbackName(std::string_view host) {
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]";
}

// "name[:port]" or "[v6][:port]" -> the name part, lowercased; empty if malformed.
std::string HostName(std::string_view host_port) {
  std::string_view name = host_port;
  if (!name.empty() && name.front() == '[') {
    const auto close = name.find(']');
    if (close == std::string_view::npos) return {};
    std::string_view rest = name.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return {};
    name = name.substr(0, close + 1);
  } else if (const auto colon = name.find(':'); colon != std::string_view::npos) {
    name = name.substr(0, colon);
  }
  std::string lowered(name);
  for (char& c : lowered) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lowered;
}

std::string NewSessionId() {
  static std::mutex mutex;
  static std::random_device device;
  static std::mt19937_64 generator(device());
  std::lock_guard lock(mutex);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 2; ++i) {
    std::uint64_t bits = generator();
    for (int k = 0; k < 16; ++k, bits >>= 4) id.push_back(kHex[bits & 0xf]);
  }
  return id;
}

bool HeaderHas(const httplib::Request& request, const char* header, std::string_view token) {
  return request.get_header_value(header).find(token) != std::string::npos;
}

void SetJsonRpcError(httplib::Response& response, int status, int code, const char* message) {
  response.status = status;
  response.set_content(SerializeMessage(MakeError(nullptr, code, message)), "application/json");
}

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
  bool TryOpen() {
    std::lock_guard lock(mutex_);
    if (open_ || closed_) return false;
    open_ = true;
    return true;
  }
  void Release() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }
  // Waits for queued frames; empty when the wait timed out or the stream closed.
  std::deque<std::string> Take(std::chrono::milliseconds wait, bool& closed) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, wait, [this] { return closed_ || !queue_.empty(); });
    closed = closed_;
    std::deque<std::string> out;
    out.swap(queue_);
    return out;
  }

 private:
  const std::size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;
  bool open_ = false;
  bool closed_ = false;
};

struct HttpSession {
  std::shared_ptr<SessionStream> stream;
  std::unique_ptr<ServerSession> core;
  std::atomic<std::uint64_t> next_stream{1};
};

// A POST response stream: events written straight to the connection while the request is
// handled. Detached when the response ends; later writes are dropped.
class PostStream : public MessageSink {
 public:
  PostStream(httplib::DataSink* sink, std::string id_prefix)
      : sink_(sink), id_prefix_(std::move(id_prefix)) {}
  void Send(const Message& message) override { SendRaw(SerializeMessage(message)); }
  void SendRaw(const std::string& frame) override {
    std::lock_guard lock(mutex_);
    if (sink_ == nullptr) return;
    const std::string event = FormatSseEvent(frame, NextId(), "message");
    if (!sink_->write(event.data(), event.size())) sink_ = nullptr;
  }
  void Prime(long retry_ms) {
    std::lock_guard lock(mutex_);
    const std::string event = FormatSseEvent("", NextId(), {}, retry_ms);
    if (!sink_->write(event.data(), event.size())) sink_ = nullptr;
  }
  void Detach() {
    std::lock_guard lock(mutex_);
    sink_ = nullptr;
  }

 private:
  std::string NextId() { return id_prefix_ + std::to_string(next_++); }
  std::mutex mutex_;
  httplib::DataSink* sink_;
  std::string id_prefix_;
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

}  // namespace

bool IsAllowedOrigin(const std::string& origin) {
  if (origin.empty()) return true;
  std::string_view rest = origin;
  if (rest.substr(0, 7) == "http://") {
    rest.remove_prefix(7);
  } else if (rest.substr(0, 8) == "https://") {
    rest.remove_prefix(8);
  } else {
    return false;
  }
  if (rest.find('/') != std::string_view::npos) return false;
  return IsLoopbackName(HostName(rest));
}

bool IsAllowedHost(const std::string& host) {
  return host.empty() || IsLoopbackName(HostName(host));
}

struct HttpServer::Impl {
  Impl(Server& s, HttpServerOptions o) : server(s), options(std::move(o)) {}

  void Install();
  bool Admit(const httplib::Request& request, httplib::Response& response);
  std::shared_ptr<HttpSession> FindSession(const httplib::Request& request,
                                           httplib::Response& response);
  void Post(const httplib::Request& request, httplib::Response& response);
  void Get(const httplib::Request& request, httplib::Response& response);
  void Delete(const httplib::Request& request, httplib::Response& response);
  void AnswerWithSse(std::shared_ptr<HttpSession> session, Message message,
                     httplib::Response& response);

  Server& server;
  HttpServerOptions options;
  httplib::Server http;
  std::atomic<bool> stopping{false};
  std::mutex sessions_mutex;
  std::map<std::string, std::shared_ptr<HttpSession>> sessions;
};

bool HttpServer::Impl::Admit(const httplib::Request& request, httplib::Response& response) {
  if (!IsAllowedOrigin(request.get_header_value("Origin")) ||
      !IsAllowedHost(request.get_header_value("Host"))) {
    SetJsonRpcError(response, 403, kInvalidRequest, "forbidden origin or host");
    return false;
  }
  if (request.has_header(kVersionHeader) &&
      !IsSupportedProtocolVersion(request.get_header_value(kVersionHeader))) {
    SetJsonRpcError(response, 400, kInvalidRequest, "unsupported protocol version");
    return false;
  }
  return true;
}

std::shared_ptr<HttpSession> HttpServer::Impl::FindSession(const httplib::Request& request,
                                                           httplib::Response& response) {
  if (!request.has_header(kSessionHeader)) {
    SetJsonRpcError(response, 400, kInvalidRequest, "missing session id");
    return nullptr;
  }
  std::lock_guard lock(sessions_mutex);
  auto it = sessions.find(request.get_header_value(kSessionHeader));
  if (it == sessions.end()) {
    SetJsonRpcError(response, 404, kInvalidRequest, "session not found");
    return nullptr;
  }
  return it->second;
}

void HttpServer::Impl::Post(const httplib::Request& request, httplib::Response& response) {
  if (!Admit(request, response)) return;
  if (!HeaderHas(request, "Content-Type", "application/json")) {
    SetJsonRpcError(response, 415, kInvalidRequest, "Content-Type must be application/json");
    return;
  }
  if (!HeaderHas(request, "Accept", "application/json") ||
      !HeaderHas(request, "Accept", "text/event-stream")) {
    SetJsonRpcError(response, 406, kInvalidRequest,
                    "Accept must list application/json and text/event-stream");
    return;
  }
  if (request.body.size() > options.max_body_bytes) {
    SetJsonRpcError(response, 413, kInvalidRequest, "message exceeds the size limit");
    return;
  }
  MessageLimits limits;
  limits.max_bytes = options.max_body_bytes;
  auto parsed = ParseMessage(request.body, limits);
  if (!parsed.ok()) {
    const bool malformed = parsed.error().code == "rpc.malformed";
    SetJsonRpcError(response, 400, malformed ? kParseError : kInvalidRequest,
                    malformed ? "parse error" : "invalid request");
    return;
  }
  Message message = std::move(*parsed);
  std::shared_ptr<HttpSession> session;
  if (message.kind == MessageKind::kRequest && message.method == "initialize") {
    if (request.has_header(kSessionHeader)) {
      SetJsonRpcError(response, 400, kInvalidRequest, "initialize must not carry a session id");
      return;
    }
    session = std::make_shared<HttpSession>();
    session->stream = std::make_shared<SessionStream>(options.max_queued_messages);
    session->core = server.NewSession(session->stream);
    const std::string id = NewSessionId();
    {
      std::lock_guard lock(sessions_mutex);
      if (sessions.size() >= options.max_sessions) {
        SetJsonRpcError(response, 503, kInvalidRequest, "too many sessions");
        return;
      }
      sessions[id] = session;
    }
    response.set_header(kSessionHeader, id);
  } else {
    session = FindSession(request, response);
    if (session == nullptr) return;
  }
  if (message.kind != MessageKind::kRequest) {
    session->core->Handle(std::move(message), session->stream);
    response.status = 202;
    return;
  }
  if (options.json_responses) {
    auto collector = std::make_shared<JsonCollector>(session->stream);
    session->core->Handle(std::move(message), collector);
    const std::string body = collector->body();
    response.status = body.empty() ? 202 : 200;  // empty: the request was cancelled
    if (!body.empty()) response.set_content(body, "application/json");
    return;
  }
  AnswerWithSse(std::move(session), std::move(message), response);
}

void HttpServer::Impl::AnswerWithSse(std::shared_ptr<HttpSession> session, Message message,
                                     httplib::Response& response) {
  response.set_header("Cache-Control", "no-cache");
  auto pending = std::make_shared<Message>(std::move(message));
  const long retry_ms = options.retry_ms;
  response.set_chunked_content_provider(
      "text/event-stream",
      [session, pending, retry_ms](std::size_t, httplib::DataSink& sink) {
        const std::string prefix = std::to_string(session->next_stream++) + "-";
        auto stream = std::make_shared<PostStream>(&sink, prefix);
        stream->Prime(retry_ms);
        session->core->Handle(std::move(*pending), stream);
        stream->Detach();
        sink.done();
        return true;
      });
}

void HttpServer::Impl::Get(const httplib::Request& request, httplib::Response& response) {
  if (!Admit(request, response)) return;
  if (!HeaderHas(request, "Accept", "text/event-stream")) {
    SetJsonRpcError(response, 406, kInvalidRequest, "Accept must list text/event-stream");
    return;
  }
  auto session = FindSession(request, response);
  if (session == nullptr) return;
  if (!session->stream->TryOpen()) {
    SetJsonRpcError(response, 409, kInvalidRequest, "a GET stream is already open");
    return;
  }
  response.set_header("Cache-Control", "no-cache");
  const long retry_ms = options.retry_ms;
  response.set_chunked_content_provider(
      "text/event-stream",
      [this, session, retry_ms](std::size_t, httplib::DataSink& sink) {
        std::uint64_t next = 0;
        auto write = [&](const std::string& event) { return sink.write(event.data(), event.size()); };
        if (!write(FormatSseEvent("", "0-" + std::to_string(next++), {}, retry_ms))) return false;
        auto last_write = std::chrono::steady_clock::now();
        while (!stopping.load()) {
          bool closed = false;
          auto frames = session->stream->Take(std::chrono::milliseconds(200), closed);
          for (const auto& frame : frames) {
            if (!write(FormatSseEvent(frame, "0-" + std::to_string(next++), "message"))) {
              return false;
            }
            last_write = std::chrono::steady_clock::now();
          }
          if (closed) break;
          if (std::chrono::steady_clock::now() - last_write > kKeepAliveInterval) {
            if (!write(": keep-alive\n\n")) return false;
            last_write = std::chrono::steady_clock::now();
          }
        }
        sink.done();
        return true;
      },
      [session](bool) { session->stream->Release(); });
}

void HttpServer::Impl::Delete(const httplib::Request& request, httplib::Response& response) {
  if (!Admit(request, response)) return;
  auto session = FindSession(request, response);
  if (session == nullptr) return;
  {
    std::lock_guard lock(sessions_mutex);
    sessions.erase(request.get_header_value(kSessionHeader));
  }
  session->stream->Close();
  response.status = 200;
}

void HttpServer::Impl::Install() {
  const int threads = options.threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  http.set_payload_max_length(options.max_body_bytes);
  // Responses go out in several writes (headers, body, SSE events): without TCP_NODELAY,
  // Nagle's algorithm holds the later ones for the client's delayed ACK, ~40 ms a request.
  http.set_tcp_nodelay(true);
  http.set_keep_alive_max_count(1000);
  http.set_keep_alive_timeout(2);  // idle connections must not hold up a shutdown for long
  http.set_exception_handler([](const httplib::Request&, httplib::Response& response,
                                std::exception_ptr) {
    SetJsonRpcError(response, 500, kInternalError, "internal error");
  });
  http.Post(options.path, [this](const httplib::Request& q, httplib::Response& r) { Post(q, r); });
  http.Get(options.path, [this](const httplib::Request& q, httplib::Response& r) { Get(q, r); });
  http.Delete(options.path,
              [this](const httplib::Request& q, httplib::Response& r) { Delete(q, r); });
}

HttpServer::HttpServer(Server& server, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(server, std::move(options))) {
  impl_->Install();
}

HttpServer::~HttpServer() = default;

Result<int> HttpServer::Bind() {
  int port = impl_->options.port;
  if (port == 0) {
    port = impl_->http.bind_to_any_port(impl_->options.host);
  } else if (!impl_->http.bind_to_port(impl_->options.host, port)) {
    port = -1;
  }
  if (port <= 0) return udon::MakeError("http.bind_failed", "cannot bind the HTTP listener");
  return port;
}

void HttpServer::Serve() { impl_->http.listen_after_bind(); }

void HttpServer::Stop() {
  impl_->stopping = true;
  {
    std::lock_guard lock(impl_->sessions_mutex);
    for (auto& [id, session] : impl_->sessions) session->stream->Close();
  }
  impl_->http.stop();
}

}  // namespace udon::mcp
