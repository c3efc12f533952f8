// The MCP client operations a tools-only gate needs, in both protocol eras: opening
// (initialize for legacy revisions, server/discover for 2026-07-28), exhaustive tools/list
// pagination with its event window, tools/call, and for the modern era the
// subscriptions/listen stream that carries tool-list changes.
//
// Modern era: every request carries _meta (protocolVersion, clientInfo, empty
// clientCapabilities: the client answers no input requests); every result must be
// resultType "complete" (absent counts as complete) and any serverInfo in its _meta must
// equal the one discovery reported.
//
// Modern results that break the rules fail with the contract's code for where they arrived
// (opening / tools/list / tools/call):
//   resultType input_required   server.request_refused / server.request_refused /
//                               call.server_request_refused (a headless client gives no input)
//   unknown resultType          server.connect_failed / catalog.pagination_invalid /
//                               call.protocol_error
//   another _meta serverInfo    — / server.server_info_mismatch / call.indeterminate
//                               (details.reason "server_info_changed")
//
// Error codes: the contract's where they fit —
//   server.connect_failed            start/initialize failed (details.cause: internal code;
//                                    a command that cannot run names itself and the OS
//                                    error, details.errno and details.command)
//   server.protocol_version_mismatch the server answered a version this client lacks, or
//                                    2024-11-05 was asked for or answered over HTTP
//                                    (details.requested | answered, transport)
//   catalog.pagination_invalid       repeated cursor, page limit exceeded, malformed page
//   call.protocol_error              malformed tools/call result
//   call.indeterminate               timeout (cancelled sent) or disconnect after the call
//                                    was sent (details.reason: "timeout" | "disconnected")
// and the engine's / transports' mcp.* codes otherwise (connection.h, transport.h), e.g.
//   mcp.error_response               a JSON-RPC error answered a list request
//   mcp.not_initialized              an operation before a successful Initialize
//   mcp.unsupported_version          Initialize was asked for a version the client lacks
//   mcp.server_info_missing          server/discover named no serverInfo
//   mcp.subscription_failed          subscriptions/listen was refused, ended or never
//                                    acknowledged (details.reason)
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "mcp/client/config.h"
#include "mcp/client/connection.h"
#include "mcp/client/tool_pages.h"
#include "mcp/protocol/protocol.h"

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
  // Negotiate: how long server/discover may stay unanswered before the server counts as
  // legacy (stdio legacy servers may ignore unknown methods before initialize).
  std::chrono::milliseconds probe_timeout{5'000};
};

// How a connection opened: the InitializeResult (legacy) or the DiscoverResult (modern).
struct InitializeResult {
  Era era = Era::kLegacy;
  std::string protocol_version;
  std::vector<std::string> supported_versions;  // modern: DiscoverResult.supportedVersions
  json::Value server_info;   // exactly as sent (modern: _meta's io.modelcontextprotocol/serverInfo)
  json::Value capabilities;  // exactly as sent
  std::optional<std::string> instructions;
  json::Value raw;           // the whole InitializeResult
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

  // The modern era's tool-list subscription: kNone before Subscribe (and always for legacy),
  // kNotOffered when the server declares no tools.listChanged, kDeclined when its
  // acknowledgment leaves toolsListChanged out, kActive once acknowledged.
  enum class Subscription { kNone, kNotOffered, kDeclined, kActive };

