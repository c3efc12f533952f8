// JSON-RPC 2.0 messages as MCP uses them: one message per frame (batches were removed in
// 2025-06-18), ids are integers or strings, never null. Shared by client and server.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"

namespace udon::mcp {

// Standard JSON-RPC error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// 16 MiB: the contract's default maxMessageBytes.
inline constexpr std::size_t kDefaultMaxMessageBytes = 16u * 1024u * 1024u;

enum class MessageKind { kRequest, kNotification, kResult, kError };

// A tools/list page whose Tool objects are bytes, not values: read lean (ParseMessage with
// lean_tool_list: checked like every other byte of the frame, not built), or served from
// Tools serialized once (Server). The message's result["tools"] is then an empty stand-in.
struct LeanToolList {
  // What `frame` holds: the whole message read (kMessage), or the tools array itself, as
  // compact single-line JSON (kToolsArray, a sender's page).
  enum class Frame { kMessage, kToolsArray };
  std::string frame;
  std::vector<json::RawElement> tools;  // result.tools, in order
  std::size_t max_depth = json::kDefaultMaxDepth;
  Frame holds = Frame::kMessage;
  std::string_view Bytes(const json::RawElement& tool) const {
    return std::string_view(frame).substr(tool.begin, tool.end - tool.begin);
  }
};

struct Message {
  MessageKind kind = MessageKind::kNotification;
  json::Value id;       // requests and responses: integer or string
  std::string method;   // requests and notifications
  json::Value params;   // null when absent
  json::Value result;   // kResult (with lean_tools: "tools" an empty stand-in)
  json::Value error;    // kError: {code, message, data?}
  std::shared_ptr<const LeanToolList> lean_tools;  // kResult read lean; else null

  bool IsResponse() const { return kind == MessageKind::kResult || kind == MessageKind::kError; }
};

struct MessageLimits {
  std::size_t max_bytes = kDefaultMaxMessageBytes;
  std::size_t max_depth = json::kDefaultMaxDepth;
};

// Strict parse of one frame. Error codes: rpc.too_large, rpc.malformed (not JSON, or the
// JSON parser's reason in details.jsonCode), rpc.batch (an array), rpc.invalid (not a valid
// JSON-RPC 2.0 message). Messages never quote the frame's content.
// `lean_tool_list`: a result with a tools array keeps its elements as bytes (lean_tools);
// the verdict on the frame is the same either way. `memo` (lean only, optional): the reader's
// last tools array, which identical bytes need not be checked against again (ElementsMemo).
Result<Message> ParseMessage(std::string_view frame, const MessageLimits& limits = {}, bool lean_tool_list = false,
                             json::ElementsMemo* memo = nullptr);

// Builds the Tool objects a lean read left as bytes: result["tools"] whole again, and
// lean_tools null. A no-op for a message read whole.
void CompleteLeanResult(Message& message);

// A value as a message carries it: compact single-line JSON, invalid UTF-8 replaced.
std::string SerializeValue(const json::Value& value);

// Compact single-line JSON (no raw newline can appear: strings are escaped). A page of
// serialized Tools (LeanToolList::Frame::kToolsArray) is written as it is, not rebuilt.
std::string SerializeMessage(const Message& message);

Message MakeRequest(json::Value id, std::string method, json::Value params = nullptr);
Message MakeNotification(std::string method, json::Value params = nullptr);
Message MakeResult(json::Value id, json::Value result);
Message MakeError(json::Value id, int code, std::string message, json::Value data = nullptr);

}  // namespace udon::mcp
