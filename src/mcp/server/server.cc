#include "mcp/server/server.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <exception>
#include <utility>

namespace udon::mcp {
namespace {

// A page's Tools written into one JSON array from their texts, with where each one is.
class ToolsArrayWriter {
 public:
  ToolsArrayWriter() {
    list_.holds = LeanToolList::Frame::kToolsArray;
    list_.frame = "[";
  }
  void Add(const json::Value& tool, std::string_view text) {
    if (!list_.tools.empty()) list_.frame += ',';
    json::RawElement& element = list_.tools.emplace_back();
    element.is_object = tool.is_object();
    element.begin = list_.frame.size();
    list_.frame += text;
    element.end = list_.frame.size();
    if (element.is_object) {
      auto name = tool.find("name");
      if (name != tool.end() && name->is_string()) element.name = name->get<std::string>();
    }
  }
  std::shared_ptr<const LeanToolList> Finish() {
    list_.frame += ']';
    return std::make_shared<const LeanToolList>(std::move(list_));
  }

 private:
  LeanToolList list_;
};

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

Message InvalidParams(const json::Value& id, std::string message) {
  return MakeError(id, kInvalidParams, std::move(message));
}

// How often an open listen stream looks at cancellation, shutdown and its transport, and
// how long it may stay silent before a keep-alive. The keep-alive is also how an HTTP
// stream learns that its client went away (a write fails), so it is short: every
// abandoned stream holds a server thread until then.
constexpr auto kListenPoll = std::chrono::milliseconds(100);
constexpr auto kCloseWait = std::chrono::seconds(3);

const json::Value* RequestMeta(const Message& request) {
  if (!request.params.is_object()) return nullptr;
  auto it = request.params.find("_meta");
  if (it == request.params.end() || !it->is_object()) return nullptr;
  return &*it;
}

bool IsModernOnlyMethod(std::string_view method) {
  return method == kDiscoverMethod || method == kListenMethod;
}

bool Contains(const std::vector<std::string>& versions, std::string_view version) {
  return std::find(versions.begin(), versions.end(), version) != versions.end();
}

json::Value VersionList(const std::vector<std::string>& versions) {
  json::Value list = json::Value::array();
  for (const auto& version : versions) list.push_back(version);
  return list;
}

Message UnsupportedVersion(const Server& server, const json::Value& id, const std::string& requested,
                           std::string message) {
  return MakeError(id, rpc_code::kUnsupportedProtocolVersion, std::move(message),
                   {{"supported", VersionList(server.options().versions)}, {"requested", requested}});
}

}  // namespace

int LogSeverity(std::string_view level) {
  static constexpr std::array<std::string_view, 8> kLevels = {
      "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};
  for (std::size_t i = 0; i < kLevels.size(); ++i) {
    if (kLevels[i] == level) return static_cast<int>(i);
  }
  return -1;
}

const char* CacheScopeName(CacheScope scope) {
  return scope == CacheScope::kPrivate ? "private" : "public";
}

std::optional<Message> ValidateModernRequest(const Server& server, const Message& request) {
  const json::Value* meta = RequestMeta(request);
  if (meta == nullptr) return InvalidParams(request.id, "params._meta is required");
  auto version = meta->find(meta::kProtocolVersion);
  if (version == meta->end() || !version->is_string()) {
    return InvalidParams(request.id, "_meta needs a protocolVersion string");
  }
  auto capabilities = meta->find(meta::kClientCapabilities);
  if (capabilities == meta->end() || !capabilities->is_object()) {
    return InvalidParams(request.id, "_meta needs a clientCapabilities object");
  }
  if (auto level = meta->find(meta::kLogLevel);
      level != meta->end() && (!level->is_string() || LogSeverity(level->get<std::string>()) < 0)) {
    return InvalidParams(request.id, "_meta logLevel is not a logging level");
  }
  const std::string requested = version->get<std::string>();
  if (!IsModernProtocolVersion(requested) || !Contains(server.options().versions, requested)) {
    return UnsupportedVersion(server, request.id, requested, "Unsupported protocol version");
  }
  return std::nullopt;
}

void StampModernResult(const Server& server, Message& response) {
  if (response.kind != MessageKind::kResult || !response.result.is_object()) return;
  json::Value& result = response.result;
  if (!result.contains("resultType")) result["resultType"] = "complete";
  if (!result.contains("_meta") || !result["_meta"].is_object()) result["_meta"] = json::Value::object();
  json::Value& meta = result["_meta"];
  if (!meta.contains(meta::kServerInfo)) meta[std::string(meta::kServerInfo)] = server.options().server_info;
}

ToolContext::ToolContext(std::shared_ptr<MessageSink> related, json::Value progress_token)
    : related_(std::move(related)), progress_token_(std::move(progress_token)) {}

bool ToolContext::HasClientCapability(std::string_view name) const {
  return client_capabilities_.is_object() && client_capabilities_.contains(name);
}

void ToolContext::ToolsListChanged() {
  if (tools_list_changed_) tools_list_changed_();
}

bool ToolContext::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

bool ToolContext::SleepFor(std::chrono::milliseconds duration) const {
  std::unique_lock lock(mutex_);
  cancelled_cv_.wait_for(lock, duration, [this] { return cancelled_ || woken_; });
  return !cancelled_;
}

void ToolContext::Wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  cancelled_cv_.notify_all();
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
  if (era_ == Era::kModern && (min_log_severity_ < 0 || LogSeverity(level) < min_log_severity_)) {
    return;
  }
  related_->Send(MakeNotification("notifications/message",
                                  {{"level", level}, {"data", std::move(data)}}));
}

// One open subscriptions/listen stream.
struct Server::Subscription {
  json::Value id;
  std::shared_ptr<MessageSink> sink;
  std::shared_ptr<ToolContext> context;  // cancelled: deliver nothing more
  bool tools = false;
  std::mutex mutex;  // a delivery and the end of the stream never interleave
  bool ended = false;

