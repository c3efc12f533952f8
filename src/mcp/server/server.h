// The MCP server core, independent of transport: lifecycle and version negotiation, ping,
// paginated tools/list, tools/call dispatch with progress, logging and cancellation. The
// stdio and Streamable HTTP front ends feed it messages, so both behave identically.
//
// Both protocol eras are served side by side. A request whose params._meta names a modern
// protocol version (or a modern-only method) is served statelessly: its _meta is validated
// on its own, server/discover and subscriptions/listen exist, every result carries
// resultType and the server's identity in _meta, and ping/logging/setLevel do not exist.
// Everything else is legacy: the initialize handshake and its session, exactly as before.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json/json.h"
#include "mcp/protocol/jsonrpc.h"
#include "mcp/protocol/protocol.h"

namespace udon::mcp {

// Where outgoing messages of a session go. Implementations are thread-safe.
class MessageSink {
 public:
  virtual ~MessageSink() = default;
  virtual void Send(const Message& message) = 0;
  // Bytes that need not be a valid message (fault injection only).
  virtual void SendRaw(const std::string& frame) = 0;
  // False once the peer can no longer receive (an HTTP response stream the client closed).
  virtual bool Open() const { return true; }
  // Called now and then while a long-lived stream is quiet (HTTP: an SSE comment line).
  virtual void KeepAlive() {}
};

class Server;

// Who a transport authenticated (Streamable HTTP with an authenticate hook: OAuth), and the
// tools that caller may see in tools/list and call. Absent (nullptr): the transport's one
// credential, or none, which lets every caller see and call every listed tool.
struct Caller {
  std::string subject;  // never a credential
  bool all_tools = false;
  std::set<std::string, std::less<>> tools;
  bool MayUse(std::string_view tool) const { return all_tools || tools.count(tool) > 0; }
};

// What a tool handler sees of its request: arguments, progress and logging tied to the
// request, the client's declared capabilities, and cancellation.
class ToolContext {
 public:
  ToolContext(std::shared_ptr<MessageSink> related, json::Value progress_token);

  Era era() const { return era_; }
  // The client's capabilities (modern: this request's _meta; legacy: initialize's).
  const json::Value& client_capabilities() const { return client_capabilities_; }
  bool HasClientCapability(std::string_view name) const;
  // Multi round-trip requests (2026-07-28): a retried request's inputResponses (an object;
  // empty when none came) and requestState, echoed from an earlier input_required result.
  const json::Value& input_responses() const { return input_responses_; }
  const std::optional<std::string>& request_state() const { return request_state_; }
  // Who asked, for records: "session-N" (legacy: the Nth session this server opened) or
  // "stateless" (modern), then the client's self-declared clientInfo name when it gave one
  // (printable ASCII, cut at 64). Not a secret: never the session id.
  const std::string& client_label() const { return client_label_; }
  // For traces (telemetry): the request's W3C trace context (params._meta, else the HTTP
  // headers), the protocol version it was served at, the transport ("pipe": stdio, "tcp":
  // HTTP) and a legacy HTTP session's id. The id names a live session: never log it.
  const TraceContext& trace() const { return trace_; }
  const std::string& protocol_version() const { return protocol_version_; }
  const std::string& network_transport() const { return network_transport_; }
  const std::string& session_id() const { return session_id_; }
  // The authenticated caller, when the transport authenticates callers (else nullptr).
  const Caller* caller() const { return caller_.get(); }
  // Tells the clients that asked for it that the tool list changed: in the modern era the
  // subscriptions/listen streams that opted in, in the legacy era this session's stream.
  void ToolsListChanged();

  bool cancelled() const;
  // Waits up to `duration`; false if the request was cancelled meanwhile.
  bool SleepFor(std::chrono::milliseconds duration) const;
  // notifications/progress; a no-op when the request carried no progress token.
  void Progress(double progress, std::optional<double> total, const std::string& message = {});
  // notifications/message at `level`. Modern requests get it only when their _meta asked
  // for a log level at or below `level`.
  void Log(const std::string& level, json::Value data);
  void Cancel();

