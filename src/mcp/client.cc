#include "mcp/client.h"

#include <set>
#include <utility>

#include "mcp/http_transport.h"
#include "mcp/stdio_transport.h"

#ifndef UDON_PROJECT_VERSION
#error "UDON_PROJECT_VERSION must come from CMake"
#endif

namespace udon::mcp {
namespace {

Error Wrap(std::string code, std::string message, const Error& cause) {
  Error error = udon::MakeError(std::move(code), std::move(message));
  error.details["cause"] = cause.code;
  for (const auto& [key, value] : cause.details.items()) {
    if (key != "cause") error.details[key] = value;
  }
  return error;
}

Error ErrorResponse(const Message& response) {
  Error error = udon::MakeError("mcp.error_response", "the server answered with a JSON-RPC error");
  if (response.error.is_object() && response.error.contains("code") &&
      response.error["code"].is_number_integer()) {
    error.details["rpcCode"] = response.error["code"];
  }
  return error;
}

Error PaginationError(std::string message, std::size_t page) {
  Error error = udon::MakeError("catalog.pagination_invalid", std::move(message));
  error.details["page"] = page;
  return error;
}

}  // namespace


std::string ClientVersion() { return UDON_PROJECT_VERSION; }

Client::Client(std::unique_ptr<Transport> transport, ClientOptions options)
    : options_(options),
      connection_(std::move(transport), ConnectionOptions{options.request_timeout}) {}

Result<std::unique_ptr<Client>> Client::Connect(const ServerConfig& server,
                                                ClientOptions options) {
  std::unique_ptr<Transport> transport;
  if (server.type == ServerType::kStdio) {
    StdioOptions stdio;
    stdio.max_message_bytes = options.max_message_bytes;
    stdio.shutdown_grace = options.shutdown_grace;
    transport = std::make_unique<StdioTransport>(server, stdio);
  } else {
    HttpOptions http;
    http.max_message_bytes = options.max_message_bytes;
    http.notification_stream = options.http_notification_stream;
    transport = std::make_unique<HttpTransport>(server, http);
  }
  auto client = std::make_unique<Client>(std::move(transport), options);
  UDON_RETURN_IF_ERROR(client->Start());
  return client;
}

Status Client::Start() {
  Status started = connection_.Start();
  if (!started.ok()) {
    return Wrap("server.connect_failed", "the server could not be started", started.error());
  }
  return OkStatus();
}

Result<InitializeResult> Client::Initialize(std::string_view requested_version) {
  if (!IsSupportedProtocolVersion(requested_version)) {
    return udon::MakeError("mcp.unsupported_version", "this client does not speak that version");
  }
  json::Value params = {
      {"protocolVersion", std::string(requested_version)},
      {"capabilities", json::Value::object()},
      {"clientInfo", {{"name", std::string(kClientName)}, {"version", ClientVersion()}}}};
  // initialize is never cancelled (the spec forbids it).
  auto response = connection_.Request("initialize", std::move(params),
                                      options_.request_timeout, /*cancellable=*/false);
  if (!response.ok()) {
    return Wrap("server.connect_failed", "initialize failed", response.error());
  }
  const Message& message = response->message;
  if (message.kind == MessageKind::kError) {
    return Wrap("server.connect_failed", "initialize was refused", ErrorResponse(message));
  }
  const json::Value& result = message.result;
  if (!result.is_object() || !result.contains("protocolVersion") ||
      !result["protocolVersion"].is_string() || !result.contains("serverInfo") ||
      !result["serverInfo"].is_object() || !result.contains("capabilities") ||
      !result["capabilities"].is_object() ||
      (result.contains("instructions") && !result["instructions"].is_string())) {
    return udon::MakeError("server.connect_failed", "the initialize result is malformed");
  }
  InitializeResult init;
  init.protocol_version = result["protocolVersion"].get<std::string>();
  if (!IsSupportedProtocolVersion(init.protocol_version)) {
    // The spec's SHOULD/MUST: disconnect rather than speak an unknown version.
    connection_.Close();
    return udon::MakeError("server.protocol_version_mismatch",
                     "the server answered a protocol version this client does not support");
  }
  init.server_info = result["serverInfo"];
  init.capabilities = result["capabilities"];
  if (result.contains("instructions")) init.instructions = result["instructions"].get<std::string>();
  init.raw = result;
  connection_.transport().OnInitialized(init.protocol_version);
  Status notified = connection_.Notify("notifications/initialized");
  if (!notified.ok()) {
    return Wrap("server.connect_failed", "notifications/initialized failed", notified.error());
  }
  initialized_ = init;
  return init;
}

Result<ToolPages> Client::ListAllTools(std::size_t max_pages) {
  if (!initialized_) return udon::MakeError("mcp.not_initialized", "initialize first");
  ToolPages out;
  out.sequence_before = connection_.LastSequence();
  std::set<std::string> seen_cursors;
  std::optional<std::string> cursor;
  while (true) {
    if (out.pages.size() >= max_pages) {
      return PaginationError("the page limit was exceeded", out.pages.size());
    }
    json::Value params = json::Value::object();
    if (cursor) params["cursor"] = *cursor;
    auto response = connection_.Request("tools/list", std::move(params), options_.request_timeout);
    if (!response.ok()) return std::move(response).error();
    if (response->message.kind == MessageKind::kError) return ErrorResponse(response->message);
    json::Value& page = response->message.result;
    if (!page.is_object() || !page.contains("tools") || !page["tools"].is_array()) {
      return PaginationError("a tools/list page is malformed", out.pages.size());
    }
    std::optional<std::string> next;
    if (page.contains("nextCursor") && !page["nextCursor"].is_null()) {
      if (!page["nextCursor"].is_string()) {
        return PaginationError("nextCursor is not a string", out.pages.size());
      }
      next = page["nextCursor"].get<std::string>();
    }
    out.sequence_after = response->sequence_at_response;
    out.pages.push_back(std::move(page));
    if (!next) break;
    if (!seen_cursors.insert(*next).second) {
      return PaginationError("the server repeated a cursor", out.pages.size());
    }
    cursor = std::move(next);
  }
  return out;
}

Result<CallOutcome> Client::CallTool(const std::string& name, const json::Value& arguments,
                                     std::chrono::milliseconds timeout) {
  if (!initialized_) return udon::MakeError("mcp.not_initialized", "initialize first");
  if (timeout.count() <= 0) timeout = options_.request_timeout;
  json::Value params = {{"name", name}, {"arguments", arguments}};
  auto response = connection_.Request("tools/call", std::move(params), timeout);
  if (!response.ok()) {
    const Error& cause = response.error();
    if (cause.code == "mcp.timeout" || cause.code == "mcp.disconnected") {
      Error error = Wrap("call.indeterminate", "the call's outcome is unknown", cause);
      error.details["reason"] = cause.code == "mcp.timeout" ? "timeout" : "disconnected";
      return error;
    }
    return std::move(response).error();
  }
  CallOutcome outcome;
  outcome.sequence_before = response->sequence_at_send;
  outcome.sequence_after = response->sequence_at_response;
  for (Event& event : connection_.EventsSince(outcome.sequence_before)) {
    if (event.sequence > outcome.sequence_after) break;
    outcome.events.push_back(std::move(event));
  }
  Message& message = response->message;
  if (message.kind == MessageKind::kError) {
    outcome.error = std::move(message.error);
    return outcome;
  }
  if (!message.result.is_object() || !message.result.contains("content") ||
      !message.result["content"].is_array()) {
    return udon::MakeError("call.protocol_error", "the tools/call result is malformed");
  }
  outcome.result = std::move(message.result);
  return outcome;
}

void Client::Close() { connection_.Close(); }

}  // namespace udon::mcp
