// The MCP client operations a tools-only gate needs: initialize with exact version
// negotiation, exhaustive tools/list pagination with its event window, and tools/call.
//
// Error codes: the contract's where they fit —
//   server.connect_failed            start/initialize failed (details.cause: internal code)
//   server.protocol_version_mismatch the server answered a version this client lacks
//   catalog.pagination_invalid       repeated cursor, page limit exceeded, malformed page
//   call.protocol_error              malformed tools/call result
//   call.indeterminate               timeout (cancelled sent) or disconnect after the call
//                                    was sent (details.reason: "timeout" | "disconnected")
// and the engine's / transports' mcp.* codes otherwise (connection.h, transport.h), e.g.
//   mcp.error_response               a JSON-RPC error answered a list request
//   mcp.not_initialized              an operation before a successful Initialize
//   mcp.unsupported_version          Initialize was asked for a version the client lacks
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/result.h"
#include "mcp/config.h"
#include "mcp/connection.h"
#include "mcp/protocol.h"

namespace udon::mcp {


inline constexpr std::string_view kClientName = "udon-mcp";
std::string ClientVersion();  // the project version

struct ClientOptions {
  std::chrono::milliseconds request_timeout{60'000};
  std::size_t max_message_bytes = kDefaultMaxMessageBytes;
  // stdio: how long the server gets to exit after stdin closes, and after SIGTERM.
  std::chrono::milliseconds shutdown_grace{2'000};
  // HTTP: open the optional GET stream for server notifications after initialize.
  bool http_notification_stream = true;
};

struct InitializeResult {
  std::string protocol_version;
  json::Value server_info;   // exactly as sent
  json::Value capabilities;  // exactly as sent
  std::optional<std::string> instructions;
  json::Value raw;           // the whole InitializeResult
};

// Every tools/list page result intact, in order; events in (sequence_before,
// sequence_after] arrived during the listing (e.g. notifications/tools/list_changed).
struct ToolPages {
  std::vector<json::Value> pages;
  std::uint64_t sequence_before = 0;
  std::uint64_t sequence_after = 0;
};

struct CallOutcome {
  std::optional<json::Value> result;  // the raw CallToolResult
  std::optional<json::Value> error;   // or the JSON-RPC error object {code, message, data?}
  std::vector<Event> events;          // events that arrived while the call was in flight
  std::uint64_t sequence_before = 0;
  std::uint64_t sequence_after = 0;
};

class Client {
 public:
  Client(std::unique_ptr<Transport> transport, ClientOptions options = {});
  // Builds the transport for a configured server (stdio or Streamable HTTP) and starts it.
  static Result<std::unique_ptr<Client>> Connect(const ServerConfig& server,
                                                 ClientOptions options = {});

  Status Start();
  Result<InitializeResult> Initialize(std::string_view requested_version = kLatestProtocolVersion);
  // Follows nextCursor until it is absent; refuses a repeated cursor and more than
  // max_pages pages.
  Result<ToolPages> ListAllTools(std::size_t max_pages = 1000);
  Result<CallOutcome> CallTool(const std::string& name, const json::Value& arguments,
                               std::chrono::milliseconds timeout = std::chrono::milliseconds{0});
  void Close();

  Connection& connection() { return connection_; }
  const std::optional<InitializeResult>& initialized() const { return initialized_; }

 private:
  ClientOptions options_;
  Connection connection_;
  std::optional<InitializeResult> initialized_;
};

}  // namespace udon::mcp
