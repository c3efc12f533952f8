// MCP Streamable HTTP, server side (cpp-httplib): POST, GET and DELETE on one endpoint,
// sessions, JSON or SSE responses, Origin and Host validation, body size limits (413), an
// optional bearer token (401) and a bound on each client's requests in flight (429).
//
// Both protocol eras share the endpoint. Legacy requests (2025-11-25 and older) use the
// initialize session, GET and DELETE exactly as before. Modern requests (2026-07-28: a
// modern MCP-Protocol-Version header, or a body the core serves as modern) are stateless:
// no session, their request metadata headers checked against the body (Mcp-Method, Mcp-Name,
// Mcp-Param-* from x-mcp-header), errors with the HTTP status the specification gives them,
// and subscriptions/listen as the long-lived SSE response of its POST.
//
// A client that leaves a listen stream, a GET stream or a running tools/call is noticed at
// once (its socket's FIN or reset, mcp/peer_watch.h): the work it waited for is cancelled
// and the threads are free again, without waiting for a keep-alive write to fail.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "mcp/protocol/jsonrpc.h"
#include "mcp/server/server.h"

namespace udon::mcp {

// An authenticate hook's judgement of one request's Authorization header: its caller, or a
// refusal (401 or 403) with the WWW-Authenticate value and words for the JSON-RPC error.
struct AuthVerdict {
  std::shared_ptr<const Caller> caller;  // set: admitted
  int status = 401;
  std::string www_authenticate = "Bearer";
  std::string message;
};
using Authenticate = std::function<AuthVerdict(const std::string& authorization)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port
  std::string path = "/mcp";
  // Answer requests with application/json instead of SSE. Modern requests that stream
  // (progress, logs, listen) are answered as SSE regardless.
  bool json_responses = false;
  // Without json_responses: a request whose work produced its response alone is answered
  // with it as application/json, and one that sent more (logs, server requests) as SSE, as
  // before. A legacy request carrying a progress token streams as SSE while it runs. The
  // client must accept both (it listed both in Accept); parsing an SSE stream costs it more.
  bool json_single_answers = false;
  long retry_ms = 1000;         // the retry: field of each stream's priming event
  std::size_t max_body_bytes = kDefaultMaxMessageBytes;
  // Legacy sessions held at once. A full table forgets the least recently used idle session
  // (no request in flight, no open GET stream; its client's next request gets 404 and it
  // initializes again, as the specification provides); only a table whose every session is
  // busy refuses initialize (503).
  std::size_t max_sessions = 1024;
  // A legacy session idle this long is forgotten (the policy's sessionIdleSeconds in serve).
  std::chrono::seconds session_idle{3600};
  std::size_t max_queued_messages = 1024;  // per session, waiting for a GET stream
  // Connections served at once, and the threads that run modern requests' lasting work
  // (tools/call, subscriptions/listen): two bounded pools of this many threads each, started
  // on demand. A connection beyond them waits in a queue of max_queued_connections, then in
  // the kernel's listen backlog (the server stops accepting); lasting work finding no free
  // thread is answered at once with 503 and a JSON-RPC error.
  //
  // An open stream (a legacy GET stream, a subscriptions/listen stream) mostly waits: its
  // threads are counted out of `threads` (each pool starts a spare in their place), so that
  // streams never take the threads that requests need. At most max_streams of each pool's
  // threads are held so; a GET stream beyond them is answered with 503, a listen stream
  // with 503 and a JSON-RPC error. max_streams plus threads stays below max_sessions, so
  // sessions busy with a stream or a request never fill the table.
  int threads = 64;
  std::size_t max_queued_connections = 256;
  std::size_t max_streams = 512;
  long keep_alive_ms = 5000;  // a legacy GET stream's keep-alive comment when quiet
  // When not empty, every request to the endpoint must carry "Authorization: Bearer <token>"
  // (compared in constant time), else 401 with "WWW-Authenticate: Bearer" and a JSON-RPC
  // error carrying unauthorized_message, nothing else looked at. The token never appears in
  // an answer or a log. Other paths are 404 with or without it (no OAuth metadata exists).
  std::string bearer_token;
  // What a client without the token is told: words for the person configuring the host.
  std::string unauthorized_message =
      "this MCP server requires a bearer token and offers no OAuth; configure the host to send the "
      "Authorization header as Bearer followed by the token";
  // When set (serve --auth oauth), it judges every request to the endpoint instead of
  // bearer_token; its caller decides what tools/list shows and what the tool handler sees,
  // and a legacy session belongs to the subject that opened it (another's: 404).
  Authenticate authenticate;
  // Paths beside the endpoint answered to GET with these JSON bytes and no credential (the
  // RFC 9728 protected resource metadata). Every other path stays 404.
  std::map<std::string, std::string> public_documents;
  // Requests in flight per client (0: unlimited); open streams (GET, subscriptions/listen)
  // have a budget of the same size of their own. A client is its live legacy session
  // (Mcp-Session-Id) when it names one, else its peer address; a legacy initialize counts
  // against neither. One more is answered with 429 and a JSON-RPC error.
  std::size_t max_in_flight_per_client = 0;
  // Host names accepted in Host and Origin beyond the loopback names (a server listening on
  // another interface names the ones its clients use). Compared case-insensitively.
  std::vector<std::string> allowed_hosts;
  // Read-only pages answered to GET beside the endpoint (serve: /metrics), behind the same
  // bearer token; the body is made per request.
  struct Page {
    std::string path;
    std::string content_type;
    std::function<std::string()> body;
  };
  std::vector<Page> pages;
  // Probes for a load balancer (contract 7.17), answered before the token and Origin
  // checks with a fixed JSON body and nothing else: GET health_path is 200 while the
  // process serves; GET ready_path is 200 when `ready` says OK and the server is not
  // draining, else 503 naming the code. Empty paths: not served (404 like any other path).
  std::string health_path;
  std::string ready_path;
  std::function<udon::Status()> ready;  // unset: ready while not draining
};

// Origin values accepted: absent, or an http(s) origin (scheme://host[:port], parsed as a
// URL: no user information, path, query or fragment) whose host is localhost, 127.0.0.1 or
// [::1], any port. Host values accepted: absent, or one of those names with any port.
bool IsAllowedOrigin(const std::string& origin);
// localhost, 127.0.0.1 or ::1 (bracketed or not): a name only this machine reaches.
bool IsLoopbackName(std::string_view host);
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
  // Turns ready_path 503 at once and refuses every new request at the endpoint (503,
  // Connection: close: the balancer sends it elsewhere); listen streams end; then waits at
  // most `bound` for the POSTs in flight to be answered. Returns how many still were. Stop
  // afterwards.
  std::size_t Drain(std::chrono::milliseconds bound);

  // How many clients were seen leaving an open stream or a running request before it ended
  // (a seam for tests).
  std::uint64_t departures() const;
  // Legacy sessions held now (metrics).
  std::size_t live_sessions() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace udon::mcp
