// Private to the Streamable HTTP server's sources: its implementation object, shared by
// http_server.cc (routing, guards, lifetime), http_modern.cc (2026-07-28 requests),
// http_legacy.cc (2025-03-26 to 2025-11-25 requests) and http_sessions.cc (legacy sessions,
// their GET streams and DELETE).
#ifndef UDON_MCP_SERVER_INTERNAL_HTTP_IMPL_H_
#define UDON_MCP_SERVER_INTERNAL_HTTP_IMPL_H_

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "mcp/server/http_server.h"
#include "mcp/server/internal/http_common.h"
#include "mcp/server/internal/http_guards.h"
#include "mcp/server/internal/http_sinks.h"
#include "mcp/server/kept_connections.h"
#include "mcp/server/peer_watch.h"
#include "mcp/server/server.h"
#include "mcp/server/worker_pool.h"

namespace udon::mcp {

// httplib's server with its listening socket within reach: httplib 0.11 listens with a
// backlog of 5, and a burst of new connections beyond it waits for a SYN retransmission
// (1 s) while the server has threads to spare. Its connections are served here rather than
// by httplib's loop, so that an idle keep-alive connection holds no thread
// (mcp/server/kept_connections.h).
class Listener : public httplib::Server {
 public:
  void WidenBacklog() {
    const socket_t socket = svr_sock_;
    if (socket != INVALID_SOCKET) ::listen(socket, SOMAXCONN);
  }
  // Serves `socket`'s requests while they come back to back, then parks it with the running
  // connection queue's IdleConnections (closes it when there is none, or at the end of its
  // keep-alive budget `remaining`).
  void ServeConnection(int socket, std::size_t remaining);
  std::chrono::seconds keep_alive_timeout() const { return std::chrono::seconds(keep_alive_timeout_sec_); }
  // The running connection queue's (ConnectionQueue in http_server.cc), while it runs.
  std::atomic<IdleConnections*> idle{nullptr};

 private:
  bool process_and_close_socket(socket_t socket) override {
    ServeConnection(socket, keep_alive_max_count_);
    return true;
  }
};

// What a request holds while it is in flight, released once its response has been written
// (a streamed response's with its content provider): its client's in-flight slot, and its
// legacy session's activity (the session is busy, so neither expired nor evicted).
struct RequestHold {
  struct Activity {
    explicit Activity(std::shared_ptr<HttpSession> s);
    ~Activity();
    Activity(const Activity&) = delete;
    Activity& operator=(const Activity&) = delete;
    std::shared_ptr<HttpSession> session;
  };
  std::shared_ptr<InFlightLimit::Slot> slot;
  std::shared_ptr<Activity> activity;
  std::shared_ptr<void> counted;  // a POST in flight, for Drain (DrainState::Enter)
  std::shared_ptr<const Caller> caller;  // the authenticate hook's, when there is one
};

// Whether the server drains (HttpServer::Drain), and the POSTs it waits for.
struct DrainState : std::enable_shared_from_this<DrainState> {
  // A token counting one POST until destroyed; null once draining (the request is refused).
  std::shared_ptr<void> Enter();
  std::size_t WaitIdle(std::chrono::milliseconds bound);
  void Begin();
  bool draining();

 private:
  std::mutex mutex;
  std::condition_variable idle;
  bool draining_ = false;
  std::size_t requests = 0;
};

// Now on the steady clock, as HttpSession::last_used counts it.
std::int64_t SteadyNanos();

struct HttpServer::Impl {
  Impl(Server& s, HttpServerOptions o) : server(s), options(std::move(o)) {}

  void Install();
  bool AdmitOrigin(const httplib::Request& request, httplib::Response& response);
  bool Admit(const httplib::Request& request, httplib::Response& response);
  bool IsModern(const httplib::Request& request, const Message& message) const;
  bool CheckModernHeaders(const httplib::Request& request, const Message& message,
                          httplib::Response& response);
  bool CheckParamHeaders(const httplib::Request& request, const Message& message,
                         const std::string& tool_name, httplib::Response& response);
  void ServeModern(const httplib::Request& request, Message message, httplib::Response& response,
                   std::shared_ptr<const Caller> caller);
  void AnswerModernOnce(RequestChannel& channel, httplib::Response& response);
  void StreamModern(std::shared_ptr<ServerSession> session, std::shared_ptr<RequestChannel> channel,
                    std::shared_ptr<PeerWatch::Ticket> ticket, std::shared_ptr<WorkerPool::Lasting> lasting,
                    httplib::Response& response);
  std::unique_ptr<PeerWatch::Ticket> WatchClient(const httplib::Request& request,
                                                 std::function<void()> departed);
  void ServeLegacy(const httplib::Request& request, Message message, httplib::Response& response,
                   const std::shared_ptr<const Caller>& caller);
  bool Enter(const httplib::Request& request, httplib::Response& response, RequestHold& hold, bool stream);
  std::shared_ptr<HttpSession> LiveSession(const std::string& id);
  bool MakeRoom();
  void Forget(std::map<std::string, std::shared_ptr<HttpSession>>::iterator it);
  void RefuseLegacy(Message message, httplib::Response& response);
  std::shared_ptr<HttpSession> OpenSession(const httplib::Request& request, httplib::Response& response,
                                           const Caller* caller);
  std::shared_ptr<HttpSession> FindSession(const httplib::Request& request, httplib::Response& response,
                                           const Caller* caller);
  void Post(const httplib::Request& request, httplib::Response& response, RequestHold& hold);
  void Get(const httplib::Request& request, httplib::Response& response, RequestHold& hold);
  void Delete(const httplib::Request& request, httplib::Response& response, RequestHold& hold);
  void AnswerWithSse(std::shared_ptr<HttpSession> session, Message message, HandleOptions handle_options,
                     httplib::Response& response);
  void AnswerCollected(HttpSession& session, Message message, const HandleOptions& handle_options,
                       httplib::Response& response);
  bool Authorized(const httplib::Request& request, httplib::Response& response) const;
  bool AuthenticateCaller(const httplib::Request& request, httplib::Response& response) const;
  httplib::Server::HandlerResponse PreRoute(const httplib::Request& request, httplib::Response& response);
  httplib::Server::HandlerResponse Judge(const httplib::Request& request, httplib::Response& response);
  bool AnswerProbe(const httplib::Request& request, httplib::Response& response);
  httplib::Server::Handler Guarded(
      void (Impl::*handler)(const httplib::Request&, httplib::Response&, RequestHold&));

  Server& server;
  HttpServerOptions options;
  Listener http;
  std::atomic<bool> stopping{false};
  std::shared_ptr<DrainState> drain = std::make_shared<DrainState>();
  std::mutex sessions_mutex;
  std::map<std::string, std::shared_ptr<HttpSession>> sessions;  // by Mcp-Session-Id
  std::optional<std::array<std::uint8_t, 32>> bearer_digest;  // of options.bearer_token
  std::unique_ptr<InFlightLimit> in_flight;                   // when limited
  // Lasting work of modern requests (tools/call, listen) and their open response streams;
  // Stop waits (bounded) for them, then cancels what still runs.
  std::mutex workers_mutex;
  std::condition_variable workers_cv;
  int workers = 0;
  int streams = 0;
  std::set<std::shared_ptr<ServerSession>> running;
  // Last: destroyed first, while what their threads use still exists.
  PeerWatch watch;
  WorkerPool work_pool{static_cast<std::size_t>(std::max(options.threads, 1)), 1, options.max_streams};
};

}  // namespace udon::mcp

#endif  // UDON_MCP_SERVER_INTERNAL_HTTP_IMPL_H_