 private:
  friend class ServerSession;
  friend class Server;
  // Ends a SleepFor early without cancelling: a listen stream then sees the server closing.
  void Wake();

  std::shared_ptr<MessageSink> related_;
  json::Value progress_token_;
  Era era_ = Era::kLegacy;
  json::Value client_capabilities_ = json::Value::object();
  json::Value input_responses_ = json::Value::object();
  std::optional<std::string> request_state_;
  std::string client_label_;
  TraceContext trace_;
  std::string protocol_version_;
  std::string network_transport_;
  std::string session_id_;
  std::shared_ptr<const Caller> caller_;
  int min_log_severity_ = 0;  // modern: -1 means no logs were asked for
  std::function<void()> tools_list_changed_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cancelled_cv_;
  bool cancelled_ = false;
  bool woken_ = false;  // Wake() was called: every later SleepFor returns at once
};

struct RpcError {
  int code = kInternalError;
  std::string message;
  json::Value data;
};

// A tool's answer: a CallToolResult, or a JSON-RPC error.
struct ToolOutcome {
  json::Value result;
  std::optional<RpcError> error;
};

using ToolHandler = std::function<ToolOutcome(const json::Value& arguments, ToolContext& context)>;

class ServerSession;

// The severity rank of an MCP logging level (debug 0 ... emergency 7), -1 if unknown.
int LogSeverity(std::string_view level);

// Extension points for the demo server's fault injector and request log. Every method has a
// harmless default and may be called from several threads at once.
class ServerHooks {
 public:
  virtual ~ServerHooks() = default;
  // Every message received, before anything else happens.
  virtual void OnMessage(const Message& message) { (void)message; }
  // After a notification has been handled.
  virtual void AfterNotification(const Message& notification, ServerSession& session) {
    (void)notification;
    (void)session;
  }
  // Before a request is dispatched (for tools/call: on the thread that runs the call). May
  // rewrite it, emit messages on `related`, stall or end the process, or answer it (the
  // normal handler then does not run).
  virtual std::optional<Message> BeforeRequest(Message& request, MessageSink& related) {
    (void)request;
    (void)related;
    return std::nullopt;
  }
  // The catalog as tools/list presents it (a copy the hook may change).
  virtual void TransformTools(std::vector<json::Value>& tools) { (void)tools; }
  // Whether TransformTools may change anything. While false, the server looks one tool up
  // without copying the whole catalog (a tools/call's cost stays independent of its size).
  virtual bool TransformsTools() const { return true; }
  // Before a response is sent. A tools/list page carries its Tools serialized
  // (response.lean_tools; result["tools"] an empty stand-in): CompleteLeanResult(response)
  // first to read or change them.
  virtual void AfterRequest(const Message& request, Message& response, MessageSink& related) {
    (void)request;
    (void)response;
    (void)related;
  }
  // After the response has been sent.
  virtual void AfterResponse(const Message& request, ServerSession& session) {
    (void)request;
    (void)session;
  }
  // The filter a subscriptions/listen acknowledgment reports (and the stream then honors).
  virtual void TransformAcknowledgment(json::Value& notifications) { (void)notifications; }
  // Polled while a listen stream is open: true ends it at once, without a response.
  virtual bool DropSubscription(const Message& listen_request) {
    (void)listen_request;
    return false;
  }
};

// Cache hints of modern cacheable results (server/discover, tools/list).
enum class CacheScope { kPublic, kPrivate };
const char* CacheScopeName(CacheScope scope);

struct ServerOptions {
  json::Value server_info = {{"name", "udon-mcp-server"}, {"version", "0.0.0"}};
  std::string instructions;
  std::size_t page_size = 0;  // 0: one page
  bool logging = true;        // declare the logging capability
  // The protocol versions served, newest first (default: every one this build speaks except
  // the stdio-only 2024-11-05). Without a legacy version initialize is refused; without a
  // modern one every request is served as legacy.
  std::vector<std::string> versions = ServedProtocolVersions();
  // Modern cache hints on server/discover and tools/list: fresh for ttl_ms (0: stale at
  // once, so a client re-lists whenever it needs the catalog).
  long ttl_ms = 0;
  CacheScope cache_scope = CacheScope::kPublic;
  // Modern era only: declare prompts and resources, answer their list methods with empty,
  // cacheable pages and resources/read with "not found" (for test harnesses that probe
  // every cacheable list).
  bool empty_prompts_and_resources = false;
  // How long a quiet subscriptions/listen stream waits before a keep-alive (HTTP: an SSE
  // comment), for intermediaries; a departed client is noticed by the transport, not by it.
  std::chrono::milliseconds listen_keep_alive{1000};
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();

