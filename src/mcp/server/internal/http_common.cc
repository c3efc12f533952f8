#include "mcp/server/internal/http_common.h"

#include <cctype>
#include <memory>
#include <utility>

#include "mcp/protocol/jsonrpc.h"
#include "mcp/protocol/protocol.h"

namespace udon::mcp {

namespace {

// A port: 1 to 5 digits, at most 65535.
bool IsPort(std::string_view text) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return false;
  }
  return std::stoul(std::string(text)) <= 65535;
}

}  // namespace

std::string HostName(std::string_view host_port) {
  std::string_view name = host_port;
  std::string_view port;
  bool has_port = false;
  if (!name.empty() && name.front() == '[') {
    const auto close = name.find(']');
    if (close == std::string_view::npos) return {};
    std::string_view rest = name.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return {};
    has_port = !rest.empty();
    if (has_port) port = rest.substr(1);
    name = name.substr(0, close + 1);
  } else if (const auto colon = name.find(':'); colon != std::string_view::npos) {
    has_port = true;
    port = name.substr(colon + 1);
    name = name.substr(0, colon);
  }
  // No user information ("localhost:1@evil.example"), path, query, fragment or blank: what
  // a URL parser would read as another host is no host here.
  if (name.empty() || name.find_first_of("@/?#\\ \t%") != std::string_view::npos || (has_port && !IsPort(port))) {
    return {};
  }
  std::string lowered(name);
  for (char& c : lowered) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lowered;
}

std::optional<std::string> OriginHost(std::string_view origin) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (origin.substr(0, scheme.size()) == scheme) {
      std::string host = HostName(origin.substr(scheme.size()));
      if (host.empty()) return std::nullopt;
      return host;
    }
  }
  return std::nullopt;
}

bool HeaderHas(const httplib::Request& request, const char* header, std::string_view token) {
  return request.get_header_value(header).find(token) != std::string::npos;
}

void SetJsonBody(httplib::Response& response, std::string body) {
  if (body.empty()) {  // httplib asks a provider for at least one byte
    response.set_content(body, "application/json");
    return;
  }
  // A provider of known length is never compressed; the header block and the body still
  // leave in one send (ConnectionStream).
  auto shared = std::make_shared<const std::string>(std::move(body));
  response.set_content_provider(shared->size(), "application/json",
                                [shared](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                                  return sink.write(shared->data() + offset, length);
                                });
}

void SetJsonRpcError(httplib::Response& response, int status, int code, const char* message) {
  response.status = status;
  SetJsonBody(response, SerializeMessage(MakeError(nullptr, code, message)));
}

bool IsLegacyHttpVersion(std::string_view version) {
  return IsLegacyProtocolVersion(version) && !IsStdioOnlyProtocolVersion(version);
}

std::optional<std::string> HeaderValue(const httplib::Request& request, std::string_view name) {
  const std::string key(name);
  if (!request.has_header(key)) return std::nullopt;
  std::string value = request.get_header_value(key);
  const auto first = value.find_first_not_of(" \t");
  if (first == std::string::npos) return std::string();
  const auto last = value.find_last_not_of(" \t");
  return value.substr(first, last - first + 1);
}

// The HTTP status a modern error answer carries.
int ModernErrorStatus(int code) {
  if (code == kMethodNotFound) return 404;
  if (code == kParseError || code == kInvalidRequest || code == kInvalidParams ||
      code == rpc_code::kHeaderMismatch || code == rpc_code::kMissingRequiredClientCapability ||
      code == rpc_code::kUnsupportedProtocolVersion) {
    return 400;
  }
  return 200;
}

void SetModernError(httplib::Response& response, const json::Value& id, int code, const char* message,
                    json::Value data) {
  response.status = ModernErrorStatus(code);
  SetJsonBody(response, SerializeMessage(MakeError(id, code, message, std::move(data))));
}

}  // namespace udon::mcp
