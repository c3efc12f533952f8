// Streamable HTTP transport (MCP 2025-11-25, basic/transports) over libcurl.
//
// - A request is POSTed with Accept: application/json, text/event-stream; the answer may
//   be one JSON body or an SSE stream (empty priming events are skipped). A request its
//   caller waits for (ExchangeNow) runs on the caller's thread until its answer or the
//   caller's deadline; others (SendRequest) run on a worker thread. Notifications and
//   responses are POSTed synchronously, bounded by connect_timeout; 202 or 200 (with any
//   body, which is ignored) is success. A reply to a server's request that arrives during
//   a caller's exchange is POSTed by a worker, never on the caller's thread.
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
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
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
  // mcp.send_failed when the transport is closed or failed; everything else is delivered
  // through the callbacks. The deadline ends the transfer silently (the caller times out).
  Status ExchangeNow(const Message& request, const RequestHeaders& headers,
                     std::chrono::steady_clock::time_point deadline) override;
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

  using Deadline = std::optional<std::chrono::steady_clock::time_point>;
  void RunRequest(const Message& message, const RequestHeaders& headers, Deadline deadline);
  void RunWorker(std::shared_ptr<std::atomic<bool>> done);
  // Queues a job for a worker (an idle one, else a new one). Callers check closing_ first.
  void EnqueueLocked(std::function<void()> job);
  // POSTs a notification or response and reads its answer's status.
  Status PostMessage(const Message& message);
  void RunNotificationStream();
  void RunStreamLoop(Transfer& transfer);
  struct Handle {
    void* multi = nullptr;  // CURLM*
    void* easy = nullptr;   // CURL*
  };
  int RunMulti(void* multi, void* easy, Transfer& transfer);  // a CURLcode or kDrainHandedOff
  int DriveMulti(void* multi, Transfer& transfer);
  void EndMulti(void* multi, void* easy, Transfer& transfer);
  // A caller's transfer whose answer is in but whose stream has not ended: a worker reads
  // the rest (bounded, as any drain) and returns the handle to the idle cache.
  void HandOffDrain(Handle handle, void* header_list, Transfer& transfer);
  // Ends the caller-thread transfers at once (the connection failed).
  void AbortCallerTransfers();
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
  // Jobs (requests nobody waits on here, drains, replies) wait here for a worker; a worker
  // that finishes one takes the next, so a long-lived connection does not start a thread
  // per request. Guarded by mutex_.
  std::deque<std::function<void()>> queued_;
  // The threads running a caller's exchange now (one entry per exchange): Close waits for
  // them, except its own thread's.
  std::multiset<std::thread::id> caller_threads_;
  std::condition_variable caller_exchange_ended_;
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
