#include "mcp/server.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace udon::mcp {
namespace {

std::string IdKey(const json::Value& id) { return id.dump(); }

Message InvalidParams(const json::Value& id, std::string message) {
  return MakeError(id, kInvalidParams, std::move(message));
}

}  // namespace

ToolContext::ToolContext(std::shared_ptr<MessageSink> related, json::Value progress_token)
    : related_(std::move(related)), progress_token_(std::move(progress_token)) {}

bool ToolContext::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

bool ToolContext::SleepFor(std::chrono::milliseconds duration) const {
  std::unique_lock lock(mutex_);
  return !cancelled_cv_.wait_for(lock, duration, [this] { return cancelled_; });
}

void ToolContext::Cancel() {
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
  }
  cancelled_cv_.notify_all();
}

void ToolContext::Progress(double progress, std::optional<double> total,
                           const std::string& message) {
  if (progress_token_.is_null()) return;
  json::Value params = {{"progressToken", progress_token_}, {"progress", progress}};
  if (total) params["total"] = *total;
  if (!message.empty()) params["message"] = message;
  related_->Send(MakeNotification("notifications/progress", std::move(params)));
}

void ToolContext::Log(const std::string& level, json::Value data) {
  related_->Send(MakeNotification("notifications/message",
                                  {{"level", level}, {"data", std::move(data)}}));
}

Server::Server(ServerOptions options) : options_(std::move(options)) {}

void Server::AddTool(json::Value tool, ToolHandler handler) {
  std::string name = tool.at("name").get<std::string>();
  tools_.push_back(std::move(tool));
  handlers_[std::move(name)] = std::move(handler);
}

std::string Server::EncodeCursor(std::size_t offset) { return "page-" + std::to_string(offset); }

std::optional<std::size_t> Server::DecodeCursor(std::string_view cursor) {
  constexpr std::string_view kPrefix = "page-";
  if (cursor.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  cursor.remove_prefix(kPrefix.size());
  std::size_t offset = 0;
  auto [end, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), offset);
  if (ec != std::errc() || end != cursor.data() + cursor.size() || cursor.empty()) {
    return std::nullopt;
  }
  return offset;
}

std::unique_ptr<ServerSession> Server::NewSession(std::shared_ptr<MessageSink> standalone) {
  return std::make_unique<ServerSession>(*this, std::move(standalone));
}

ServerSession::ServerSession(Server& server, std::shared_ptr<MessageSink> standalone)
    : server_(server), standalone_(std::move(standalone)) {}

std::string ServerSession::protocol_version() const {
  std::lock_guard lock(mutex_);
  return protocol_version_;
}

void ServerSession::Handle(Message message, std::shared_ptr<MessageSink> related,
                           const WorkRunner& runner) {
  ServerHooks* hooks = server_.hooks_;
  if (hooks != nullptr) hooks->OnMessage(message);
  switch (message.kind) {
    case MessageKind::kNotification:
      HandleNotification(message);
      if (hooks != nullptr) hooks->AfterNotification(message, *this);
      return;
    case MessageKind::kResult:
    case MessageKind::kError:
      return;  // answers to server->client requests: nothing waits for them
    case MessageKind::kRequest:
      break;
  }
  if (message.method != "tools/call") {
    if (hooks != nullptr) {
      if (auto answer = hooks->BeforeRequest(message, *related)) {
        Finish(message, std::move(*answer), related);
        return;
      }
    }
    Finish(message, Dispatch(message), related);
    return;
  }
  json::Value token;
  if (message.params.is_object() && message.params.contains("_meta") &&
      message.params["_meta"].is_object()) {
    const json::Value& meta = message.params["_meta"];
    if (auto it = meta.find("progressToken");
        it != meta.end() && (it->is_string() || it->is_number_integer())) {
      token = *it;
    }
  }
  auto context = std::make_shared<ToolContext>(related, std::move(token));
  {
    std::lock_guard lock(mutex_);
    if (!in_flight_.emplace(IdKey(message.id), context).second) {
      Finish(message, MakeError(message.id, kInvalidRequest, "request id already in use"),
             related);
      return;
    }
  }
  auto work = [this, request = std::move(message), related, context]() mutable {
    RunCall(request, related, context);
  };
  if (runner) {
    runner(std::move(work));
  } else {
    work();
  }
}

// Only cancellation changes state; other notifications need no answer and no action.
void ServerSession::HandleNotification(const Message& notification) {
  if (notification.method == "notifications/cancelled" && notification.params.is_object() &&
      notification.params.contains("requestId")) {
    std::lock_guard lock(mutex_);
    if (auto it = in_flight_.find(IdKey(notification.params["requestId"]));
        it != in_flight_.end()) {
      it->second->Cancel();
    }
  }
}