  // `tool` is the complete Tool object tools/list shows; its name must be unique. May be
  // called while serving (a handler may add tools; then call NotifyToolsListChanged).
  void AddTool(json::Value tool, ToolHandler handler);
  // Takes a tool out of tools/list; tools/call still reaches its handler (which may then
  // refuse in words a client can show). False when no listed tool had that name.
  bool UnlistTool(const std::string& name);
  // Replaces the whole catalog at once: no listing ever sees half of the old and the new.
  void SetTools(std::vector<std::pair<json::Value, ToolHandler>> tools);
  void SetHooks(ServerHooks* hooks) { hooks_ = hooks; }
  bool HasTool(const std::string& name) const;
  const ServerOptions& options() const { return options_; }

  bool ServesModern() const;
  bool ServesLegacy() const;
  // The era a request is served in: modern when the server speaks a modern version and the
  // request names a non-legacy version in params._meta or is a modern-only method (on a
  // modern-only server: everything but initialize).
  Era RequestEra(const Message& request) const;
  // Whether the modern era has a handler for `method` (else -32601).
  bool ServesModernMethod(std::string_view method) const;
  // The catalog as tools/list shows it (after the hooks' transformation).
  std::vector<json::Value> ListedTools() const;
  // The first tool named `name` as tools/list shows it, if listed. Without a transforming
  // hook: an index lookup and one tool's copy, whatever the catalog's size.
  std::optional<json::Value> ListedTool(const std::string& name) const;
  // tools/list's page: at most `count` tools (0: all) from `offset`, as serialized Tools
  // (LeanToolList::Frame::kToolsArray), and how many tools are listed in all; nullopt when
  // `offset` is past the end. Without a transforming hook each Tool's text was written
  // once, when it was added: a page copies bytes, it builds and serializes no Tool. A
  // `caller` limited to some tools is shown those alone, paged the same way.
  struct ListedPage {
    std::shared_ptr<const LeanToolList> tools;
    std::size_t total = 0;
  };
  std::optional<ListedPage> ListedTools(std::size_t offset, std::size_t count, const Caller* caller = nullptr) const;

  // Sends notifications/tools/list_changed to every open subscriptions/listen stream that
  // acknowledged toolsListChanged (and to nobody else).
  void NotifyToolsListChanged();
  // NotifyToolsListChanged, and the same notification to every initialized legacy session
  // (on its stream for unsolicited messages): everyone who can hear of it does.
  void BroadcastToolsListChanged();
  // Ends every open listen stream with its graceful closure response and waits (bounded)
  // until they have been sent. New listen requests are then answered at once the same way.
  void CloseSubscriptions();
  std::size_t open_subscriptions() const;

  // Opaque tools/list cursors: the offset of a page's first tool.
  static std::string EncodeCursor(std::size_t offset);
  static std::optional<std::size_t> DecodeCursor(std::string_view cursor);

  // A session's unsolicited messages (not tied to a request) go to `standalone`.
  std::unique_ptr<ServerSession> NewSession(std::shared_ptr<MessageSink> standalone);

 private:
  friend class ServerSession;
  struct Subscription;
  std::optional<ToolHandler> FindHandler(const std::string& name) const;
  bool Subscribe(const std::shared_ptr<Subscription>& subscription);
  void RebuildIndexLocked();
  // A legacy session that finished initialize: hears BroadcastToolsListChanged.
  void AddLegacySession(const std::shared_ptr<MessageSink>& standalone);
  std::size_t NextSessionNumber();
  void Unsubscribe(const std::shared_ptr<Subscription>& subscription);
  bool closing() const;