  void Deliver(const std::string& method) {
    std::lock_guard lock(mutex);
    if (ended || context->cancelled()) return;
    sink->Send(MakeNotification(method, {{"_meta", {{std::string(meta::kSubscriptionId), id}}}}));
  }
  void End() {
    std::lock_guard lock(mutex);
    ended = true;
  }
};

Server::Server(ServerOptions options) : options_(std::move(options)) {}

Server::~Server() = default;

void Server::AddTool(json::Value tool, ToolHandler handler) {
  std::string name = tool.at("name").get<std::string>();
  std::lock_guard lock(catalog_mutex_);
  first_listed_.emplace(name, tools_.size());  // a repeated name keeps its first listing
  tool_texts_.push_back(SerializeValue(tool));
  tools_.push_back(std::move(tool));
  handlers_[std::move(name)] = std::move(handler);
}

bool Server::UnlistTool(const std::string& name) {
  std::lock_guard lock(catalog_mutex_);
  if (first_listed_.count(name) == 0) return false;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < tools_.size(); ++i) {
    if (tools_[i].value("name", "") == name) continue;
    if (kept != i) {
      tools_[kept] = std::move(tools_[i]);
      tool_texts_[kept] = std::move(tool_texts_[i]);
    }
    ++kept;
  }
  tools_.resize(kept);
  tool_texts_.resize(kept);
  RebuildIndexLocked();
  return true;
}

void Server::SetTools(std::vector<std::pair<json::Value, ToolHandler>> tools) {
  std::lock_guard lock(catalog_mutex_);
  tools_.clear();
  tool_texts_.clear();
  handlers_.clear();
  for (auto& [tool, handler] : tools) {
    std::string name = tool.at("name").get<std::string>();
    tool_texts_.push_back(SerializeValue(tool));
    tools_.push_back(std::move(tool));
    handlers_[std::move(name)] = std::move(handler);
  }
  RebuildIndexLocked();
}

void Server::RebuildIndexLocked() {
  first_listed_.clear();
  for (std::size_t i = 0; i < tools_.size(); ++i) first_listed_.emplace(tools_[i].at("name").get<std::string>(), i);
}

bool Server::HasTool(const std::string& name) const {
  std::lock_guard lock(catalog_mutex_);
  return handlers_.count(name) != 0;
}

std::optional<ToolHandler> Server::FindHandler(const std::string& name) const {
  std::lock_guard lock(catalog_mutex_);
  auto it = handlers_.find(name);
  if (it == handlers_.end()) return std::nullopt;
  return it->second;
}

