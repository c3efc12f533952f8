// The server framework's core (both protocol eras): what the server serves, the context a
// tool handler runs in, sessions' creation and the tool-list notifications and listen
// streams. A session's request routing is in session.cc, the tool registry and its
// serialized pages in tool_registry.cc.
#include "mcp/server/server.h"

#include <utility>

#include "mcp/server/internal/server_common.h"

namespace udon::mcp {

using internal::Contains;
using internal::InvalidParams;
using internal::IsModernOnlyMethod;
using internal::kCloseWait;
using internal::RequestMeta;
using internal::UnsupportedVersion;

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

Server::Server(ServerOptions options) : options_(std::move(options)) {}

Server::~Server() = default;

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

}  // namespace udon::mcp
