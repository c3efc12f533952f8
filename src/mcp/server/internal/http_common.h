// Private to the Streamable HTTP server's sources: header names and the small request and
// response helpers every part of it uses.
#ifndef UDON_MCP_SERVER_INTERNAL_HTTP_COMMON_H_
#define UDON_MCP_SERVER_INTERNAL_HTTP_COMMON_H_

#include <httplib.h>

#include <optional>
#include <string>
#include <string_view>

#include "json/json.h"

namespace udon::mcp {

constexpr char kSessionHeader[] = "Mcp-Session-Id";
constexpr char kVersionHeader[] = "MCP-Protocol-Version";

// "name[:port]" or "[v6][:port]" -> the name part, lowercased; empty if malformed: a port
// that is not a number up to 65535, or a name with user information, a path, a query, a
// fragment or blanks in it.
std::string HostName(std::string_view host_port);

// The host of an origin "http(s)://host[:port]" (RFC 6454, as browsers send it), lowercased;
// nullopt for any other scheme or a malformed host part (HostName).
std::optional<std::string> OriginHost(std::string_view origin);

// Whether the header's value contains `token`.
bool HeaderHas(const httplib::Request& request, const char* header, std::string_view token);

// `body` as the answer, application/json, sent as it is: a body given to httplib's
// set_content is gzipped for any client that accepts gzip (Node's fetch does), which costs
// both sides more CPU than a few hundred bytes on the wire are worth.
void SetJsonBody(httplib::Response& response, std::string body);

// A JSON-RPC error answer without an id, with the HTTP status.
void SetJsonRpcError(httplib::Response& response, int status, int code, const char* message);

// A request header's value without the optional whitespace around it (RFC 9110 5.5).
std::optional<std::string> HeaderValue(const httplib::Request& request, std::string_view name);

// Whether a legacy MCP-Protocol-Version header names a revision this transport speaks:
// 2024-11-05 is stdio only (docs/revisions.md).
bool IsLegacyHttpVersion(std::string_view version);

// The HTTP status a modern error answer carries.
int ModernErrorStatus(int code);

// A modern JSON-RPC error answer for request `id`, with the status ModernErrorStatus gives.
void SetModernError(httplib::Response& response, const json::Value& id, int code, const char* message,
                    json::Value data = nullptr);

}  // namespace udon::mcp

#endif  // UDON_MCP_SERVER_INTERNAL_HTTP_COMMON_H_
