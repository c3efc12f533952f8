// MCP Streamable HTTP, server side (cpp-httplib): POST, GET and DELETE on one endpoint,
// sessions, JSON or SSE responses, Origin and Host validation, body size limits.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "json/result.h"
#include "mcp/jsonrpc.h"
#include "mcp/server.h"

namespace udon::mcp {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port
  std::string path = "/mcp";
  bool json_responses = false;  // answer requests with application/json instead of SSE
  long retry_ms = 1000;         // the retry: field of each stream's priming event
  std::size_t max_body_bytes = kDefaultMaxMessageBytes;
  std::size_t max_sessions = 1024;
  std::size_t max_queued_messages = 1024;  // per session, waiting for a GET stream
  int threads = 64;                         // concurrent requests and open streams
};

// Origin values accepted: absent, or an http(s) origin whose host is localhost, 127.0.0.1
// or [::1]. Host values accepted: absent, or one of those names with any port.
bool IsAllowedOrigin(const std::string& origin);
bool IsAllowedHost(const std::string& host);

class HttpServer {
 public:
  HttpServer(Server& server, HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket; the bound port. Errors: http.bind_failed.
  Result<int> Bind();
  // Serves until Stop() (from another thread or a signal handler thread).
  void Serve();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace udon::mcp
