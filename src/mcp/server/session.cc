// One client's session on the server framework: request routing for both eras
// (initialize, server/discover, tools/list, tools/call, subscriptions/listen, ping,
// notifications), cancellation and the context each call runs in.
#include "mcp/server/server.h"

#include <exception>
#include <utility>

#include "mcp/server/internal/server_common.h"

namespace udon::mcp {
namespace {

// A record's name for a client: `prefix`, then the name it declared in clientInfo when it
// gave one, kept to printable ASCII and 64 bytes (it is the client's own text).
std::string ClientLabel(const std::string& prefix, const json::Value& client_info) {
  if (!client_info.is_object() || !client_info.contains("name") || !client_info["name"].is_string()) return prefix;
  std::string name;
  for (char c : client_info["name"].get<std::string>()) {
    if (name.size() == 64) break;
    if (c >= 0x20 && c < 0x7f) name.push_back(c);
  }
  return name.empty() ? prefix : prefix + " " + name;
}

std::string IdKey(const json::Value& id) { return id.dump(); }

}  // namespace

using internal::Contains;
using internal::InvalidParams;
using internal::kListenPoll;
using internal::RequestMeta;
using internal::UnsupportedVersion;
using internal::VersionList;

ServerSession::ServerSession(Server& server, std::shared_ptr<MessageSink> standalone)
    : server_(server), standalone_(std::move(standalone)), session_number_(server.NextSessionNumber()) {}

std::string ServerSession::protocol_version() const {
  std::lock_guard lock(mutex_);
  return protocol_version_;
}

void ServerSession::SetOrigin(std::string network_transport, std::string session_id) {
  std::lock_guard lock(mutex_);
  network_transport_ = std::move(network_transport);
  session_id_ = std::move(session_id);
}

void ServerSession::Handle(Message message, std::shared_ptr<MessageSink> related,
                           const WorkRunner& runner, HandleOptions options) {
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
  const Era era = options.modern && server_.ServesModern() ? Era::kModern : server_.RequestEra(message);
  if (era == Era::kModern) {
    if (auto rejected = ValidateModernRequest(server_, message)) {
      Finish(message, std::move(*rejected), related, era);
      return;
    }
  }
  const bool listen = era == Era::kModern && message.method == kListenMethod;
  if (message.method != "tools/call" && !listen) {
    if (hooks != nullptr) {
      if (auto answer = hooks->BeforeRequest(message, *related)) {
        Finish(message, std::move(*answer), related, era);
        return;
      }
    }
    Finish(message, Dispatch(message, era, options.caller.get()), related, era);
    return;
  }
  auto context = NewContext(message, era, related);
  context->caller_ = options.caller;
  {
    std::lock_guard lock(mutex_);
    if (!in_flight_.emplace(IdKey(message.id), context).second) {
      Finish(message, MakeError(message.id, kInvalidRequest, "request id already in use"),
             related, era);
      return;
    }
  }
  std::function<void()> work;
  if (listen) {
    work = [this, request = std::move(message), related, context] {
      RunListen(request, related, context);
    };
  } else {
    work = [this, request = std::move(message), related, context]() mutable {
      RunCall(request, related, context);
    };
  }
  if (runner) {
    runner(std::move(work));
  } else {
    work();
  }
}

void ServerSession::CancelAll() {
  std::lock_guard lock(mutex_);
  for (auto& [id, context] : in_flight_) context->Cancel();
}

std::shared_ptr<ToolContext> ServerSession::NewContext(const Message& request, Era era,
                                                       const std::shared_ptr<MessageSink>& related) {
  const json::Value* token = internal::ProgressToken(request);
  const json::Value* meta = RequestMeta(request);
  auto context = std::make_shared<ToolContext>(related, token != nullptr ? *token : json::Value());
  context->era_ = era;
  if (meta != nullptr) {
    for (auto [name, field] : {std::pair{"traceparent", &TraceContext::traceparent},
                               std::pair{"tracestate", &TraceContext::tracestate}}) {
      if (auto it = meta->find(name); it != meta->end() && it->is_string()) context->trace_.*field = it->get<std::string>();
    }
    if (auto it = meta->find(meta::kProtocolVersion); era == Era::kModern && it != meta->end() && it->is_string()) {
      context->protocol_version_ = it->get<std::string>();
    }
  }
  if (request.params.is_object()) {
    if (auto it = request.params.find("inputResponses"); it != request.params.end() && it->is_object()) {
      context->input_responses_ = *it;
    }
    if (auto it = request.params.find("requestState"); it != request.params.end() && it->is_string()) {
      context->request_state_ = it->get<std::string>();
    }
  }
  {
    std::lock_guard lock(mutex_);
    context->network_transport_ = network_transport_;
    context->session_id_ = session_id_;
  }
  if (era == Era::kModern) {
    context->client_capabilities_ = meta->at(std::string(meta::kClientCapabilities));
    auto level = meta->find(meta::kLogLevel);
    context->min_log_severity_ =
        level == meta->end() ? -1 : LogSeverity(level->get<std::string>());
    Server* server = &server_;
    context->tools_list_changed_ = [server] { server->NotifyToolsListChanged(); };
    auto info = meta->find(meta::kClientInfo);
    context->client_label_ = ClientLabel("stateless", info == meta->end() ? json::Value() : *info);
  } else {
    {
      std::lock_guard lock(mutex_);
      context->client_capabilities_ = client_capabilities_;
      context->client_label_ = client_label_.empty() ? "session-" + std::to_string(session_number_) : client_label_;
      context->protocol_version_ = protocol_version_;
    }
    context->tools_list_changed_ = [standalone = standalone_] {
      standalone->Send(MakeNotification(std::string(kToolsListChangedNotification)));
    };
  }
  return context;
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
                           const std::shared_ptr<MessageSink>& related, Era era) {
  ServerHooks* hooks = server_.hooks_;
  if (era == Era::kModern) StampModernResult(server_, response);
  if (hooks != nullptr) hooks->AfterRequest(request, response, *related);
  // Again: a hook may have replaced the whole result.
  if (era == Era::kModern) StampModernResult(server_, response);
  related->Send(response);
  if (hooks != nullptr) hooks->AfterResponse(request, *this);
}

Message ServerSession::Dispatch(const Message& request, Era era, const Caller* caller) {
  if (!request.params.is_null() && !request.params.is_object()) {
    return InvalidParams(request.id, "params must be an object");
  }
  if (era == Era::kModern) return DispatchModern(request, caller);
  if (request.method == "initialize") return Initialize(request);
  if (request.method == "ping") return MakeResult(request.id, json::Value::object());
  if (request.method == "tools/list") return ListTools(request, era, caller);
  if (request.method == "logging/setLevel" && server_.options_.logging) {
    return MakeResult(request.id, json::Value::object());
  }
  return MakeError(request.id, kMethodNotFound, "method not found");
}

Message ServerSession::DispatchModern(const Message& request, const Caller* caller) {
  if (request.method == kDiscoverMethod) return Discover(request);
  if (request.method == "tools/list") return ListTools(request, Era::kModern, caller);
  if (server_.options_.empty_prompts_and_resources) {
    if (request.method == "prompts/list") return EmptyList(request, "prompts");
    if (request.method == "resources/list") return EmptyList(request, "resources");
    if (request.method == "resources/templates/list") return EmptyList(request, "resourceTemplates");
    if (request.method == "resources/read") {
      // There are no resources: every URI is unknown (-32602 since 2026-07-28, with the URI).
      if (!request.params.contains("uri") || !request.params["uri"].is_string()) {
        return InvalidParams(request.id, "resources/read needs a uri");
      }
      return MakeError(request.id, kInvalidParams, "resource not found", {{"uri", request.params["uri"]}});
    }
  }
  return MakeError(request.id, kMethodNotFound, "method not found");
}

Message ServerSession::Initialize(const Message& request) {
  const json::Value& params = request.params;
  if (!server_.ServesLegacy()) {
    // A modern-only server: name what it speaks, the only diagnostic a legacy client shows.
    std::string supported;
    for (const auto& version : server_.options_.versions) {
      supported += (supported.empty() ? "" : ", ") + version;
    }
    const std::string requested = params.is_object() && params.contains("protocolVersion") &&
                                          params["protocolVersion"].is_string()
                                      ? params["protocolVersion"].get<std::string>()
                                      : std::string();
    return UnsupportedVersion(server_, request.id, requested,
                              "initialize is not supported; protocol versions supported: " + supported);
  }
  if (!params.is_object() || !params.contains("protocolVersion") ||
      !params["protocolVersion"].is_string() || !params.contains("clientInfo") ||
      !params["clientInfo"].is_object()) {
    return InvalidParams(request.id, "initialize needs protocolVersion and clientInfo");
  }
  const std::string requested = params["protocolVersion"].get<std::string>();
  std::string version = std::string(kLatestLegacyProtocolVersion);
  if (IsLegacyProtocolVersion(requested) && Contains(server_.options_.versions, requested)) {
    version = requested;
  } else if (!Contains(server_.options_.versions, version)) {
    for (const auto& candidate : server_.options_.versions) {
      if (IsLegacyProtocolVersion(candidate)) {
        version = candidate;
        break;
      }
    }
  }
  {
    std::lock_guard lock(mutex_);
    protocol_version_ = version;
    if (params.contains("capabilities") && params["capabilities"].is_object()) {
      client_capabilities_ = params["capabilities"];
    }
    client_label_ = ClientLabel("session-" + std::to_string(session_number_), params["clientInfo"]);
  }
  server_.AddLegacySession(standalone_);
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

Message ServerSession::Discover(const Message& request) {
  json::Value capabilities = {{"tools", {{"listChanged", true}}}};
  if (server_.options_.logging) capabilities["logging"] = json::Value::object();
  if (server_.options_.empty_prompts_and_resources) {
    capabilities["prompts"] = json::Value::object();
    capabilities["resources"] = json::Value::object();
  }
  json::Value result = {{"supportedVersions", VersionList(server_.options_.versions)},
                        {"capabilities", std::move(capabilities)},
                        {"ttlMs", server_.options_.ttl_ms},
                        {"cacheScope", CacheScopeName(server_.options_.cache_scope)}};
  if (!server_.options_.instructions.empty()) {
    result["instructions"] = server_.options_.instructions;
  }
  return MakeResult(request.id, std::move(result));
}

Message ServerSession::EmptyList(const Message& request, const char* member) {
  return MakeResult(request.id, {{member, json::Value::array()},
                                 {"ttlMs", server_.options_.ttl_ms},
                                 {"cacheScope", CacheScopeName(server_.options_.cache_scope)}});
}

Message ServerSession::ListTools(const Message& request, Era era, const Caller* caller) {
  std::size_t offset = 0;
  if (request.params.is_object() && request.params.contains("cursor")) {
    const json::Value& cursor = request.params["cursor"];
    std::optional<std::size_t> decoded;
    if (cursor.is_string()) decoded = Server::DecodeCursor(cursor.get<std::string>());
    if (!decoded) return InvalidParams(request.id, "invalid cursor");
    offset = *decoded;
  }
  std::optional<Server::ListedPage> listed = server_.ListedTools(offset, server_.options_.page_size, caller);
  if (!listed) return InvalidParams(request.id, "invalid cursor");
  const std::size_t end = offset + listed->tools->tools.size();
  json::Value result = {{"tools", json::Value::array()}};  // the stand-in for lean_tools
  if (end < listed->total) result["nextCursor"] = Server::EncodeCursor(end);
  if (era == Era::kModern) {
    result["ttlMs"] = server_.options_.ttl_ms;
    result["cacheScope"] = CacheScopeName(server_.options_.cache_scope);
  }
  Message response = MakeResult(request.id, std::move(result));
  response.lean_tools = std::move(listed->tools);
  return response;
}

std::optional<Message> ServerSession::PrepareCall(const Message& request, ToolHandler& handler) {
  const json::Value& params = request.params;
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    return InvalidParams(request.id, "tools/call needs a tool name");
  }
  if (params.contains("arguments") && !params["arguments"].is_object()) {
    return InvalidParams(request.id, "arguments must be an object");
  }
  auto found = server_.FindHandler(params["name"].get<std::string>());
  if (!found) return InvalidParams(request.id, "unknown tool");
  handler = std::move(*found);
  return std::nullopt;
}

void ServerSession::RunCall(Message& request, const std::shared_ptr<MessageSink>& related,
                            const std::shared_ptr<ToolContext>& context) {
  std::optional<Message> response;
  if (ServerHooks* hooks = server_.hooks_) response = hooks->BeforeRequest(request, *related);
  ToolHandler handler;
  if (!response) response = PrepareCall(request, handler);
  if (!response) {
    const json::Value no_arguments = json::Value::object();
    const json::Value& arguments =
        request.params.contains("arguments") ? request.params["arguments"] : no_arguments;
    try {
      ToolOutcome outcome = handler(arguments, *context);
      response = outcome.error ? MakeError(request.id, outcome.error->code,
                                           outcome.error->message, outcome.error->data)
                               : MakeResult(request.id, std::move(outcome.result));
    } catch (const std::exception&) {
      // A handler tripped over input it did not expect: an answer, never a dead server.
      response = MakeError(request.id, kInternalError, "internal error");
    }
  }
  {
    std::lock_guard lock(mutex_);
    in_flight_.erase(IdKey(request.id));
  }
  // A cancelled request is never answered.
  if (context->cancelled()) return;
  Finish(request, std::move(*response), related, context->era());
}

// A listen stream: the acknowledgment first, then the opted-in notifications (delivered by
// Server::NotifyToolsListChanged) until the client cancels it, the transport goes away, a
// hook drops it, or the server closes it with the graceful closure response.
void ServerSession::RunListen(const Message& request, const std::shared_ptr<MessageSink>& related,
                              const std::shared_ptr<ToolContext>& context) {
  auto done = [&] {
    std::lock_guard lock(mutex_);
    in_flight_.erase(IdKey(request.id));
  };
  const json::Value* filter = request.params.contains("notifications")
                                  ? &request.params["notifications"]
                                  : nullptr;
  if (filter == nullptr || !filter->is_object()) {
    done();
    Finish(request, InvalidParams(request.id, "subscriptions/listen needs a notifications object"),
           related, Era::kModern);
    return;
  }
  const auto asks_for = [](const json::Value& notifications, const char* type) {
    auto it = notifications.find(type);
    return it != notifications.end() && it->is_boolean() && it->get<bool>();
  };
  json::Value honored = json::Value::object();
  if (asks_for(*filter, "toolsListChanged")) honored["toolsListChanged"] = true;
  ServerHooks* hooks = server_.hooks_;
  if (hooks != nullptr) hooks->TransformAcknowledgment(honored);
  const json::Value tag = {{std::string(meta::kSubscriptionId), request.id}};
  auto subscription = std::make_shared<Server::Subscription>();
  subscription->id = request.id;
  subscription->sink = related;
  subscription->context = context;
  subscription->tools = honored.is_object() && asks_for(honored, "toolsListChanged");
  const bool dropped = hooks != nullptr && hooks->DropSubscription(request);
  bool graceful = false;
  {
    // Registered before the acknowledgment goes out, so that a change the client causes
    // once it has seen the acknowledgment reaches it; delivery waits for this lock, so
    // nothing precedes the acknowledgment.
    std::lock_guard lock(subscription->mutex);
    if (!dropped) graceful = !server_.Subscribe(subscription);
    related->Send(MakeNotification(std::string(kAcknowledgedNotification),
                                   {{"_meta", tag}, {"notifications", honored}}));
  }
  if (dropped) {
    done();  // dropped at once: no notification, no response
    return;
  }
  auto quiet_since = std::chrono::steady_clock::now();
  while (!graceful) {
    if (!context->SleepFor(kListenPoll)) break;  // cancelled: no response
    if (server_.closing()) {
      graceful = true;
      break;
    }
    if (hooks != nullptr && hooks->DropSubscription(request)) break;
    if (!related->Open()) break;
    if (std::chrono::steady_clock::now() - quiet_since > server_.options_.listen_keep_alive) {
      related->KeepAlive();
      quiet_since = std::chrono::steady_clock::now();
    }
  }
  subscription->End();
  done();
  if (graceful && !context->cancelled()) {
    Finish(request, MakeResult(request.id, {{"resultType", "complete"}, {"_meta", tag}}), related,
           Era::kModern);
  }
  server_.Unsubscribe(subscription);
}

}  // namespace udon::mcp