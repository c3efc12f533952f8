// The Streamable HTTP server (contract 7.17): routing of POST, GET and DELETE, the guards
// in front of them, and the server's lifetime. 2026-07-28 requests are served in
// http_modern.cc, legacy ones in http_legacy.cc, legacy sessions in http_sessions.cc.
#include "mcp/server/http_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "base/sha256.h"
#include "mcp/server/internal/http_impl.h"

namespace udon::mcp {
namespace {

// httplib's connection queue: a bounded pool whose full queue holds up the accept loop.
// The pool that runs connections, and the idle connections it resumes when a request comes.
class ConnectionQueue : public httplib::TaskQueue {
 public:
  ConnectionQueue(Listener& listener, std::size_t threads, std::size_t max_queued, std::size_t max_streams,
                  std::size_t max_idle)
      : listener_(listener),
        pool_(threads, max_queued, max_streams),
        idle_(listener.keep_alive_timeout(), max_idle, [this](int socket, std::size_t remaining) {
          pool_.Submit([this, socket, remaining] { listener_.ServeConnection(socket, remaining); });
        }) {
    listener_.idle = &idle_;
  }
  void enqueue(std::function<void()> fn) override { pool_.Submit(std::move(fn)); }
  void shutdown() override {
    listener_.idle = nullptr;
    idle_.Close();
    pool_.Shutdown();
  }