std::vector<json::Value> Server::ListedTools() const {
  std::vector<json::Value> tools;
  {
    std::lock_guard lock(catalog_mutex_);
    tools = tools_;
  }
  if (hooks_ != nullptr) hooks_->TransformTools(tools);
  return tools;
}

std::optional<Server::ListedPage> Server::ListedTools(std::size_t offset, std::size_t count) const {
  auto page_end = [&](std::size_t total) { return count == 0 ? total : std::min(total, offset + count); };
  ToolsArrayWriter writer;
  ListedPage page;
  if (hooks_ != nullptr && hooks_->TransformsTools()) {
    const std::vector<json::Value> tools = ListedTools();
    if (offset > tools.size()) return std::nullopt;
    for (std::size_t i = offset; i < page_end(tools.size()); ++i) writer.Add(tools[i], SerializeValue(tools[i]));
    page.total = tools.size();
  } else {
    std::lock_guard lock(catalog_mutex_);
    if (offset > tools_.size()) return std::nullopt;
    for (std::size_t i = offset; i < page_end(tools_.size()); ++i) writer.Add(tools_[i], tool_texts_[i]);
    page.total = tools_.size();
  }
  page.tools = writer.Finish();
  return page;
}

std::optional<json::Value> Server::ListedTool(const std::string& name) const {
  if (hooks_ != nullptr && hooks_->TransformsTools()) {
    // A hook may rename, remove or duplicate tools: only the transformed catalog knows.
    const std::vector<json::Value> tools = ListedTools();
    auto it = std::find_if(tools.begin(), tools.end(),
                           [&](const json::Value& tool) { return tool.value("name", "") == name; });
    if (it == tools.end()) return std::nullopt;
    return *it;
  }
  std::lock_guard lock(catalog_mutex_);
  auto it = first_listed_.find(name);
  if (it == first_listed_.end()) return std::nullopt;
  return tools_[it->second];
}

bool Server::ServesModern() const {
  return std::any_of(options_.versions.begin(), options_.versions.end(),
                     [](const std::string& v) { return IsModernProtocolVersion(v); });
}

bool Server::ServesLegacy() const {
  return std::any_of(options_.versions.begin(), options_.versions.end(),
                     [](const std::string& v) { return IsLegacyProtocolVersion(v); });
}

Era Server::RequestEra(const Message& request) const {
  if (!ServesModern()) return Era::kLegacy;
  if (IsModernOnlyMethod(request.method)) return Era::kModern;
  // A modern-only server serves everything statelessly, except initialize, which it refuses
  // in words a legacy client can show.
  if (!ServesLegacy()) return request.method == "initialize" ? Era::kLegacy : Era::kModern;
  const json::Value* meta = RequestMeta(request);
  if (meta == nullptr) return Era::kLegacy;
  auto version = meta->find(meta::kProtocolVersion);
  if (version == meta->end()) return Era::kLegacy;
  if (version->is_string() && IsLegacyProtocolVersion(version->get<std::string>())) {
    return Era::kLegacy;
  }
  return Era::kModern;
}