  Status Start();
  // Legacy era: the initialize handshake at exactly this version.
  Result<InitializeResult> Initialize(std::string_view requested_version = kLatestLegacyProtocolVersion);
  // Modern era: server/discover at this version; an UnsupportedProtocolVersion answer whose
  // supported list names a modern version this client speaks is retried once with it.
  Result<InitializeResult> Discover(std::string_view requested_version = kModernProtocolVersion);
  // Opens at exactly this version, choosing the era's mechanism.
  Result<InitializeResult> Open(std::string_view version);
  // The newest revision both sides speak: probes with server/discover and falls back to
  // initialize when the answer identifies a legacy server (any error that is not a modern
  // one, or silence for probe_timeout).
  Result<InitializeResult> Negotiate();
  // Modern era: opens subscriptions/listen for toolsListChanged and waits for the
  // acknowledgment; a no-op for legacy connections.
  Status Subscribe();
  // A ping round trip. On an ordered transport it is a barrier: when it returns, every
  // message the server sent before answering is in the event log. Any answer counts.
  // Errors: server.connect_failed (details.cause: mcp.timeout, mcp.disconnected, ...).
  Status Ping(std::chrono::milliseconds timeout);
  // Follows nextCursor until it is absent; refuses a repeated cursor and more than
  // max_pages pages. `on_page`, when set, hears of each page as it arrives (pages and
  // tools so far), for progress on long catalogs. Every page is read lean (every byte
  // checked, no Tool built): ToolPages::lean holds each page's Tools as bytes, and
  // ToolPages::pages builds them as values when first read (tool_pages.h).
  using PageProgress = std::function<void(std::size_t pages, std::size_t tools)>;
  Result<ToolPages> ListAllTools(std::size_t max_pages = 1000, const PageProgress& on_page = {});
  // `tool`, when given, is the Tool object the call is bound to: on HTTP in the modern era
  // its x-mcp-header parameters are mirrored into Mcp-Param-* headers.
  // `on_progress`, when set, asks for progress (a progressToken of this call's own) and
  // hears each notifications/progress params for it as it arrives, before the result.
  // `trace`, when it holds a traceparent, goes with the call in params._meta and, on HTTP,
  // as the traceparent and tracestate headers (W3C Trace Context).
  using ProgressFn = std::function<void(const json::Value& params)>;
  Result<CallOutcome> CallTool(const std::string& name, const json::Value& arguments,
                               std::chrono::milliseconds timeout = std::chrono::milliseconds{0},
                               const json::Value* tool = nullptr, const ProgressFn& on_progress = {},
                               const TraceContext* trace = nullptr);
  void Close();
  // stdio: how the server process ended ("exited with status 1", "was killed by signal 9
  // (SIGKILL)"); empty while it runs, when unknown, and for HTTP.
  std::string server_exit();
  // stdio: the newest bytes the server wrote to stderr; empty for HTTP. Diagnostics only
  // (--diagnostics): it may hold secrets, so it never goes into errors or evidence.
  std::string server_stderr_tail();

  Connection& connection() { return connection_; }
  const std::optional<InitializeResult>& initialized() const { return initialized_; }
  Subscription subscription() const { return subscription_; }
  // The subscriptions/listen request id while kActive: its end is a kStreamEnded event.
  std::optional<std::int64_t> subscription_id() const { return subscription_id_; }
  // Legacy HTTP: how the server-notification stream stood when initialization finished.
  NotificationStream notification_stream() const { return notification_stream_; }

 private:
  Result<InitializeResult> DiscoverOnce(std::string_view version, std::chrono::milliseconds timeout);
  // params with the modern era's _meta added (unchanged for legacy connections).
  json::Value WithMeta(json::Value params, std::string_view version) const;
  enum class Phase { kOpen, kList, kCall };
  Status CheckModernResult(const json::Value& result, Phase phase) const;

  ClientOptions options_;
  Connection connection_;
  std::optional<InitializeResult> initialized_;
  Subscription subscription_ = Subscription::kNone;
  std::optional<std::int64_t> subscription_id_;
  NotificationStream notification_stream_ = NotificationStream::kNone;
  std::atomic<std::uint64_t> next_progress_token_{1};
};

const char* SubscriptionName(Client::Subscription subscription);

// --diagnostics: what helps a person see why a server or tool failed, for stderr only,
// never for errors, --json output or evidence (stderr and tool text may hold secrets).
struct Diagnostic {
  std::string what;  // "transport", "server stderr", "tool error"
  std::string text;  // raw: printed through json::ForDisplay
};
inline constexpr std::size_t kDiagnosticTextLimit = 4096;
// Keeps the newest `limit` bytes of a tail, or the first `limit` bytes of a message.
std::string TruncateTail(const std::string& text, std::size_t limit = kDiagnosticTextLimit);
std::string TruncateHead(const std::string& text, std::size_t limit = kDiagnosticTextLimit);
// The transport's cause from an error's details (codes, HTTP status, curl code, OS error,
// the server's exit), and with a client the server's stderr tail.
std::vector<Diagnostic> ConnectionDiagnostics(const Error& error, Client* client);

// A connection that failed because the stdio server ended says how (message and
// details.exit); otherwise the error is unchanged.
void AddServerExit(Error& error, Client& client);

}  // namespace udon::mcp
