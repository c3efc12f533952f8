// Streamable HTTP transport (MCP 2025-11-25, basic/transports) over libcurl.
//
// - Every request is POSTed on its own worker thread with Accept: application/json,
//   text/event-stream; the answer may be one JSON body or an SSE stream (empty priming
//   events are skipped). Notifications and responses are POSTed synchronously, bounded by
//   connect_timeout; 202 or 200 (with any body, which is ignored) is success.
// - Mcp-Session-Id from the server is echoed on every later request; MCP-Protocol-Version
//   is sent after initialize. 404 (or 400 whose body mentions the session, as the
//   TypeScript SDK answers) while a session exists means the session ended: the
//   connection fails with mcp.session_expired.
// - An SSE stream that ends before its response is resumed with GET + Last-Event-ID after
//   the server's retry interval (default_retry when none was sent), a few times at most.
// - An optional GET stream carries server notifications; 405, 404 or any failure there
//   just means the server offers none.
// - Close() aborts transfers, joins every thread and DELETEs the session.
// - Configured headers are sent as given and never logged. libcurl uses the system CA
//   store for https; only http and https are allowed. Redirects are never followed, so
//   configured headers reach the configured origin only: a 3xx is mcp.http_status.
// - A 401 or 403 is mcp.http_status whatever its body, with its Bearer challenge's error and
//   scope (details.authError, details.scope): the credential was refused, nothing processed.
// - The size limit applies to a JSON body and to each SSE event while streaming.
// - Modern era (2026-07-28; a request whose params._meta names its protocol version):
//   MCP-Protocol-Version mirrors that version, Mcp-Method the method, Mcp-Name the
//   tool name (base64 sentinel when not header-safe), plus the caller's Mcp-Param-*
//   headers; no session is sent or adopted and nothing is resumed. A 4xx whose body is a
//   JSON-RPC error is that request's answer (UnsupportedProtocolVersion, HeaderMismatch,
//   Method not found), so the client can tell a modern server from a legacy one.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mcp/client/config.h"
#include "mcp/client/transport.h"

namespace udon::mcp {

struct HttpOptions {
  std::size_t max_message_bytes = kDefaultMaxMessageBytes;
  bool notification_stream = true;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds default_retry{1'000};
  int max_resume_attempts = 5;
};

class HttpTransport : public Transport {
 public:
  HttpTransport(ServerConfig server, HttpOptions options = {});
  ~HttpTransport() override;

  Status Start(TransportCallbacks callbacks) override;
  Status Send(const Message& message) override;
  Status SendRequest(const Message& request, const RequestHeaders& headers) override;
  void OnInitialized(const std::string& protocol_version) override;
  void Abandon(const json::Value& id) override;
  void Close() override;
  NotificationStream AwaitNotificationStream(std::chrono::milliseconds timeout) override;
  bool streamable_http() const override { return true; }

  std::string session_id() const;
  // How many re-listed pages held the last page's tools array byte for byte, which was then
  // not checked again (json::ElementsMemo).
  std::size_t tool_lists_reused() const;

  struct Transfer;  // one HTTP exchange (internal)

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  void RunRequest(Message message, RequestHeaders headers);
  void RunWorker(std::shared_ptr<std::atomic<bool>> done);
  void RunNotificationStream();
  void RunStreamLoop(Transfer& transfer);
  struct Handle {
    void* multi = nullptr;  // CURLM*
    void* easy = nullptr;   // CURL*
  };
  int RunMulti(void* multi, void* easy, Transfer& transfer);  // a CURLcode
  void WakeLocked(Transfer& transfer);
  // Performs one exchange; fills transfer (status, delivered messages, failure).
  void Perform(Transfer& transfer, const char* method, const std::string* body,
               const std::string& last_event_id);
  bool SleepUnlessClosing(std::chrono::milliseconds duration, const Transfer* transfer);
  bool SessionGone(const Transfer& transfer) const;
  // A modern-era 4xx whose body is a JSON-RPC error: delivered as the request's answer.
  bool DeliverErrorBody(Transfer& transfer);
  void CloseWith(Error error);
  void ReapWorkers();
  Handle AcquireHandle();
  void ReleaseHandle(Handle handle);

  ServerConfig server_;
  HttpOptions options_;
  TransportCallbacks callbacks_;
  mutable std::mutex mutex_;
  std::condition_variable closing_cv_;
  std::atomic<bool> closing_{false};
  std::atomic<bool> failed_{false};
  std::string session_id_;
  std::string protocol_version_;
  std::map<std::int64_t, Transfer*> active_;  // request id -> its transfer, for Abandon
  // Requests wait here for a worker; a worker that finishes one takes the next, so a
  // long-lived connection does not start a thread per request. Guarded by mutex_.
  std::deque<std::pair<Message, RequestHeaders>> queued_;
  std::size_t idle_workers_ = 0;
  std::condition_variable work_ready_;
  std::vector<Worker> workers_;
  std::thread notification_stream_;
  Transfer* stream_transfer_ = nullptr;
  NotificationStream stream_state_ = NotificationStream::kNone;  // guarded by mutex_
  std::condition_variable stream_settled_;
  void SettleStream(NotificationStream state);
  std::vector<Handle> idle_handles_;  // kept for connection reuse
  // The last tools/list page's array, as the stdio reader keeps it. One frame at a time
  // uses it; a frame parsed while another holds it is parsed without.
  mutable std::mutex memo_mutex_;
  json::ElementsMemo tool_list_memo_;
};

}  // namespace udon::mcp