bool Server::ServesModernMethod(std::string_view method) const {
  if (method == kDiscoverMethod || method == kListenMethod || method == "tools/list" ||
      method == "tools/call") {
    return true;
  }
  return options_.empty_prompts_and_resources &&
         (method == "prompts/list" || method == "resources/list" ||
          method == "resources/templates/list" || method == "resources/read");
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

void Server::NotifyToolsListChanged() {
  std::vector<std::shared_ptr<Subscription>> open;
  {
    std::lock_guard lock(subscriptions_mutex_);
    open = subscriptions_;
  }
  for (const auto& subscription : open) {
    if (subscription->tools) subscription->Deliver(std::string(kToolsListChangedNotification));
  }
}

void Server::BroadcastToolsListChanged() {
  NotifyToolsListChanged();
  std::vector<std::shared_ptr<MessageSink>> sessions;
  {
    std::lock_guard lock(subscriptions_mutex_);
    auto gone = [](const std::weak_ptr<MessageSink>& sink) { return sink.expired(); };
    legacy_sessions_.erase(std::remove_if(legacy_sessions_.begin(), legacy_sessions_.end(), gone),
                           legacy_sessions_.end());
    for (const auto& weak : legacy_sessions_) {
      if (auto sink = weak.lock()) sessions.push_back(std::move(sink));
    }
  }
  for (const auto& sink : sessions) sink->Send(MakeNotification(std::string(kToolsListChangedNotification)));
}

void Server::AddLegacySession(const std::shared_ptr<MessageSink>& standalone) {
  std::lock_guard lock(subscriptions_mutex_);
  for (const auto& weak : legacy_sessions_) {
    if (weak.lock() == standalone) return;  // initialize again on the same session
  }
  legacy_sessions_.push_back(standalone);
}

std::size_t Server::NextSessionNumber() { return ++sessions_opened_; }

bool Server::Subscribe(const std::shared_ptr<Subscription>& subscription) {
  std::lock_guard lock(subscriptions_mutex_);
  if (closing_) return false;
  subscriptions_.push_back(subscription);
  return true;
}

void Server::Unsubscribe(const std::shared_ptr<Subscription>& subscription) {
  subscription->End();
  {
    std::lock_guard lock(subscriptions_mutex_);
    subscriptions_.erase(std::remove(subscriptions_.begin(), subscriptions_.end(), subscription),
                         subscriptions_.end());
  }
  subscriptions_cv_.notify_all();
}

bool Server::closing() const {
  std::lock_guard lock(subscriptions_mutex_);
  return closing_;
}

void Server::CloseSubscriptions() {
  std::unique_lock lock(subscriptions_mutex_);
  closing_ = true;
  // Each listen stream ends at once with its closure response, not at its next poll: a
  // stdio server exits on end of input only after this returns.
  for (const auto& subscription : subscriptions_) subscription->context->Wake();
  subscriptions_cv_.wait_for(lock, kCloseWait, [this] { return subscriptions_.empty(); });
}

std::size_t Server::open_subscriptions() const {
  std::lock_guard lock(subscriptions_mutex_);
  return subscriptions_.size();
}

ServerSession::ServerSession(Server& server, std::shared_ptr<MessageSink> standalone)
    : server_(server), standalone_(std::move(standalone)), session_number_(server.NextSessionNumber()) {}

std::string ServerSession::protocol_version() const {
  std::lock_guard lock(mutex_);
  return protocol_version_;
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
    Finish(message, Dispatch(message, era), related, era);
    return;
  }
  auto context = NewContext(message, era, related);
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
  json::Value token;
  const json::Value* meta = RequestMeta(request);
  if (meta != nullptr) {
    if (auto it = meta->find("progressToken");
        it != meta->end() && (it->is_string() || it->is_number_integer())) {
      token = *it;
    }
  }
  auto context = std::make_shared<ToolContext>(related, std::move(token));
  context->era_ = era;
  if (request.params.is_object()) {
    if (auto it = request.params.find("inputResponses"); it != request.params.end() && it->is_object()) {
      context->input_responses_ = *it;
    }
    if (auto it = request.params.find("requestState"); it != request.params.end() && it->is_string()) {
      context->request_state_ = it->get<std::string>();
    }
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

Message ServerSession::Dispatch(const Message& request, Era era) {
  if (!request.params.is_null() && !request.params.is_object()) {
    return InvalidParams(request.id, "params must be an object");
  }
  if (era == Era::kModern) return DispatchModern(request);
  if (request.method == "initialize") return Initialize(request);
  if (request.method == "ping") return MakeResult(request.id, json::Value::object());
  if (request.method == "tools/list") return ListTools(request, era);
  if (request.method == "logging/setLevel" && server_.options_.logging) {
    return MakeResult(request.id, json::Value::object());
  }
  return MakeError(request.id, kMethodNotFound, "method not found");
}

Message ServerSession::DispatchModern(const Message& request) {
  if (request.method == kDiscoverMethod) return Discover(request);
  if (request.method == "tools/list") return ListTools(request, Era::kModern);
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

Message ServerSession::ListTools(const Message& request, Era era) {
  std::size_t offset = 0;
  if (request.params.is_object() && request.params.contains("cursor")) {
    const json::Value& cursor = request.params["cursor"];
    std::optional<std::size_t> decoded;
    if (cursor.is_string()) decoded = Server::DecodeCursor(cursor.get<std::string>());
    if (!decoded) return InvalidParams(request.id, "invalid cursor");
    offset = *decoded;
  }
  std::optional<Server::ListedPage> listed = server_.ListedTools(offset, server_.options_.page_size);
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
