// Private to the server framework's sources (server.cc, session.cc, tool_registry.cc,
// http_legacy.cc):
// request helpers both the server and its sessions use, and one open listen stream.
#ifndef UDON_MCP_SERVER_INTERNAL_SERVER_COMMON_H_
#define UDON_MCP_SERVER_INTERNAL_SERVER_COMMON_H_

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcp/server/server.h"

namespace udon::mcp {
namespace internal {

inline Message InvalidParams(const json::Value& id, std::string message) {
  return MakeError(id, kInvalidParams, std::move(message));
}

// How often an open listen stream looks at cancellation, shutdown and its transport, and
// how long it may stay silent before a keep-alive. The keep-alive is also how an HTTP
// stream learns that its client went away (a write fails), so it is short: every
// abandoned stream holds a server thread until then.
inline constexpr auto kListenPoll = std::chrono::milliseconds(100);
inline constexpr auto kCloseWait = std::chrono::seconds(3);

inline const json::Value* RequestMeta(const Message& request) {
  if (!request.params.is_object()) return nullptr;
  auto it = request.params.find("_meta");
  if (it == request.params.end() || !it->is_object()) return nullptr;
  return &*it;
}

// The request's progress token (params._meta.progressToken, a string or an integer), or
// null: progress is reported only under one.
inline const json::Value* ProgressToken(const Message& request) {
  const json::Value* meta = RequestMeta(request);
  if (meta == nullptr) return nullptr;
  auto it = meta->find("progressToken");
  if (it == meta->end() || !(it->is_string() || it->is_number_integer())) return nullptr;
  return &*it;
}

inline bool IsModernOnlyMethod(std::string_view method) {
  return method == kDiscoverMethod || method == kListenMethod;
}

inline bool Contains(const std::vector<std::string>& versions, std::string_view version) {
  return std::find(versions.begin(), versions.end(), version) != versions.end();
}

inline json::Value VersionList(const std::vector<std::string>& versions) {
  json::Value list = json::Value::array();
  for (const auto& version : versions) list.push_back(version);
  return list;
}

inline Message UnsupportedVersion(const Server& server, const json::Value& id, const std::string& requested,
                           std::string message) {
  return MakeError(id, rpc_code::kUnsupportedProtocolVersion, std::move(message),
                   {{"supported", VersionList(server.options().versions)}, {"requested", requested}});
}

}  // namespace internal

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

}  // namespace udon::mcp

#endif  // UDON_MCP_SERVER_INTERNAL_SERVER_COMMON_H_
