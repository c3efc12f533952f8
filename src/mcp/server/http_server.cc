#include "mcp/server/http_server.h"

#include <httplib.h>
#include <openssl/crypto.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "json/sha256.h"
#include "mcp/protocol/param_headers.h"
#include "mcp/server/peer_watch.h"
#include "mcp/protocol/sse.h"
#include "mcp/server/worker_pool.h"

namespace udon::mcp {
namespace {

constexpr char kSessionHeader[] = "Mcp-Session-Id";
constexpr char kVersionHeader[] = "MCP-Protocol-Version";

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

// httplib's server with its listening socket within reach: httplib 0.11 listens with a
// backlog of 5, and a burst of new connections beyond it waits for a SYN retransmission
// (1 s) while the server has threads to spare.
class Listener : public httplib::Server {
 public:
  void WidenBacklog() {
    const socket_t socket = svr_sock_;
    if (socket != INVALID_SOCKET) ::listen(socket, SOMAXCONN);
  }
};

// Whether `authorization` is "Bearer <token>" with the expected token. Both sides are hashed
// first, so the comparison runs over equal lengths in constant time whatever was sent.
bool HasBearerToken(const std::string& authorization, const std::array<std::uint8_t, 32>& expected) {
  constexpr std::string_view kScheme = "bearer ";
  std::string_view value = authorization;
  if (value.size() < kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    const char c = value[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kScheme[i]) return false;
  }
  value.remove_prefix(kScheme.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  const std::array<std::uint8_t, 32> given = json::Sha256(value);
  return CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
}

// Requests in flight per client; a slot is held until its response has been written.
class InFlightLimit {
 public:
  explicit InFlightLimit(std::size_t limit) : limit_(limit) {}
  // Held while a request is in flight; its destruction frees the client's slot.
  class Slot {
   public:
    Slot(InFlightLimit& limit, std::string client) : limit_(limit), client_(std::move(client)) {}
    ~Slot() { limit_.Release(client_); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    InFlightLimit& limit_;
    std::string client_;
  };
  // A slot for `client`, or nullptr when it has `limit` requests in flight already.
  std::shared_ptr<Slot> Acquire(const std::string& client) {
    std::lock_guard lock(mutex_);
    std::size_t& count = counts_[client];
    if (count >= limit_) return nullptr;
    ++count;
    return std::make_shared<Slot>(*this, client);
  }

 private:
  void Release(const std::string& client) {
    std::lock_guard lock(mutex_);
    auto it = counts_.find(client);
    if (it != counts_.end() && --it->second == 0) counts_.erase(it);
  }
  const std::size_t limit_;
  std::mutex mutex_;
  std::map<std::string, std::size_t> counts_;
};

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

// A request header's value without the optional whitespace around it (RFC 9110 5.5).
std::optional<std::string> HeaderValue(const httplib::Request& request, std::string_view name) {
  const std::string key(name);
  if (!request.has_header(key)) return std::nullopt;
  std::string value = request.get_header_value(key);
  const auto first = value.find_first_not_of(" \t");
  if (first == std::string::npos) return std::string();
  const auto last = value.find_last_not_of(" \t");
  return value.substr(first, last - first + 1);
}

// The HTTP status a modern error answer carries.
int ModernErrorStatus(int code) {
  if (code == kMethodNotFound) return 404;
  if (code == kParseError || code == kInvalidRequest || code == kInvalidParams ||
      code == rpc_code::kHeaderMismatch || code == rpc_code::kMissingRequiredClientCapability ||
      code == rpc_code::kUnsupportedProtocolVersion) {
    return 400;
  }
  return 200;
}

void SetModernError(httplib::Response& response, const json::Value& id, int code, const char* message,
                    json::Value data = nullptr) {
  response.status = ModernErrorStatus(code);
  response.set_content(SerializeMessage(MakeError(id, code, message, std::move(data))),
                       "application/json");
}

// Whether a decoded Mcp-Param value stands for the body value (integers compare as numbers).
bool HeaderMatchesValue(const std::string& header, const json::Value& value) {
  if (value.is_string()) return header == value.get<std::string>();
  if (value.is_boolean()) return header == (value.get<bool>() ? "true" : "false");
  if (value.is_number()) {
    char* end = nullptr;
    errno = 0;
    const double parsed = std::strtod(header.c_str(), &end);
    return !header.empty() && end == header.c_str() + header.size() && errno == 0 &&
           parsed == value.get<double>();
  }
  return header == value.dump();
}

bool IsNamed(std::string_view name, const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& allowed) {
    return allowed.size() == name.size() &&
           std::equal(allowed.begin(), allowed.end(), name.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           });
  });
}

// An http(s) origin whose host is one of `names`.
bool IsNamedOrigin(const std::string& origin, const std::vector<std::string>& names) {
  std::string_view rest = origin;
  for (std::string_view scheme : {"http://", "https://"}) {
    if (rest.substr(0, scheme.size()) == scheme) {
      rest.remove_prefix(scheme.size());
      return rest.find('/') == std::string_view::npos && IsNamed(HostName(rest), names);
    }
  }
  return false;
}

}  // namespace