  ServerOptions options_;
  mutable std::mutex catalog_mutex_;
  std::vector<json::Value> tools_;
  std::vector<std::string> tool_texts_;  // SerializeValue(tools_[i]), written once
  std::map<std::string, ToolHandler, std::less<>> handlers_;
  std::map<std::string, std::size_t, std::less<>> first_listed_;  // name -> index in tools_
  ServerHooks* hooks_ = nullptr;
  mutable std::mutex subscriptions_mutex_;
  std::condition_variable subscriptions_cv_;
  std::vector<std::shared_ptr<Subscription>> subscriptions_;
  std::vector<std::weak_ptr<MessageSink>> legacy_sessions_;  // under subscriptions_mutex_
  bool closing_ = false;
  std::atomic<std::size_t> sessions_opened_{0};
};

// Runs deferred work (a tools/call) somewhere; inline when not set.
using WorkRunner = std::function<void(std::function<void()>)>;

// How a transport hands a request over.
struct HandleOptions {
  // The transport already knows the request is modern (an HTTP request with a modern
  // MCP-Protocol-Version header): its _meta is validated even when it names no version.
  bool modern = false;
  // The authenticated caller: tools/list shows, and tools/call reaches, only its tools.
  std::shared_ptr<const Caller> caller;
};

// One client connection's protocol state.
class ServerSession {
 public:
  ServerSession(Server& server, std::shared_ptr<MessageSink> standalone);

  // Handles one received message. Messages tied to a request (its response, progress, logs)
  // go to `related`. A tools/call or subscriptions/listen is registered as in flight at once
  // (so a cancellation that follows finds it) and its work is handed to `runner`; a listen
  // stream's work lasts until it is cancelled, dropped or closed.
  void Handle(Message message, std::shared_ptr<MessageSink> related,
              const WorkRunner& runner = nullptr, HandleOptions options = {});
  // Cancels every request in flight (a transport whose request stream closed).
  void CancelAll();

  MessageSink& standalone() { return *standalone_; }
  std::string protocol_version() const;
  // What the transport knows of this session, for its tools' contexts (ToolContext::trace
  // and the rest): "pipe" or "tcp", and a legacy HTTP session's id.
  void SetOrigin(std::string network_transport, std::string session_id = {});

 private:
  Message Dispatch(const Message& request, Era era, const Caller* caller);
  Message DispatchModern(const Message& request, const Caller* caller);
  Message Initialize(const Message& request);
  Message Discover(const Message& request);
  Message ListTools(const Message& request, Era era, const Caller* caller);
  Message EmptyList(const Message& request, const char* member);
  void Finish(const Message& request, Message response, const std::shared_ptr<MessageSink>& related,
              Era era);
  void HandleNotification(const Message& notification);
  std::optional<Message> PrepareCall(const Message& request, ToolHandler& handler);
  std::shared_ptr<ToolContext> NewContext(const Message& request, Era era,
                                          const std::shared_ptr<MessageSink>& related);
  void RunCall(Message& request, const std::shared_ptr<MessageSink>& related,
               const std::shared_ptr<ToolContext>& context);
  void RunListen(const Message& request, const std::shared_ptr<MessageSink>& related,
                 const std::shared_ptr<ToolContext>& context);

  Server& server_;
  std::shared_ptr<MessageSink> standalone_;
  std::size_t session_number_;
  mutable std::mutex mutex_;
  std::string protocol_version_;
  json::Value client_capabilities_ = json::Value::object();  // from initialize
  std::string client_label_;                                 // from initialize
  std::string network_transport_;                            // SetOrigin
  std::string session_id_;                                   // SetOrigin
  std::map<std::string, std::shared_ptr<ToolContext>> in_flight_;  // by serialized id
};

// The checks every modern request passes before dispatch: params an object with a _meta
// object carrying a protocolVersion string and a clientCapabilities object (else -32602),
// a version the server speaks in the modern era (else -32022 with data.supported and
// data.requested). nullopt when the request may proceed.
std::optional<Message> ValidateModernRequest(const Server& server, const Message& request);
// Adds resultType "complete" and _meta serverInfo to a modern result where absent.
void StampModernResult(const Server& server, Message& response);

}  // namespace udon::mcp