 private:
  Listener& listener_;
  WorkerPool pool_;
  IdleConnections idle_;  // after pool_: it submits to the pool from its first moment
};

// W3C Trace Context in HTTP headers reaches a tools/call as if its params._meta had carried
// it; a traceparent the body carries wins, with its own tracestate or none.
void CarryTraceHeaders(const httplib::Request& request, Message& message) {
  if (message.kind != MessageKind::kRequest || message.method != "tools/call" || !message.params.is_object() ||
      !request.has_header("traceparent")) {
    return;
  }
  json::Value& meta = message.params["_meta"];
  if (meta.is_null()) meta = json::Value::object();
  if (!meta.is_object() || meta.contains("traceparent")) return;
  meta["traceparent"] = request.get_header_value("traceparent");
  if (request.has_header("tracestate")) meta["tracestate"] = request.get_header_value("tracestate");
}

// A probe's answer: a fixed word, and the code that makes it unavailable.
void SetProbe(httplib::Response& response, const Status& status) {
  json::Value body = {{"status", status.ok() ? "ok" : "unavailable"}};
  if (!status.ok()) body["code"] = status.error().code;
  response.status = status.ok() ? 200 : 503;
  response.set_header("Cache-Control", "no-store");
  response.set_content(body.dump(), "application/json");
}

}  // namespace

void Listener::ServeConnection(int socket, std::size_t remaining) {
  const auto micros = [](time_t sec, time_t usec) { return std::chrono::microseconds(sec * 1000000 + usec); };
  ConnectionStream stream(socket, micros(read_timeout_sec_, read_timeout_usec_),
                          micros(write_timeout_sec_, write_timeout_usec_));
  const ServingScope serving(socket, &stream);
  while (remaining > 0 && svr_sock_ != INVALID_SOCKET) {
    bool closed = false;
    stream.BeginResponse();
    // The last request of the budget is answered with "Connection: close".
    const bool answered = process_request(stream, remaining == 1, closed, nullptr);
    const bool served = stream.EndResponse() && answered;  // what was held goes out either way
    if (TakeCloseAfterResponse() || !served || closed || --remaining == 0 || stream.ReadAhead()) {
      break;
    }
    if (!stream.HasInput()) {
      IdleConnections* parking = idle.load();
      if (parking != nullptr && parking->Park(socket, remaining)) return;
      break;
    }
  }
  ::shutdown(socket, SHUT_RDWR);
  ::close(socket);
}

std::shared_ptr<void> DrainState::Enter() {
  std::lock_guard lock(mutex);
  if (draining_) return nullptr;
  ++requests;
  return std::shared_ptr<void>(this, [self = shared_from_this()](void*) {
    std::lock_guard done(self->mutex);
    if (--self->requests == 0) self->idle.notify_all();
  });
}

void DrainState::Begin() {
  std::lock_guard lock(mutex);
  draining_ = true;
}

bool DrainState::draining() {
  std::lock_guard lock(mutex);
  return draining_;
}

std::size_t DrainState::WaitIdle(std::chrono::milliseconds bound) {
  std::unique_lock lock(mutex);
  idle.wait_for(lock, bound, [this] { return requests == 0; });
  return requests;
}

std::unique_ptr<PeerWatch::Ticket> HttpServer::Impl::WatchClient(const httplib::Request& request,
                                                                 std::function<void()> departed) {
  const int socket = ServingSocket() >= 0 ? ServingSocket()
                                          : FindConnectionSocket(request.local_addr, request.local_port,
                                                                 request.remote_addr, request.remote_port);
  return watch.Watch(socket, std::move(departed));
}

bool HttpServer::Impl::AdmitOrigin(const httplib::Request& request, httplib::Response& response) {
  const std::string origin = request.get_header_value("Origin");
  const std::string host = request.get_header_value("Host");
  if (!(IsAllowedOrigin(origin) || IsNamedOrigin(origin, options.allowed_hosts)) ||
      !(IsAllowedHost(host) || IsNamed(HostName(host), options.allowed_hosts))) {
    SetJsonRpcError(response, 403, kInvalidRequest, "forbidden origin or host");
    return false;
  }
  return true;
}

// GET and DELETE exist for legacy sessions only.
bool HttpServer::Impl::Admit(const httplib::Request& request, httplib::Response& response) {
  if (!AdmitOrigin(request, response)) return false;
  if (request.has_header(kVersionHeader) && server.ServesModern() &&
      IsModernProtocolVersion(request.get_header_value(kVersionHeader))) {
    SetJsonRpcError(response, 405, kInvalidRequest, "method not allowed for this protocol version");
    return false;
  }
  if (request.has_header(kVersionHeader) &&
      !IsLegacyHttpVersion(request.get_header_value(kVersionHeader))) {
    SetJsonRpcError(response, 400, kInvalidRequest, "unsupported protocol version");
    return false;
  }
  return true;
}

void HttpServer::Impl::Post(const httplib::Request& request, httplib::Response& response, RequestHold& hold) {
  if (!AdmitOrigin(request, response)) return;
  // A version header neither era knows: a modern body still gets its modern error (-32022
  // or -32020); anything else the legacy answer, before any other check.
  if (request.has_header(kVersionHeader) &&
      !IsLegacyHttpVersion(request.get_header_value(kVersionHeader)) &&
      !(server.ServesModern() && IsModernProtocolVersion(request.get_header_value(kVersionHeader)))) {
    MessageLimits peek_limits;
    peek_limits.max_bytes = options.max_body_bytes;
    auto peeked = request.body.size() <= options.max_body_bytes
                      ? ParseMessage(request.body, peek_limits)
                      : Result<Message>(udon::MakeError("rpc.too_large", "message too large"));
    if (!peeked.ok() || !IsModern(request, *peeked)) {
      SetJsonRpcError(response, 400, kInvalidRequest, "unsupported protocol version");
      return;
    }
  }
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
  CarryTraceHeaders(request, message);
  // A legacy initialize is no client's yet: it opens a session of its own (bounded by the
  // table), so another client's streams never keep a newcomer out.
  const bool opens_session = message.kind == MessageKind::kRequest && message.method == "initialize" &&
                             !request.has_header(kSessionHeader);
  if (!opens_session &&
      !Enter(request, response, hold, message.kind == MessageKind::kRequest && message.method == "subscriptions/listen")) {
    return;
  }
  if (IsModern(request, message)) {
    if (message.kind == MessageKind::kRequest && !CheckModernHeaders(request, message, response)) return;
    ServeModern(request, std::move(message), response, hold.caller);
    return;
  }
  ServeLegacy(request, std::move(message), response, hold.caller);
}

// The caller PreRoute admitted, for the handler that httplib runs next on the same thread
// for the same request (every request passes PreRoute first, which always sets it): so a
// request is judged before its body is read, and its caller still travels with it.
namespace {
thread_local std::shared_ptr<const Caller> admitted_caller;
}  // namespace

bool HttpServer::Impl::Authorized(const httplib::Request& request, httplib::Response& response) const {
  if (options.authenticate) return AuthenticateCaller(request, response);
  if (!bearer_digest || HasBearerToken(request.get_header_value("Authorization"), *bearer_digest)) return true;
  response.set_header("WWW-Authenticate", "Bearer");
  SetJsonRpcError(response, 401, kInvalidRequest, options.unauthorized_message.c_str());
  return false;
}

bool HttpServer::Impl::AuthenticateCaller(const httplib::Request& request, httplib::Response& response) const {
  AuthVerdict verdict = options.authenticate(request.get_header_value("Authorization"));
  if (verdict.caller) {
    admitted_caller = std::move(verdict.caller);
    return true;
  }
  if (!verdict.www_authenticate.empty()) response.set_header("WWW-Authenticate", verdict.www_authenticate);
  SetJsonRpcError(response, verdict.status, kInvalidRequest, verdict.message.c_str());
  return false;
}

// The request's client for the in-flight limit: a live legacy session (named by
// Mcp-Session-Id; the request keeps it busy) is its own client; anything else is its peer
// address (not the port: one client, many connections), as a stateless request carries no
// other identity than the server's one token. A made-up session id is no way around the
// limit. Open streams (GET, subscriptions/listen) and other requests have budgets of their
// own, so a client's streams never block its (or its address's) calls.
bool HttpServer::Impl::Enter(const httplib::Request& request, httplib::Response& response, RequestHold& hold,
                             bool stream) {
  std::string client;
  if (request.has_header(kSessionHeader)) {
    const std::string id = request.get_header_value(kSessionHeader);
    std::lock_guard lock(sessions_mutex);
    if (auto session = LiveSession(id)) {
      hold.activity = std::make_shared<RequestHold::Activity>(std::move(session));
      client = "session " + id;
    }
  }
  if (client.empty()) client = "peer " + request.remote_addr;
  if (!in_flight) return true;
  hold.slot = in_flight->Acquire(client + (stream ? " streams" : " requests"));
  if (!hold.slot) {
    SetJsonRpcError(response, 429, kInternalError, "too many requests in flight");
    return false;
  }
  return true;
}

// The request's hold (RequestHold) lasts until its response has been written: a streamed
// response's goes with its content provider (httplib destroys the releaser with the
// response). The bearer token was checked before routing.
httplib::Server::Handler HttpServer::Impl::Guarded(
    void (Impl::*handler)(const httplib::Request&, httplib::Response&, RequestHold&)) {
  return [this, handler](const httplib::Request& request, httplib::Response& response) {
    auto hold = std::make_shared<RequestHold>();
    // Draining: nothing new starts here; a POST counts until its answer is written.
    if (handler == &Impl::Post ? !(hold->counted = drain->Enter()) : drain->draining()) {
      response.set_header("Connection", "close");
      CloseAfterResponse();
      SetJsonRpcError(response, 503, kInternalError, "server draining; send the request again");
      return;
    }
    hold->caller = std::move(admitted_caller);
    (this->*handler)(request, response, *hold);
    if ((hold->slot || hold->activity || hold->counted) && response.content_provider_) {
      response.content_provider_resource_releaser_ =
          [releaser = std::move(response.content_provider_resource_releaser_), hold](bool success) {
            if (releaser) releaser(success);
          };
    }
  };
}

// Only the endpoint exists. Any other path is 404 with or without the token, never a 401
// that looks like an OAuth server's. A host refused at the endpoint (401) looks for OAuth
// metadata (/.well-known/oauth-protected-resource, ...), finds none, and then tries
// Dynamic Client Registration at /register anyway; that answer's body is an OAuth error
// (RFC 6749 5.2 shape, which hosts parse and show) whose description tells the person that
// a bearer token is what is missing.
// The balancer's probes (options.health_path, ready_path): no token, no Origin, no body read.
bool HttpServer::Impl::AnswerProbe(const httplib::Request& request, httplib::Response& response) {
  if (request.method != "GET" && request.method != "HEAD") return false;
  if (!options.health_path.empty() && request.path == options.health_path) {
    SetProbe(response, OkStatus());
    return true;
  }
  if (options.ready_path.empty() || request.path != options.ready_path) return false;
  if (drain->draining()) {
    SetProbe(response, udon::MakeError("serve.draining", "the server is draining"));
  } else {
    SetProbe(response, options.ready ? options.ready() : OkStatus());
  }
  return true;
}

// A request answered here has not had its body read: its connection ends with the answer.
httplib::Server::HandlerResponse HttpServer::Impl::PreRoute(const httplib::Request& request,
                                                            httplib::Response& response) {
  const auto handled = Judge(request, response);
  if (handled == httplib::Server::HandlerResponse::Handled &&
      ((request.has_header("Content-Length") && request.get_header_value("Content-Length") != "0") ||
       request.has_header("Transfer-Encoding"))) {
    response.set_header("Connection", "close");
    CloseAfterResponse();
  }
  return handled;
}

httplib::Server::HandlerResponse HttpServer::Impl::Judge(const httplib::Request& request,
                                                         httplib::Response& response) {
  if (AnswerProbe(request, response)) return httplib::Server::HandlerResponse::Handled;
  admitted_caller = nullptr;
  const bool page = std::any_of(options.pages.begin(), options.pages.end(),
                                [&](const HttpServerOptions::Page& p) { return p.path == request.path; });
  if (request.path != options.path && !page) {
    if (auto document = options.public_documents.find(request.path);
        document != options.public_documents.end() && request.method == "GET") {
      response.set_header("Access-Control-Allow-Origin", "*");  // public metadata, for browser-based hosts
      response.set_content(document->second, "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    const json::Value body = {
        {"error", "invalid_request"},
        {"error_description", bearer_digest || options.authenticate ? options.unauthorized_message
                                            : std::string("not found: this server's only endpoint is ") + options.path}};
    response.status = 404;
    response.set_content(body.dump(), "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }
  if (!Authorized(request, response)) return httplib::Server::HandlerResponse::Handled;
  // A page describes every tool (serve's /metrics names them all): under an authenticate
  // hook it is for a caller who may use every tool, so scopes hide from no one what
  // tools/list hides.
  if (page && options.authenticate && !(admitted_caller && admitted_caller->all_tools)) {
    SetJsonRpcError(response, 403, kInvalidRequest, "forbidden: this page is for callers whose grants open every tool");
    return httplib::Server::HandlerResponse::Handled;
  }
  return httplib::Server::HandlerResponse::Unhandled;
}

void HttpServer::Impl::Install() {
  if (!options.bearer_token.empty()) bearer_digest = base::Sha256(options.bearer_token);
  if (options.max_in_flight_per_client > 0) {
    in_flight = std::make_unique<InFlightLimit>(options.max_in_flight_per_client);
  }
  const auto threads = static_cast<std::size_t>(std::max(options.threads, 1));
  const std::size_t queued = options.max_queued_connections;
  const std::size_t max_streams = options.max_streams;
  const std::size_t max_idle = options.max_sessions;
  http.new_task_queue = [this, threads, queued, max_streams, max_idle] {
    return new ConnectionQueue(http, threads, queued, max_streams, max_idle);
  };
  http.set_payload_max_length(options.max_body_bytes);
  // Responses go out in several writes (headers, body, SSE events): without TCP_NODELAY,
  // Nagle's algorithm holds the later ones for the client's delayed ACK, ~40 ms a request.
  http.set_tcp_nodelay(true);
  http.set_keep_alive_max_count(1000);
  // As Node's HTTP server: clients that subtract a margin from the hint (Node's fetch takes
  // 2 s off) still reuse connections. An idle connection holds no thread, and the stop
  // closes it at once (kept_connections.h).
  http.set_keep_alive_timeout(5);
  http.set_exception_handler([](const httplib::Request&, httplib::Response& response,
                                std::exception_ptr) {
    SetJsonRpcError(response, 500, kInternalError, "internal error");
  });
  http.set_pre_routing_handler([this](const httplib::Request& q, httplib::Response& r) { return PreRoute(q, r); });
  http.Post(options.path, Guarded(&Impl::Post));
  http.Get(options.path, Guarded(&Impl::Get));
  http.Delete(options.path, Guarded(&Impl::Delete));
  for (const HttpServerOptions::Page& page : options.pages) {
    http.Get(page.path, [page](const httplib::Request&, httplib::Response& response) {
      response.set_content(page.body(), page.content_type);
    });
  }
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
  impl_->http.WidenBacklog();
  return port;
}

void HttpServer::Serve() { impl_->http.listen_after_bind(); }

std::uint64_t HttpServer::departures() const { return impl_->watch.departures(); }

std::size_t HttpServer::live_sessions() const {
  std::lock_guard lock(impl_->sessions_mutex);
  return impl_->sessions.size();
}

std::size_t HttpServer::Drain(std::chrono::milliseconds bound) {
  impl_->drain->Begin();
  impl_->server.CloseSubscriptions();
  return impl_->drain->WaitIdle(bound);
}

void HttpServer::Stop() {
  impl_->stopping = true;
  // Listen streams end with their graceful closure response, written before the listener
  // goes away; then the threads of modern requests get a moment to finish.
  impl_->server.CloseSubscriptions();
  {
    std::unique_lock lock(impl_->workers_mutex);
    impl_->workers_cv.wait_for(lock, std::chrono::seconds(2), [this] {
      return impl_->workers == 0 && impl_->streams == 0;
    });
    // What still runs is cancelled: the work pool's threads are joined when the server goes.
    for (const auto& session : impl_->running) session->CancelAll();
  }
  {
    std::lock_guard lock(impl_->sessions_mutex);
    for (auto& [id, session] : impl_->sessions) session->stream->Close();
  }
  impl_->http.stop();
}

}  // namespace udon::mcp