bool IsLoopbackName(std::string_view host) {
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == "::1";
}

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
  bool AdmitOrigin(const httplib::Request& request, httplib::Response& response);
  bool Admit(const httplib::Request& request, httplib::Response& response);
  bool IsModern(const httplib::Request& request, const Message& message) const;
  bool CheckModernHeaders(const httplib::Request& request, const Message& message,
                          httplib::Response& response);
  bool CheckParamHeaders(const httplib::Request& request, const Message& message,
                         const std::string& tool_name, httplib::Response& response);
  void ServeModern(const httplib::Request& request, Message message, httplib::Response& response);
  std::unique_ptr<PeerWatch::Ticket> WatchClient(const httplib::Request& request,
                                                 std::function<void()> departed);
  void RefuseLegacy(Message message, httplib::Response& response);
  std::shared_ptr<HttpSession> FindSession(const httplib::Request& request,
                                           httplib::Response& response);
  void Post(const httplib::Request& request, httplib::Response& response);
  void Get(const httplib::Request& request, httplib::Response& response);
  void Delete(const httplib::Request& request, httplib::Response& response);
  void AnswerWithSse(std::shared_ptr<HttpSession> session, Message message,
                     httplib::Response& response);
  bool Authorized(const httplib::Request& request, httplib::Response& response) const;
  std::string ClientKey(const httplib::Request& request);
  httplib::Server::Handler Guarded(void (Impl::*handler)(const httplib::Request&, httplib::Response&));

  Server& server;
  HttpServerOptions options;
  Listener http;
  std::atomic<bool> stopping{false};
  std::mutex sessions_mutex;
  std::map<std::string, std::shared_ptr<HttpSession>> sessions;
  std::optional<std::array<std::uint8_t, 32>> bearer_digest;  // of options.bearer_token
  std::unique_ptr<InFlightLimit> in_flight;                   // when limited
  // Lasting work of modern requests (tools/call, listen) and their open response streams;
  // Stop waits (bounded) for them, then cancels what still runs.
  std::mutex workers_mutex;
  std::condition_variable workers_cv;
  int workers = 0;
  int streams = 0;
  std::set<std::shared_ptr<ServerSession>> running;
  // Last: destroyed first, while what their threads use still exists.
  PeerWatch watch;
  WorkerPool work_pool{static_cast<std::size_t>(std::max(options.threads, 1)), 1};
};

// httplib's connection queue: a bounded pool whose full queue holds up the accept loop.
class ConnectionQueue : public httplib::TaskQueue {
 public:
  ConnectionQueue(std::size_t threads, std::size_t max_queued) : pool_(threads, max_queued) {}
  void enqueue(std::function<void()> fn) override { pool_.Submit(std::move(fn)); }
  void shutdown() override { pool_.Shutdown(); }

 private:
  WorkerPool pool_;
};

