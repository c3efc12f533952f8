// The MCP server core, independent of transport: lifecycle and version negotiation, ping,
// paginated tools/list, tools/call dispatch with progress, logging and cancellation. The
// stdio and Streamable HTTP front ends feed it messages, so both behave identically.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "mcp/jsonrpc.h"
#include "mcp/protocol.h"

namespace udon::mcp {

// Where outgoing messages of a session go. Implementations are thread-safe.
class MessageSink {
 public:
  virtual ~MessageSink() = default;
  virtual void Send(const Message& message) = 0;
  // Bytes that need not be a valid message (fault injection only).
  virtual void SendRaw(const std::string& frame) = 0;
};

// What a tool handler sees of its request: arguments, progress and logging tied to the
// request, and cancellation.
class ToolContext {
 public:
  ToolContext(std::shared_ptr<MessageSink> related, json::Value progress_token);

  bool cancelled() const;
  // Waits up to `duration`; false if the request was cancelled meanwhile.
  bool SleepFor(std::chrono::milliseconds duration) const;
  // notifications/progress; a no-op when the request carried no progress token.
  void Progress(double progress, std::optional<double> total, const std::string& message = {});
  // notifications/message at `level`.
  void Log(const std::string& level, json::Value data);
  void Cancel();

 private:
  std::shared_ptr<MessageSink> related_;
  json::Value progress_token_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cancelled_cv_;
  bool cancelled_ = false;
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
  // Before a response is sent.
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
};

struct ServerOptions {
  json::Value server_info = {{"name", "udon-mcp-server"}, {"version", "0.0.0"}};
  std::string instructions;
  std::size_t page_size = 0;  // 0: one page
  bool logging = true;        // declare the logging capability
};

class Server {
 public:
  explicit Server(ServerOptions options);

  // `tool` is the complete Tool object tools/list shows; its name must be unique.
  void AddTool(json::Value tool, ToolHandler handler);
  void SetHooks(ServerHooks* hooks) { hooks_ = hooks; }
  bool HasTool(const std::string& name) const { return handlers_.count(name) != 0; }

  // Opaque tools/list cursors: the offset of a page's first tool.
  static std::string EncodeCursor(std::size_t offset);
  static std::optional<std::size_t> DecodeCursor(std::string_view cursor);

  // A session's unsolicited messages (not tied to a request) go to `standalone`.
  std::unique_ptr<ServerSession> NewSession(std::shared_ptr<MessageSink> standalone);

 private:
  friend class ServerSession;
  ServerOptions options_;
  std::vector<json::Value> tools_;
  std::map<std::string, ToolHandler, std::less<>> handlers_;
  ServerHooks* hooks_ = nullptr;
};

// Runs deferred work (a tools/call) somewhere; inline when not set.
using WorkRunner = std::function<void(std::function<void()>)>;

// One client connection's protocol state.
class ServerSession {
 public:
  ServerSession(Server& server, std::shared_ptr<MessageSink> standalone);

  // Handles one received message. Messages tied to a request (its response, progress, logs)
  // go to `related`. A tools/call is registered as in flight at once (so a cancellation that
  // follows finds it) and its work is handed to `runner`.
  void Handle(Message message, std::shared_ptr<MessageSink> related,
              const WorkRunner& runner = nullptr);

  MessageSink& standalone() { return *standalone_; }
  std::string protocol_version() const;

 private:
  Message Dispatch(const Message& request);
  Message Initialize(const Message& request);
  Message ListTools(const Message& request);
  void Finish(const Message& request, Message response, const std::shared_ptr<MessageSink>& related);
  void HandleNotification(const Message& notification);
  std::optional<Message> PrepareCall(const Message& request, ToolHandler*& handler);
  void RunCall(Message& request, const std::shared_ptr<MessageSink>& related,
               const std::shared_ptr<ToolContext>& context);

  Server& server_;
  std::shared_ptr<MessageSink> standalone_;
  mutable std::mutex mutex_;
  std::string protocol_version_;
  std::map<std::string, std::shared_ptr<ToolContext>> in_flight_;  // by serialized id
};

}  // namespace udon::mcp
