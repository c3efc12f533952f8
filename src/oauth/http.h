// The authorization server's and the resource's metadata requests, one at a time, over the
// libcurl that mcp_client loads (no second HTTP stack). Every request is bounded in time
// and size, never follows a redirect (a 3xx comes back as it is: nothing, and no
// credential, goes to a Location) and speaks http or https only. Nothing here logs.
//
// Errors (contract 7.1): auth.unreachable (no connection, TLS failure; details.cause the
// libcurl code's name), auth.timeout (the request's time bound ended), auth.response_too_large
// (a body above the bound).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace udon::oauth {

struct HttpLimits {
  std::size_t max_body_bytes = 1024 * 1024;
  std::chrono::milliseconds timeout{15'000};  // the whole exchange
};

struct HttpExchange {
  std::string method = "GET";  // GET or POST
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // POST only
};

struct HttpReply {
  long status = 0;
  std::string www_authenticate;  // every WWW-Authenticate line, joined with ", "
  std::string content_type;
  std::string body;
};

Result<HttpReply> HttpFetch(const HttpExchange& exchange, const HttpLimits& limits = {});

}  // namespace udon::oauth
