// The MCP protocol revisions this implementation speaks, client and server alike, and the
// wire constants both eras share.
//
// Two eras (the 2026-07-28 revision's terms): "legacy" revisions (2025-11-25 and older)
// open with the initialize handshake and may keep sessions (2024-11-05, the oldest, is
// spoken over stdio only: its HTTP+SSE transport is not); "modern" revisions
// (2026-07-28) are stateless: every request carries its protocol version, client
// capabilities and client identity in params._meta, every result carries resultType and
// the server's identity in result._meta, and server/discover replaces initialize.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace udon::mcp {

inline constexpr std::string_view kModernProtocolVersion = "2026-07-28";
inline constexpr std::string_view kLatestLegacyProtocolVersion = "2025-11-25";
// The newest revision overall: what capture asks for unless told otherwise.
inline constexpr std::string_view kLatestProtocolVersion = kModernProtocolVersion;

enum class Era { kLegacy, kModern };

// Every revision this implementation speaks, newest first.
const std::vector<std::string>& SupportedProtocolVersions();
bool IsSupportedProtocolVersion(std::string_view version);
// A supported revision without Streamable HTTP (2024-11-05, whose HTTP+SSE transport is not
// spoken): a client offers and accepts it over stdio only.
bool IsStdioOnlyProtocolVersion(std::string_view version);
// The revisions the server framework serves by default: all but the stdio-only ones, since
// one Server may serve stdio and HTTP alike (docs/revisions.md).
const std::vector<std::string>& ServedProtocolVersions();
// A supported revision that uses the initialize handshake.
bool IsLegacyProtocolVersion(std::string_view version);
// A supported revision that uses per-request _meta (2026-07-28).
bool IsModernProtocolVersion(std::string_view version);
Era EraOf(std::string_view version);  // unsupported versions count as legacy
const char* EraName(Era era);         // "legacy" | "modern"

// Methods and notifications of the modern era.
inline constexpr std::string_view kDiscoverMethod = "server/discover";
inline constexpr std::string_view kListenMethod = "subscriptions/listen";
inline constexpr std::string_view kAcknowledgedNotification = "notifications/subscriptions/acknowledged";
inline constexpr std::string_view kToolsListChangedNotification = "notifications/tools/list_changed";

// Reserved _meta keys.
namespace meta {
inline constexpr std::string_view kProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view kClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view kServerInfo = "io.modelcontextprotocol/serverInfo";
inline constexpr std::string_view kSubscriptionId = "io.modelcontextprotocol/subscriptionId";
inline constexpr std::string_view kLogLevel = "io.modelcontextprotocol/logLevel";
}  // namespace meta

// JSON-RPC error codes of the modern era (2026-07-28), from the range the specification
// reserves for itself; the JSON-RPC ones are in jsonrpc.h.
namespace rpc_code {
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;
// True for the codes that identify a modern server in an era probe.
bool IsModernError(int code);
}  // namespace rpc_code

// Streamable HTTP request headers (names are case-insensitive on the wire).
namespace http_header {
inline constexpr std::string_view kProtocolVersion = "MCP-Protocol-Version";
inline constexpr std::string_view kMethod = "Mcp-Method";
inline constexpr std::string_view kName = "Mcp-Name";
inline constexpr std::string_view kParamPrefix = "Mcp-Param-";
inline constexpr std::string_view kSessionId = "Mcp-Session-Id";
}  // namespace http_header

// Header lines a request carries on HTTP besides those the transport derives from the
// message itself (the modern era's Mcp-Param-* mirrors of tool arguments). Never logged.
using RequestHeaders = std::vector<std::pair<std::string, std::string>>;

// W3C Trace Context of a request: carried in params._meta (traceparent, tracestate) and,
// on HTTP, in the headers of the same names. Empty: none.
struct TraceContext {
  std::string traceparent;
  std::string tracestate;
};

// The header value for an Mcp-Name or Mcp-Param-* source value: as-is when it is plain
// header-safe ASCII without surrounding whitespace, else "=?base64?...?=" of its UTF-8.
std::string EncodeHeaderValue(std::string_view value);
// The inverse; false if an encoded value is not valid base64.
bool DecodeHeaderValue(std::string_view header, std::string& value);

}  // namespace udon::mcp