std::unique_ptr<PeerWatch::Ticket> HttpServer::Impl::WatchClient(const httplib::Request& request,
                                                                 std::function<void()> departed) {
  const int socket =
      FindConnectionSocket(request.local_addr, request.local_port, request.remote_addr, request.remote_port);
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
      !IsLegacyProtocolVersion(request.get_header_value(kVersionHeader))) {
    SetJsonRpcError(response, 400, kInvalidRequest, "unsupported protocol version");
    return false;
  }
  return true;
}

// Modern: a modern MCP-Protocol-Version header, or a body the core serves as modern.
bool HttpServer::Impl::IsModern(const httplib::Request& request, const Message& message) const {
  if (!server.ServesModern()) return false;
  if (auto header = HeaderValue(request, http_header::kProtocolVersion);
      header && IsModernProtocolVersion(*header)) {
    return true;
  }
  return message.kind == MessageKind::kRequest && server.RequestEra(message) == Era::kModern;
}

// The request metadata headers of a modern request, in the order the specification's
// errors need: _meta fields (-32602), MCP-Protocol-Version equal to _meta (-32020), a
// supported version (-32022), Mcp-Method, an implemented method (404, -32601), Mcp-Name and
// the Mcp-Param-* headers of the tool's x-mcp-header properties (-32020).
bool HttpServer::Impl::CheckModernHeaders(const httplib::Request& request, const Message& message,
                                          httplib::Response& response) {
  std::optional<Message> rejected = ValidateModernRequest(server, message);
  if (rejected && rejected->error["code"] == kInvalidParams) {
    response.status = 400;
    response.set_content(SerializeMessage(*rejected), "application/json");
    return false;
  }
  const std::string requested =
      message.params["_meta"][std::string(meta::kProtocolVersion)].get<std::string>();
  if (HeaderValue(request, http_header::kProtocolVersion) != requested) {
    SetModernError(response, message.id, rpc_code::kHeaderMismatch,
                   "MCP-Protocol-Version header does not match _meta protocolVersion");
    return false;
  }
  if (rejected) {
    response.status = 400;
    response.set_content(SerializeMessage(*rejected), "application/json");
    return false;
  }
  if (HeaderValue(request, http_header::kMethod) != message.method) {
    SetModernError(response, message.id, rpc_code::kHeaderMismatch,
                   "Mcp-Method header does not match the body method");
    return false;
  }
  if (!server.ServesModernMethod(message.method)) {
    SetModernError(response, message.id, kMethodNotFound, "method not found");
    return false;
  }
  // Mcp-Name mirrors params.name (tools/call, prompts/get) or params.uri (resources/read).
  const char* name_field = message.method == "tools/call" || message.method == "prompts/get" ? "name"
                           : message.method == "resources/read"                              ? "uri"
                                                                                             : nullptr;
  if (name_field == nullptr) return true;
  const json::Value& params = message.params;
  if (!params.contains(name_field) || !params[name_field].is_string()) return true;  // the core's -32602
  const std::string name = params[name_field].get<std::string>();
  std::string decoded;
  auto name_header = HeaderValue(request, http_header::kName);
  if (!name_header || !DecodeHeaderValue(*name_header, decoded) || decoded != name) {
    SetModernError(response, message.id, rpc_code::kHeaderMismatch,
                   "Mcp-Name header does not match the body name");
    return false;
  }
  if (message.method != "tools/call") return true;
  return CheckParamHeaders(request, message, name, response);
}

