#include "mcp/client/transport.h"

#include <utility>

namespace udon::mcp {

Result<Message> ParseFrame(std::string_view frame, std::size_t max_message_bytes, const TransportCallbacks& callbacks,
                           json::ElementsMemo* memo) {
  return ParseFrame(frame, max_message_bytes, callbacks.lean_tool_lists && callbacks.lean_tool_lists(), memo);
}

Result<Message> ParseFrame(std::string_view frame, std::size_t max_message_bytes, bool lean_tool_list,
                           json::ElementsMemo* memo) {
  MessageLimits limits;
  limits.max_bytes = max_message_bytes;
  auto parsed = ParseMessage(frame, limits, lean_tool_list, memo);
  if (parsed.ok()) return parsed;
  const std::string cause = parsed.error().code;
  Error error = cause == "rpc.too_large"
                    ? udon::MakeError("mcp.message_too_large", "a message exceeds the size limit")
                    : udon::MakeError("mcp.malformed_message", "the server sent an invalid message");
  error.details["cause"] = cause;
  return error;
}

const char* NotificationStreamName(NotificationStream state) {
  switch (state) {
    case NotificationStream::kNone: return "none";
    case NotificationStream::kPending: return "pending";
    case NotificationStream::kEstablished: return "established";
    case NotificationStream::kDeclined: return "declined";
    case NotificationStream::kFailed: return "failed";
  }
  return "none";
}

}  // namespace udon::mcp
