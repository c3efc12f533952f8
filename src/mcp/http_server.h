// MCP Streamable HTTP, server side (cpp-httplib): POST, GET and DELETE on one endpoint,
// sessions, JSON or SSE responses, Origin and Host validation, body size limits.
//
// Both protocol eras share the endpoint. Legacy requests (2025-11-25 and older) use the
// initialize session, GET and DELETE exactly as before. Modern requests (2026-07-28: a
// modern MCP-Protocol-Version header, or a body the core serves as modern) are stateless:
// no session, their request metadata headers checked against the body (Mcp-Method, Mcp-Name,
// Mcp-Param-* from x-mcp-header), errors with the HTTP status the specification gives them,
// and subscriptions/listen as the long-lived SSE response of its POST.
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
  // Answer requests with application/json instead of SSE. Modern requests that stream
  // (progress, logs, listen) are answered as SSE regardless.
  bool json_responses = false;
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