// One Mcp-Param-{Name} per x-mcp-header annotation of the called tool whose argument is
// present and not null, equal to it, and none for an absent or null one (-32020). The annotations are read by the walk the
// client mirrors them with (mcp/param_headers.h); a tool whose annotations break the
// revision's rules cannot have its headers checked, so its calls are refused (-32603),
// as a client refuses to call it.
bool HttpServer::Impl::CheckParamHeaders(const httplib::Request& request, const Message& message,
                                         const std::string& tool_name, httplib::Response& response) {
  // One tool's lookup, not a copy of the catalog: a call costs the same at 10 tools or 10,000.
  const std::optional<json::Value> tool = server.ListedTool(tool_name);
  if (!tool || !tool->contains("inputSchema")) return true;  // the core answers for an unknown tool
  auto params = ParamHeadersOf(*tool);
  if (!params.ok()) {
    SetModernError(response, message.id, kInternalError, "the tool's x-mcp-header annotations are invalid");
    return false;
  }
  const json::Value no_arguments = json::Value::object();
  const json::Value& arguments = message.params.contains("arguments") && message.params["arguments"].is_object()
                                     ? message.params["arguments"]
                                     : no_arguments;
  for (const ParamHeader& param : *params) {
    const json::Value* value = ParamValue(param, arguments);
    const bool has_value = value != nullptr && !value->is_null();
    auto header = HeaderValue(request, std::string(http_header::kParamPrefix) + param.name);
    bool matches = !has_value && !header;
    std::string decoded;
    if (has_value && header) {
      matches = DecodeHeaderValue(*header, decoded) && HeaderMatchesValue(decoded, *value);
    }
    if (!matches) {
      SetModernError(response, message.id, rpc_code::kHeaderMismatch,
                     "an Mcp-Param header does not match its argument");
      return false;
    }
  }
  return true;
}

// A stateless request: its own short-lived session, no Mcp-Session-Id. A single answer
// comes back as JSON (or one SSE event) with the status its error needs; anything that
// streams (progress, logs, a listen stream) comes back as SSE without event ids.
//
// The request is handled on this thread; only lasting work (a tools/call, a listen stream)
// goes to the bounded work pool, so that this thread can stream its messages meanwhile. No
// free thread there: 503 at once. While that work runs, the client's departure (its socket
// closed) cancels it at once.
void HttpServer::Impl::ServeModern(const httplib::Request& http_request, Message message,
                                   httplib::Response& response) {
  if (message.kind != MessageKind::kRequest) {
    response.status = 202;  // no client notification means anything here without a session
    return;
  }
  auto session = std::shared_ptr<ServerSession>(server.NewSession(std::make_shared<NullSink>()));
  auto channel = std::make_shared<RequestChannel>();
  std::shared_ptr<PeerWatch::Ticket> ticket;
  bool deferred = false;
  bool refused = false;
  const json::Value id = message.id;
  const WorkRunner runner = [&](std::function<void()> work) {
    deferred = true;
    if (!work_pool.TryReserve()) {
      refused = true;  // the session is this request's alone: its in-flight entry goes with it
      return;
    }
    ticket = WatchClient(http_request, [session, channel] {
      channel->Close();
      session->CancelAll();
    });
    {
      std::lock_guard lock(workers_mutex);
      ++workers;
      running.insert(session);
    }
    work_pool.RunReserved([this, session, channel, work = std::move(work)]() mutable {
      work();
      work = nullptr;
      channel->Finish();
      // Notify under the lock: Stop() returns, and the server may be destroyed, as soon as
      // it sees the count reach zero.
      std::lock_guard lock(workers_mutex);
      running.erase(session);
      --workers;
      workers_cv.notify_all();
    });
  };
  HandleOptions handle_options;
  handle_options.modern = true;
  session->Handle(std::move(message), channel, runner, handle_options);
  if (refused) {
    response.status = 503;
    response.set_content(SerializeMessage(MakeError(id, kInternalError, "server busy")), "application/json");
    return;
  }
  if (!deferred) channel->Finish();  // answered on this thread
  if (!channel->WaitForStream()) {
    bool finished = false;
    auto frames = channel->Take(std::chrono::milliseconds(0), finished);
    if (frames.empty()) {
      response.status = 202;  // cancelled: never answered
      return;
    }
    const std::string& body = frames.back().data;
    const int status = frames.back().error_code ? ModernErrorStatus(*frames.back().error_code) : 200;
    response.status = status;
    if (options.json_responses || status != 200) {
      response.set_content(body, "application/json");
    } else {
      response.set_header("Cache-Control", "no-cache");
      response.set_content(FormatSseEvent(body, {}, "message"), "text/event-stream");
    }
    return;
  }
  response.set_header("Cache-Control", "no-cache");
  response.set_header("X-Accel-Buffering", "no");
  {
    std::lock_guard lock(workers_mutex);
    ++streams;
  }
  response.set_chunked_content_provider(
      "text/event-stream",
      [session, channel, ticket](std::size_t, httplib::DataSink& sink) {
        for (;;) {
          bool finished = false;
          // Woken by a frame, the end of the work or the client's departure: no polling.
          auto frames = channel->Take(std::chrono::hours(1), finished);
          for (const auto& frame : frames) {
            const std::string event =
                frame.keep_alive ? std::string(":\n\n") : FormatSseEvent(frame.data, {}, "message");
            if (!sink.write(event.data(), event.size())) {
              channel->Close();
              session->CancelAll();
              return false;
            }
          }
          if (finished && frames.empty()) break;
        }
        if (!channel->Open()) return false;  // the client left: nothing to end
        sink.done();
        return true;
      },
      [this, session, channel, ticket](bool) {
        // The client went away (or the stream ended): stop the work it was waiting for.
        channel->Close();
        session->CancelAll();
        std::lock_guard lock(workers_mutex);  // as above: notify before Stop() can return
        --streams;
        workers_cv.notify_all();
      });
}

