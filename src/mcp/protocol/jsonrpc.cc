#include "mcp/protocol/jsonrpc.h"

#include <memory>
#include <string>
#include <utility>

#include "json/pointer.h"

namespace udon::mcp {
namespace {

Error Invalid(const char* message, std::string pointer = {}) {
  return udon::MakeError("rpc.invalid", message, std::move(pointer));
}

bool IsValidId(const json::Value& id) { return id.is_string() || id.is_number_integer(); }

// A whole parse in the shape of a partial one that left nothing out.
Result<json::PartialValue> AsPartial(Result<json::Value> parsed) {
  if (!parsed.ok()) return std::move(parsed).error();
  return json::PartialValue{std::move(parsed).value(), false, {}};
}

// A result object whose "tools" member is the page's serialized array, written as it is.
void AppendResultWithToolsArray(std::string& out, const json::Value& result, std::string_view tools) {
  out += '{';
  bool first = true;
  for (auto it = result.begin(); it != result.end(); ++it) {
    if (!first) out += ',';
    first = false;
    out += SerializeValue(json::Value(it.key()));
    out += ':';
    if (it.key() == "tools") {
      out += tools;
    } else {
      out += SerializeValue(it.value());
    }
  }
  out += '}';
}

}  // namespace

Result<Message> ParseMessage(std::string_view frame, const MessageLimits& limits, bool lean_tool_list,
                             json::ElementsMemo* memo) {
  if (frame.size() > limits.max_bytes) {
    return udon::MakeError("rpc.too_large", "message exceeds the size limit");
  }
  json::ParseOptions options;
  options.max_depth = limits.max_depth;
  Result<json::PartialValue> parsed = lean_tool_list ? json::ParseLeavingElements(frame, options, "result", "tools", memo)
                                                     : AsPartial(json::Parse(frame, options));
  if (!parsed.ok()) {
    Error error = parsed.error().WithCode("rpc.malformed");
    error.details["jsonCode"] = parsed.error().code;
    return error;
  }
  json::Value& value = parsed->value;
  if (value.is_array()) return udon::MakeError("rpc.batch", "JSON-RPC batches are not supported");
  if (!value.is_object()) return Invalid("a JSON-RPC message must be an object");
  for (const auto& [name, member] : value.items()) {
    if (name != "jsonrpc" && name != "id" && name != "method" && name != "params" &&
        name != "result" && name != "error") {
      return Invalid("unknown member in a JSON-RPC message", "/" + json::Pointer::EscapeToken(name));
    }
  }
  auto version = value.find("jsonrpc");
  if (version == value.end() || *version != "2.0") return Invalid("jsonrpc must be \"2.0\"", "/jsonrpc");

  Message message;
  const bool has_id = value.contains("id");
  if (has_id) {
    message.id = value["id"];
    if (!IsValidId(message.id)) return Invalid("id must be an integer or a string", "/id");
  }
  auto method = value.find("method");
  if (method != value.end()) {
    if (!method->is_string()) return Invalid("method must be a string", "/method");
    if (value.contains("result") || value.contains("error")) {
      return Invalid("a request cannot carry result or error");
    }
    message.method = method->get<std::string>();
    if (auto params = value.find("params"); params != value.end()) {
      if (!params->is_object() && !params->is_array()) {
        return Invalid("params must be an object or an array", "/params");
      }
      message.params = std::move(*params);
    }
    message.kind = has_id ? MessageKind::kRequest : MessageKind::kNotification;
    return message;
  }
  if (value.contains("params")) return Invalid("a response cannot carry params", "/params");
  const bool has_result = value.contains("result");
  const bool has_error = value.contains("error");
  if (has_result == has_error) return Invalid("a response needs exactly one of result and error");
  if (has_result) {
    if (!has_id) return Invalid("a result needs an id");
    message.kind = MessageKind::kResult;
    message.result = std::move(value["result"]);
    if (parsed->found) {
      message.lean_tools = std::make_shared<const LeanToolList>(
          LeanToolList{std::string(frame), std::move(parsed->elements), limits.max_depth});
    }
    return message;
  }
  const json::Value& error = value["error"];
  if (!error.is_object() || !error.contains("code") || !error["code"].is_number_integer() ||
      !error.contains("message") || !error["message"].is_string()) {
    return Invalid("error must be an object with an integer code and a string message", "/error");
  }
  message.kind = MessageKind::kError;
  message.error = error;
  return message;
}

std::string SerializeValue(const json::Value& value) {
  return value.dump(-1, ' ', false, json::Value::error_handler_t::replace);
}

void CompleteLeanResult(Message& message) {
  if (!message.lean_tools) return;
  json::ParseOptions options;
  options.max_depth = message.lean_tools->max_depth;
  // A frame read passed the same strict parse; a sender's page was written from values.
  auto whole = json::Parse(message.lean_tools->frame, options);
  if (whole.ok()) {
    const bool is_array = message.lean_tools->holds == LeanToolList::Frame::kToolsArray;
    message.result["tools"] = is_array ? std::move(*whole) : std::move((*whole)["result"]["tools"]);
  }
  message.lean_tools.reset();
}

std::string SerializeMessage(const Message& message) {
  // A page read lean keeps the frame it came in, whose spacing may include newlines: its
  // Tools are built again and written compact (a rare path: udon never forwards pages read).
  if (message.lean_tools && message.lean_tools->holds == LeanToolList::Frame::kMessage) {
    Message whole = message;
    CompleteLeanResult(whole);
    return SerializeMessage(whole);
  }
  // Written member by member, never by copying params or result into an envelope value (a
  // tools/list page is a deep copy of a hundred Tools). Members in sorted order, as a JSON
  // object value would write them. Invalid UTF-8 cannot reach here through ParseMessage;
  // replace defensively anyway so a frame is always valid JSON.
  std::string out = "{";
  auto member = [&out](const char* name, const json::Value& value) {
    if (out.size() > 1) out += ',';
    out += '"';
    out += name;
    out += "\":";
    out += SerializeValue(value);
  };
  const json::Value version = "2.0";
  switch (message.kind) {
    case MessageKind::kRequest:
    case MessageKind::kNotification:
      if (message.kind == MessageKind::kRequest) member("id", message.id);
      member("jsonrpc", version);
      member("method", json::Value(message.method));
      if (!message.params.is_null()) member("params", message.params);
      break;
    case MessageKind::kResult:
      member("id", message.id);
      member("jsonrpc", version);
      if (message.lean_tools && message.result.is_object()) {
        out += ",\"result\":";
        AppendResultWithToolsArray(out, message.result, message.lean_tools->frame);
      } else {
        member("result", message.result);
      }
      break;
    case MessageKind::kError:
      member("error", message.error);
      if (!message.id.is_null()) member("id", message.id);
      member("jsonrpc", version);
      break;
  }
  out += '}';
  return out;
}

Message MakeRequest(json::Value id, std::string method, json::Value params) {
  Message m;
  m.kind = MessageKind::kRequest;
  m.id = std::move(id);
  m.method = std::move(method);
  m.params = std::move(params);
  return m;
}

Message MakeNotification(std::string method, json::Value params) {
  Message m;
  m.kind = MessageKind::kNotification;
  m.method = std::move(method);
  m.params = std::move(params);
  return m;
}

Message MakeResult(json::Value id, json::Value result) {
  Message m;
  m.kind = MessageKind::kResult;
  m.id = std::move(id);
  m.result = std::move(result);
  return m;
}

Message MakeError(json::Value id, int code, std::string message, json::Value data) {
  Message m;
  m.kind = MessageKind::kError;
  m.id = std::move(id);
  m.error = {{"code", code}, {"message", std::move(message)}};
  if (!data.is_null()) m.error["data"] = std::move(data);
  return m;
}

}  // namespace udon::mcp