void ServerSession::Finish(const Message& request, Message response,
                           const std::shared_ptr<MessageSink>& related) {
  ServerHooks* hooks = server_.hooks_;
  if (hooks != nullptr) hooks->AfterRequest(request, response, *related);
  related->Send(response);
  if (hooks != nullptr) hooks->AfterResponse(request, *this);
}

Message ServerSession::Dispatch(const Message& request) {
  if (!request.params.is_null() && !request.params.is_object()) {
    return InvalidParams(request.id, "params must be an object");
  }
  if (request.method == "initialize") return Initialize(request);
  if (request.method == "ping") return MakeResult(request.id, json::Value::object());
  if (request.method == "tools/list") return ListTools(request);
  if (request.method == "logging/setLevel" && server_.options_.logging) {
    return MakeResult(request.id, json::Value::object());
  }
  return MakeError(request.id, kMethodNotFound, "method not found");
}

Message ServerSession::Initialize(const Message& request) {
  const json::Value& params = request.params;
  if (!params.is_object() || !params.contains("protocolVersion") ||
      !params["protocolVersion"].is_string() || !params.contains("clientInfo") ||
      !params["clientInfo"].is_object()) {
    return InvalidParams(request.id, "initialize needs protocolVersion and clientInfo");
  }
  const std::string requested = params["protocolVersion"].get<std::string>();
  const std::string version =
      IsSupportedProtocolVersion(requested) ? requested : std::string(kLatestProtocolVersion);
  {
    std::lock_guard lock(mutex_);
    protocol_version_ = version;
  }
  json::Value capabilities = {{"tools", {{"listChanged", true}}}};
  if (server_.options_.logging) capabilities["logging"] = json::Value::object();
  json::Value result = {{"protocolVersion", version},
                        {"capabilities", std::move(capabilities)},
                        {"serverInfo", server_.options_.server_info}};
  if (!server_.options_.instructions.empty()) {
    result["instructions"] = server_.options_.instructions;
  }
  return MakeResult(request.id, std::move(result));
}

Message ServerSession::ListTools(const Message& request) {
  std::size_t offset = 0;
  if (request.params.is_object() && request.params.contains("cursor")) {
    const json::Value& cursor = request.params["cursor"];
    std::optional<std::size_t> decoded;
    if (cursor.is_string()) decoded = Server::DecodeCursor(cursor.get<std::string>());
    if (!decoded) return InvalidParams(request.id, "invalid cursor");
    offset = *decoded;
  }
  const std::vector<json::Value>* tools = &server_.tools_;
  std::vector<json::Value> transformed;
  if (server_.hooks_ != nullptr) {
    transformed = server_.tools_;
    server_.hooks_->TransformTools(transformed);
    tools = &transformed;
  }
  if (offset > tools->size()) return InvalidParams(request.id, "invalid cursor");
  const std::size_t page_size =
      server_.options_.page_size == 0 ? tools->size() : server_.options_.page_size;
  const std::size_t end = std::min(tools->size(), offset + page_size);
  json::Value page = json::Value::array();
  for (std::size_t i = offset; i < end; ++i) page.push_back((*tools)[i]);
  json::Value result = {{"tools", std::move(page)}};
  if (end < tools->size()) result["nextCursor"] = Server::EncodeCursor(end);
  return MakeResult(request.id, std::move(result));
}

std::optional<Message> ServerSession::PrepareCall(const Message& request, ToolHandler*& handler) {
  const json::Value& params = request.params;
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    return InvalidParams(request.id, "tools/call needs a tool name");
  }
  if (params.contains("arguments") && !params["arguments"].is_object()) {
    return InvalidParams(request.id, "arguments must be an object");
  }
  auto it = server_.handlers_.find(params["name"].get<std::string>());
  if (it == server_.handlers_.end()) return InvalidParams(request.id, "unknown tool");
  handler = &it->second;
  return std::nullopt;
}

void ServerSession::RunCall(Message& request, const std::shared_ptr<MessageSink>& related,
                            const std::shared_ptr<ToolContext>& context) {
  std::optional<Message> response;
  if (ServerHooks* hooks = server_.hooks_) response = hooks->BeforeRequest(request, *related);
  ToolHandler* handler = nullptr;
  if (!response) response = PrepareCall(request, handler);
  if (!response) {
    const json::Value no_arguments = json::Value::object();
    const json::Value& arguments =
        request.params.contains("arguments") ? request.params["arguments"] : no_arguments;
    ToolOutcome outcome = (*handler)(arguments, *context);
    response = outcome.error ? MakeError(request.id, outcome.error->code,
                                         outcome.error->message, outcome.error->data)
                             : MakeResult(request.id, std::move(outcome.result));
  }
  {
    std::lock_guard lock(mutex_);
    in_flight_.erase(IdKey(request.id));
  }
  // A cancelled request is never answered.
  if (context->cancelled()) return;
  Finish(request, std::move(*response), related);
}

}  // namespace udon::mcp