// A modern-only server answers a legacy request (initialize) with the core's refusal.
void HttpServer::Impl::RefuseLegacy(Message message, httplib::Response& response) {
  if (message.kind != MessageKind::kRequest) {
    SetJsonRpcError(response, 400, kInvalidRequest, "unsupported protocol version");
    return;
  }
  auto session = server.NewSession(std::make_shared<NullSink>());
  auto collector = std::make_shared<JsonCollector>(std::make_shared<NullSink>());
  session->Handle(std::move(message), collector);
  response.status = 400;
  response.set_content(collector->body(), "application/json");
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
  if (!AdmitOrigin(request, response)) return;
  // A version header neither era knows: a modern body still gets its modern error (-32022
  // or -32020); anything else the legacy answer, before any other check.
  if (request.has_header(kVersionHeader) &&
      !IsLegacyProtocolVersion(request.get_header_value(kVersionHeader)) &&
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
  if (IsModern(request, message)) {
    if (message.kind == MessageKind::kRequest && !CheckModernHeaders(request, message, response)) return;
    ServeModern(request, std::move(message), response);
    return;
  }
  if (!server.ServesLegacy()) {
    RefuseLegacy(std::move(message), response);
    return;
  }
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
  const std::uint64_t generation = session->stream->TryOpen();
  if (generation == 0) {
    SetJsonRpcError(response, 409, kInvalidRequest, "a GET stream is already open");
    return;
  }
  // The client's departure ends the stream at once, not at the next keep-alive.
  std::shared_ptr<PeerWatch::Ticket> ticket =
      WatchClient(request, [stream = session->stream, generation] { stream->Depart(generation); });
  response.set_header("Cache-Control", "no-cache");
  const long retry_ms = options.retry_ms;
  const auto keep_alive = std::chrono::milliseconds(std::max(options.keep_alive_ms, 1L));
  response.set_chunked_content_provider(
      "text/event-stream",
      [this, session, retry_ms, keep_alive, ticket](std::size_t, httplib::DataSink& sink) {
        std::uint64_t next = 0;
        auto write = [&](const std::string& event) { return sink.write(event.data(), event.size()); };
        // The priming event carries whatever was queued before the stream opened, in one
        // write: a client that has seen the stream open sees those messages next, before
        // anything it asks afterwards on another connection comes back.
        std::string opening = FormatSseEvent("", "0-" + std::to_string(next++), {}, retry_ms);
        bool closed_early = false;
        bool gone = false;
        for (const auto& frame : session->stream->Take(std::chrono::milliseconds(0), closed_early, gone)) {
          opening += FormatSseEvent(frame, "0-" + std::to_string(next++), "message");
        }
        if (!write(opening)) return false;
        auto last_write = std::chrono::steady_clock::now();
        while (!stopping.load()) {
          bool closed = false;
          // Woken by a message, the session's end or the client's departure; else at the
          // next keep-alive. Stop() closes every session stream.
          const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
              keep_alive - (std::chrono::steady_clock::now() - last_write));
          auto frames = session->stream->Take(std::max(wait, std::chrono::milliseconds(0)), closed, gone);
          if (gone) return false;
          for (const auto& frame : frames) {
            if (!write(FormatSseEvent(frame, "0-" + std::to_string(next++), "message"))) {
              return false;
            }
            last_write = std::chrono::steady_clock::now();
          }
          if (closed) break;
          if (std::chrono::steady_clock::now() - last_write >= keep_alive) {
            if (!write(": keep-alive\n\n")) return false;
            last_write = std::chrono::steady_clock::now();
          }
        }
        sink.done();
        return true;
      },
      [session, ticket](bool) { session->stream->Release(); });
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

bool HttpServer::Impl::Authorized(const httplib::Request& request, httplib::Response& response) const {
  if (!bearer_digest || HasBearerToken(request.get_header_value("Authorization"), *bearer_digest)) return true;
  response.set_header("WWW-Authenticate", "Bearer");
  SetJsonRpcError(response, 401, kInvalidRequest, "unauthorized");
  return false;
}

// A live legacy session is its own client; anything else is its peer address (not the
// port: one client, many connections). A made-up session id is no way around the limit.
std::string HttpServer::Impl::ClientKey(const httplib::Request& request) {
  if (request.has_header(kSessionHeader)) {
    const std::string id = request.get_header_value(kSessionHeader);
    std::lock_guard lock(sessions_mutex);
    if (sessions.count(id) != 0) return "session " + id;
  }
  return "peer " + request.remote_addr;
}

// The client's requests in flight (the bearer token was checked before routing). The slot is released once the response has been written: a streamed response's slot goes
// with its content provider (httplib destroys the releaser with the response).
httplib::Server::Handler HttpServer::Impl::Guarded(
    void (Impl::*handler)(const httplib::Request&, httplib::Response&)) {
  return [this, handler](const httplib::Request& request, httplib::Response& response) {
    std::shared_ptr<InFlightLimit::Slot> slot;
    if (in_flight) {
      slot = in_flight->Acquire(ClientKey(request));
      if (!slot) {
        SetJsonRpcError(response, 429, kInternalError, "too many requests in flight");
        return;
      }
    }
    (this->*handler)(request, response);
    if (slot && response.content_provider_) {
      response.content_provider_resource_releaser_ =
          [releaser = std::move(response.content_provider_resource_releaser_), slot](bool success) {
            if (releaser) releaser(success);
          };
    }
  };
}

void HttpServer::Impl::Install() {
  if (!options.bearer_token.empty()) bearer_digest = json::Sha256(options.bearer_token);
  if (options.max_in_flight_per_client > 0) {
    in_flight = std::make_unique<InFlightLimit>(options.max_in_flight_per_client);
  }
  const auto threads = static_cast<std::size_t>(std::max(options.threads, 1));
  const std::size_t queued = options.max_queued_connections;
  http.new_task_queue = [threads, queued] { return new ConnectionQueue(threads, queued); };
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
  // Other paths and methods need the token too, so that they tell nothing without it.
  http.set_pre_routing_handler([this](const httplib::Request& q, httplib::Response& r) {
    return Authorized(q, r) ? httplib::Server::HandlerResponse::Unhandled
                            : httplib::Server::HandlerResponse::Handled;
  });
  http.Post(options.path, Guarded(&Impl::Post));
  http.Get(options.path, Guarded(&Impl::Get));
  http.Delete(options.path, Guarded(&Impl::Delete));
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
