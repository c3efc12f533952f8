#include "mcp/client/http_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <utility>

#include "base/ascii.h"
#include "mcp/protocol/protocol.h"
#include "mcp/protocol/sse.h"
#include "mcp/client/www_authenticate.h"

namespace udon::mcp {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' ||
                           text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

bool IsVisibleAscii(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

bool IsBlank(std::string_view text) { return Trim(text).empty(); }

constexpr std::size_t kErrorBodyBytes = 4096;

// After a request's response has arrived on its SSE stream, the rest of the stream is read
// (and dropped) for this long and this many bytes at most, so that a stream the server
// closes right away ends cleanly and its keep-alive connection serves the next request.
// Cutting the transfer at the response closed the connection: every request paid a new
// TCP connection (docs/benchmarks.md, client CPU). A stream still open after the window,
// or longer than the bound, is cut as before.
constexpr std::chrono::milliseconds kDrainWindow{20};
constexpr std::size_t kDrainBytes = 64 * 1024;

// The protocol version a modern-era request names in params._meta, or empty.
std::string ModernVersionOf(const Message& message) {
  if (!message.params.is_object()) return {};
  auto meta = message.params.find("_meta");
  if (meta == message.params.end() || !meta->is_object()) return {};
  auto version = meta->find(std::string(meta::kProtocolVersion));
  return version != meta->end() && version->is_string() ? version->get<std::string>() : std::string();
}

// The headers the modern era mirrors from a request's body.
RequestHeaders MirroredHeaders(const Message& message, const std::string& version) {
  RequestHeaders headers = {{std::string(http_header::kProtocolVersion), version},
                            {std::string(http_header::kMethod), message.method}};
  for (const char* member : {"name", "uri"}) {
    auto value = message.params.find(member);
    if (value != message.params.end() && value->is_string()) {
      headers.emplace_back(std::string(http_header::kName), EncodeHeaderValue(value->get<std::string>()));
      break;
    }
  }
  return headers;
}

// RunMulti's answer when a caller's transfer was handed to a worker to drain (not a CURLcode).
constexpr int kDrainHandedOff = -1;

// The transport whose exchange this thread runs for its caller (ExchangeNow), if any: a
// reply to a server's request delivered meanwhile is posted by a worker instead.
thread_local const HttpTransport* exchanging_on = nullptr;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

struct HttpTransport::Transfer {
  HttpTransport* owner = nullptr;
  std::optional<json::Value> request_id;  // set for requests: the response to wait for
  std::atomic<bool> abort{false};
  long status = 0;
  std::string content_type;
  std::string www_authenticate;  // of a 401 or 403: what the server wants instead
  bool decided = false;
  bool is_sse = false;
  bool is_json = false;
  std::string body;
  std::string error_body;
  std::unique_ptr<SseParser> parser;
  std::string last_event_id;
  std::optional<long> retry_ms;
  bool got_response = false;
  std::chrono::steady_clock::time_point drain_until;  // set when got_response is
  std::size_t drained = 0;                              // bytes read after the response
  std::optional<Error> failure;  // fatal for the connection (too large, malformed)
  CURLcode code = CURLE_OK;
  void* multi = nullptr;  // CURLM* while performing, for wakeups (guarded by owner mutex)

  bool outlives_close = false;  // the final DELETE
  bool modern = false;          // a modern-era request: no session, errors in 4xx bodies
  RequestHeaders headers;       // sent besides the transport's own
  bool ignore_body = false;     // a POSTed notification or response: any answer body is moot
  bool notification_stream = false;  // the GET stream: settles the owner's stream state
  // A caller's exchange (ExchangeNow): runs until this, then ends silently; the connection
  // failing ends it too, since its caller was already told.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  bool on_caller = false;
  // Recorded as soon as the headers arrive: an SSE body delivers the initialize response
  // before the transfer ends, and the next request must already carry the session.
  void AdoptSession(std::string_view id) {
    if (modern) return;
    std::lock_guard lock(owner->mutex_);
    if (owner->session_id_.empty()) owner->session_id_ = std::string(id);
  }

  // The notification stream's answer is known (its headers are complete).
  void HeadersComplete() {
    if (!notification_stream || status < 200) return;
    const bool sse = status < 300 && base::AsciiLower(content_type).find("text/event-stream") != std::string::npos;
    owner->SettleStream(sse ? NotificationStream::kEstablished : NotificationStream::kDeclined);
  }

  bool ShouldStop() const {
    return abort.load() || (!outlives_close && owner->closing_.load()) || (on_caller && owner->failed_.load());
  }

  // The caller's deadline passed: the transfer is abandoned as Abandon would.
  bool Expired() {
    if (deadline && std::chrono::steady_clock::now() >= *deadline) abort = true;
    return abort.load();
  }

  void Reset() {
    status = 0;
    content_type.clear();
    decided = is_sse = is_json = false;
    body.clear();
    error_body.clear();
    parser = std::make_unique<SseParser>(owner->options_.max_message_bytes);
  }

  // Delivers one frame; false stops the transfer.
  bool Deliver(std::string_view frame) {
    std::unique_lock memo(owner->memo_mutex_, std::try_to_lock);
    auto message = ParseFrame(frame, owner->options_.max_message_bytes, owner->callbacks_,
                              memo.owns_lock() ? &owner->tool_list_memo_ : nullptr);
    if (memo.owns_lock()) memo.unlock();
    if (!message.ok()) {
      failure = std::move(message).error();
      return false;
    }
    if (request_id && message->IsResponse() && message->id == *request_id && !got_response) {
      got_response = true;
      drain_until = std::chrono::steady_clock::now() + kDrainWindow;
    }
    owner->callbacks_.on_message(std::move(message).value());
    return true;
  }

  bool OnBytes(std::string_view bytes) {
    if (!decided) {
      decided = true;
      const std::string type = base::AsciiLower(content_type);
      is_sse = !ignore_body && status >= 200 && status < 300 && type.find("text/event-stream") != std::string::npos;
      is_json = status >= 200 && status < 300 && type.find("application/json") != std::string::npos;
    }
    if (is_sse && got_response) {
      // Past the response: nothing more is delivered; the stream is only read to its end.
      drained += bytes.size();
      return drained <= kDrainBytes;
    }
    if (is_sse) {
      std::vector<SseEvent> events;
      Status fed = parser->Feed(bytes, events);
      if (parser->retry_ms()) retry_ms = parser->retry_ms();
      if (!parser->last_event_id().empty()) last_event_id = parser->last_event_id();
      if (!fed.ok()) {
        failure = udon::MakeError("mcp.message_too_large", "a message exceeds the size limit");
        return false;
      }
      for (const SseEvent& event : events) {
        if (event.event != "message" || IsBlank(event.data)) continue;  // priming, others
        if (!Deliver(event.data)) return false;
      }
      // A request's stream has served its purpose once the response is in (a resumed GET
      // stream may stay open); what follows is drained, bounded (kDrainWindow).
      return true;
    }
    if (is_json && !ignore_body) {
      if (body.size() + bytes.size() > owner->options_.max_message_bytes) {
        failure = udon::MakeError("mcp.message_too_large", "a message exceeds the size limit");
        return false;
      }
      body.append(bytes);
    }
    // Other bodies are dropped; the start of an error body is kept to recognise a
    // server's "no valid session" answer.
    if (status >= 400 && error_body.size() < kErrorBodyBytes) {
      error_body.append(bytes.substr(0, kErrorBodyBytes - error_body.size()));
    }
    return true;
  }
};

namespace {

using Transfer = HttpTransport::Transfer;

// A server's WWW-Authenticate beyond this is not read (a challenge is a few hundred bytes).
constexpr std::size_t kMaxChallengeBytes = 8 * 1024;

// Printable ASCII without quotes or backslashes (spaces only where a list is allowed).
bool IsChallengeText(std::string_view text, std::size_t max, bool spaces) {
  return !text.empty() && text.size() <= max && std::all_of(text.begin(), text.end(), [spaces](char c) {
           return (c == ' ' && spaces) || (c > 0x20 && c < 0x7f && c != '"' && c != '\\');
         });
}

// mcp.http_status; a 401 or 403 also says what its Bearer challenge asks (details.authError,
// details.scope: RFC 6750 tokens, never the header itself), so the OAuth login can be
// refreshed, or named with the scope it lacks.
Error HttpStatusError(long status, std::string_view www_authenticate, const char* message) {
  Error error = udon::MakeError("mcp.http_status", message);
  error.details["status"] = status;
  if (status != 401 && status != 403) return error;
  const std::optional<BearerChallenge> challenge = ParseWwwAuthenticate(www_authenticate);
  if (!challenge) return error;
  if (challenge->error && IsChallengeText(*challenge->error, 64, false)) error.details["authError"] = *challenge->error;
  if (challenge->scope && IsChallengeText(*challenge->scope, 1024, true)) error.details["scope"] = *challenge->scope;
  return error;
}

size_t WriteCallback(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t total = size * count;
  return transfer->OnBytes(std::string_view(data, total)) ? total : 0;
}

size_t HeaderCallback(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t total = size * count;
  std::string_view line(data, total);
  if (Trim(line).empty()) {
    // End of one response's headers. For the notification stream this is the moment it is
    // known to stand (or not): the listing a binding relies on waits for it.
    transfer->HeadersComplete();
    return total;
  }
  if (line.rfind("HTTP/", 0) == 0) {
    // "HTTP/1.1 200 OK" or "HTTP/2 200": a new response (also after a 1xx).
    transfer->content_type.clear();
    transfer->www_authenticate.clear();
    const auto space = line.find(' ');
    if (space != std::string_view::npos) {
      transfer->status = std::strtol(std::string(line.substr(space + 1, 3)).c_str(), nullptr, 10);
    }
    return total;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return total;
  const std::string name = base::AsciiLower(Trim(line.substr(0, colon)));
  const std::string_view value = Trim(line.substr(colon + 1));
  if (name == "content-type") transfer->content_type = std::string(value);
  if (name == "www-authenticate" && transfer->www_authenticate.size() + value.size() < kMaxChallengeBytes) {
    // Several challenge headers are one list (RFC 9110 section 5.3).
    transfer->www_authenticate += (transfer->www_authenticate.empty() ? "" : ", ") + std::string(value);
  }
  if (name == "mcp-session-id" && IsVisibleAscii(value)) transfer->AdoptSession(value);
  return total;
}

}  // namespace

HttpTransport::HttpTransport(ServerConfig server, HttpOptions options)
    : server_(std::move(server)), options_(options) {}

HttpTransport::~HttpTransport() {
  Close();
  for (const auto& [multi, easy] : idle_handles_) {
    curl_easy_cleanup(static_cast<CURL*>(easy));
    curl_multi_cleanup(static_cast<CURLM*>(multi));
  }
}

Status HttpTransport::Start(TransportCallbacks callbacks) {
  GlobalInit();
  callbacks_ = std::move(callbacks);
  return OkStatus();
}

std::size_t HttpTransport::tool_lists_reused() const {
  std::lock_guard lock(memo_mutex_);
  return tool_list_memo_.reused();
}

std::string HttpTransport::session_id() const {
  std::lock_guard lock(mutex_);
  return session_id_;
}

HttpTransport::Handle HttpTransport::AcquireHandle() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_handles_.empty()) {
      Handle handle = idle_handles_.back();
      idle_handles_.pop_back();
      return handle;
    }
  }
  // One multi handle per easy handle: the multi owns the connection cache, and
  // curl_multi_poll/curl_multi_wakeup make every transfer abortable at once.
  Handle handle{curl_multi_init(), curl_easy_init()};
  if (handle.multi == nullptr || handle.easy == nullptr) {
    if (handle.easy != nullptr) curl_easy_cleanup(static_cast<CURL*>(handle.easy));
    if (handle.multi != nullptr) curl_multi_cleanup(static_cast<CURLM*>(handle.multi));
    return Handle{};
  }
  return handle;
}

void HttpTransport::ReleaseHandle(Handle handle) {
  curl_easy_reset(static_cast<CURL*>(handle.easy));
  std::lock_guard lock(mutex_);
  idle_handles_.push_back(handle);
}

void HttpTransport::Perform(Transfer& transfer, const char* method, const std::string* body,
                            const std::string& last_event_id) {
  transfer.Reset();
  const Handle handle = AcquireHandle();
  if (handle.easy == nullptr) {
    transfer.code = CURLE_FAILED_INIT;
    return;
  }
  CURL* curl = static_cast<CURL*>(handle.easy);
  CURLM* multi = static_cast<CURLM*>(handle.multi);
  curl_slist* headers = nullptr;
  auto add = [&headers](const std::string& header) {
    headers = curl_slist_append(headers, header.c_str());
  };
  if (!transfer.modern) {
    std::lock_guard lock(mutex_);
    if (!session_id_.empty()) add("Mcp-Session-Id: " + session_id_);
    if (!protocol_version_.empty()) add("MCP-Protocol-Version: " + protocol_version_);
  }
  // libcurl drops "Name:" lines; "Name;" is its spelling of a header with an empty value.
  auto add_field = [&add](const std::string& name, const std::string& value) {
    add(value.empty() ? name + ";" : name + ": " + value);
  };
  for (const auto& [name, value] : transfer.headers) add_field(name, value);
  if (body != nullptr) {
    add("Content-Type: application/json");
    add("Accept: application/json, text/event-stream");
  } else {
    add("Accept: text/event-stream");
  }
  if (!last_event_id.empty()) add("Last-Event-ID: " + last_event_id);
  add("Expect:");
  for (const auto& [name, value] : server_.headers) add_field(name, value);

  curl_easy_setopt(curl, CURLOPT_URL, server_.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  // Configured headers (credentials) go to the configured origin only. libcurl would strip
  // only Authorization and Cookie on a cross-host redirect, so none is followed at all.
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteCallback);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, HeaderCallback);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  if (body != nullptr) {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
    // A notification or response is sent on the caller's thread (a timed-out request's
    // cancellation, the reader answering a ping): a server that never answers it must not
    // hold that thread longer than a connect may take.
    if (transfer.ignore_body) {
      curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
    }
  } else if (std::string_view(method) != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  }
  const int code = RunMulti(multi, curl, transfer);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (status != 0) transfer.status = status;
  if (code == kDrainHandedOff) {
    transfer.code = CURLE_OK;
    HandOffDrain(handle, headers, transfer);
  } else {
    transfer.code = static_cast<CURLcode>(code);
    curl_slist_free_all(headers);
    ReleaseHandle(handle);
  }
  // A JSON body arrives whole: deliver it now.
  if (transfer.code == CURLE_OK && transfer.is_json && !transfer.ignore_body &&
      !transfer.failure) {
    transfer.Deliver(transfer.body);
  }
}

int HttpTransport::RunMulti(void* multi_handle, void* easy_handle, Transfer& transfer) {
  CURLM* multi = static_cast<CURLM*>(multi_handle);
  CURL* easy = static_cast<CURL*>(easy_handle);
  if (curl_multi_add_handle(multi, easy) != CURLM_OK) return CURLE_FAILED_INIT;
  {
    std::lock_guard lock(mutex_);
    transfer.multi = multi;
  }
  const int code = DriveMulti(multi, transfer);
  if (code != kDrainHandedOff) EndMulti(multi, easy, transfer);
  return code;
}

namespace {

// Milliseconds to `until`, rounded up (0 once it passed), at most `cap`.
int MillisecondsUntil(std::chrono::steady_clock::time_point until, int cap) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<long long>(left.count(), 0, cap));
}

}  // namespace

int HttpTransport::DriveMulti(void* multi_handle, Transfer& transfer) {
  CURLM* multi = static_cast<CURLM*>(multi_handle);
  int code = CURLE_OK;
  int running = 1;
  while (true) {
    if (curl_multi_perform(multi, &running) != CURLM_OK) {
      code = CURLE_FAILED_INIT;
      break;
    }
    if (running == 0) break;
    if (transfer.ShouldStop() || transfer.Expired()) {
      code = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    // The caller has its answer: what is left of the stream is not its to wait for.
    if (transfer.got_response && transfer.on_caller) return kDrainHandedOff;
    int wait_ms = 1000;
    if (transfer.deadline) wait_ms = MillisecondsUntil(*transfer.deadline, wait_ms);
    if (transfer.got_response) {
      if (std::chrono::steady_clock::now() >= transfer.drain_until) {
        code = CURLE_ABORTED_BY_CALLBACK;  // the stream outlived its response: cut it
        break;
      }
      wait_ms = std::min(wait_ms, MillisecondsUntil(transfer.drain_until, wait_ms) + 1);
    }
    curl_multi_poll(multi, nullptr, 0, wait_ms, nullptr);
  }
  int queued = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
    if (msg->msg == CURLMSG_DONE && running == 0) code = msg->data.result;
  }
  return code;
}

void HttpTransport::EndMulti(void* multi, void* easy, Transfer& transfer) {
  {
    std::lock_guard lock(mutex_);
    transfer.multi = nullptr;
  }
  curl_multi_remove_handle(static_cast<CURLM*>(multi), static_cast<CURL*>(easy));
}

void HttpTransport::HandOffDrain(Handle handle, void* header_list, Transfer& transfer) {
  auto drain = std::make_shared<Transfer>();
  drain->owner = this;
  drain->status = transfer.status;
  drain->decided = drain->is_sse = drain->got_response = true;
  drain->drain_until = transfer.drain_until;
  drain->drained = transfer.drained;
  CURL* easy = static_cast<CURL*>(handle.easy);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, drain.get());
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, drain.get());
  auto finish = [this, handle, header_list, drain] {
    if (!drain->ShouldStop()) (void)DriveMulti(handle.multi, *drain);
    EndMulti(handle.multi, handle.easy, *drain);
    curl_slist_free_all(static_cast<curl_slist*>(header_list));
    ReleaseHandle(handle);
  };
  {
    std::lock_guard lock(mutex_);
    transfer.multi = nullptr;
    if (!closing_) {
      drain->multi = handle.multi;
      EnqueueLocked(std::move(finish));
      return;
    }
  }
  finish();  // closing: cut here, nobody is left to drain it
}

void HttpTransport::WakeLocked(Transfer& transfer) {
  if (transfer.multi != nullptr) curl_multi_wakeup(static_cast<CURLM*>(transfer.multi));
}

bool HttpTransport::DeliverErrorBody(Transfer& transfer) {
  auto parsed = ParseFrame(transfer.error_body, options_.max_message_bytes);
  if (!parsed.ok() || parsed->kind != MessageKind::kError) return false;
  // Some servers cannot read the id of a request they reject; the exchange says whose it is.
  parsed->id = *transfer.request_id;
  callbacks_.on_message(std::move(parsed).value());
  return true;
}

bool HttpTransport::SessionGone(const Transfer& transfer) const {
  {
    std::lock_guard lock(mutex_);
    if (session_id_.empty()) return false;
  }
  // 404 is the spec's answer; the TypeScript SDK answers 400 "No valid session ID".
  return transfer.status == 404 ||
         (transfer.status == 400 && base::AsciiLower(transfer.error_body).find("session") != std::string::npos);
}

void HttpTransport::CloseWith(Error error) {
  if (closing_ || failed_.exchange(true)) return;
  callbacks_.on_closed(std::move(error));
  AbortCallerTransfers();
}

void HttpTransport::AbortCallerTransfers() {
  std::lock_guard lock(mutex_);
  for (auto& [id, transfer] : active_) {
    if (!transfer->on_caller) continue;
    transfer->abort = true;
    WakeLocked(*transfer);
  }
  closing_cv_.notify_all();
}

bool HttpTransport::SleepUnlessClosing(std::chrono::milliseconds duration,
                                       const Transfer* transfer) {
  std::unique_lock lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (!closing_ && (transfer == nullptr || !transfer->abort)) {
    if (closing_cv_.wait_until(lock, deadline) == std::cv_status::timeout) break;
  }
  return !closing_ && (transfer == nullptr || !transfer->abort);
}

Status HttpTransport::Send(const Message& message) { return SendRequest(message, {}); }

Status HttpTransport::SendRequest(const Message& message, const RequestHeaders& headers) {
  if (closing_ || failed_) return udon::MakeError("mcp.send_failed", "the connection is closed");
  // A request, or a reply to a server's request that arrived on a caller's exchange: a
  // server that is slow to take the reply must not hold that caller past its deadline.
  const bool reply_on_caller = exchanging_on == this && message.IsResponse();
  if (message.kind == MessageKind::kRequest || reply_on_caller) {
    std::lock_guard lock(mutex_);
    // Close() may have run since the check above; it joins only the workers it saw.
    if (closing_) return udon::MakeError("mcp.send_failed", "the connection is closed");
    if (reply_on_caller) {
      EnqueueLocked([this, message] { (void)PostMessage(message); });
    } else {
      EnqueueLocked([this, message, headers] { RunRequest(message, headers, std::nullopt); });
    }
    return OkStatus();
  }
  return PostMessage(message);
}

void HttpTransport::EnqueueLocked(std::function<void()> job) {
  ReapWorkers();
  queued_.push_back(std::move(job));
  // Every queued job needs a worker of its own now (a long call must not hold up the next
  // request): an idle one, else a new one.
  if (queued_.size() <= idle_workers_) {
    work_ready_.notify_one();
    return;
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  workers_.push_back(Worker{std::thread([this, done] { RunWorker(done); }), done});
}

Status HttpTransport::ExchangeNow(const Message& request, const RequestHeaders& headers,
                                  std::chrono::steady_clock::time_point deadline) {
  if (request.kind != MessageKind::kRequest) return SendRequest(request, headers);
  const std::thread::id self = std::this_thread::get_id();
  {
    std::lock_guard lock(mutex_);
    if (closing_ || failed_) return udon::MakeError("mcp.send_failed", "the connection is closed");
    caller_threads_.insert(self);
  }
  const HttpTransport* outer = exchanging_on;
  exchanging_on = this;
  RunRequest(request, headers, deadline);
  exchanging_on = outer;
  std::lock_guard lock(mutex_);
  caller_threads_.erase(caller_threads_.find(self));
  caller_exchange_ended_.notify_all();
  return OkStatus();
}

Status HttpTransport::PostMessage(const Message& message) {
  Transfer transfer;
  transfer.owner = this;
  // Some servers answer a notification with 200 and a body (the conformance mocks do).
  transfer.ignore_body = true;
  const std::string body = SerializeMessage(message);
  Perform(transfer, "POST", &body, "");
  if (transfer.failure) {
    CloseWith(*transfer.failure);
    return *transfer.failure;
  }
  if (transfer.code != CURLE_OK) {
    Error error = udon::MakeError("mcp.send_failed", "the HTTP exchange failed");
    error.details["curlCode"] = static_cast<int>(transfer.code);
    error.details["curlError"] = curl_easy_strerror(transfer.code);  // libcurl's fixed text, for diagnosis
    return error;
  }
  if (transfer.status == 200 || transfer.status == 202) return OkStatus();
  if (SessionGone(transfer)) {
    Error error = udon::MakeError("mcp.session_expired", "the server ended the session");
    CloseWith(error);
    return error;
  }
  return HttpStatusError(transfer.status, transfer.www_authenticate, "the server answered with an HTTP error");
}

void HttpTransport::RunRequest(const Message& message, const RequestHeaders& headers, Deadline deadline) {
  Transfer transfer;
  transfer.owner = this;
  transfer.request_id = message.id;
  transfer.deadline = deadline;
  transfer.on_caller = deadline.has_value();
  if (const std::string version = ModernVersionOf(message); !version.empty()) {
    transfer.modern = true;
    transfer.headers = MirroredHeaders(message, version);
  }
  transfer.headers.insert(transfer.headers.end(), headers.begin(), headers.end());
  std::optional<std::int64_t> key;
  if (message.id.is_number_integer()) key = message.id.get<std::int64_t>();
  if (key) {
    std::lock_guard lock(mutex_);
    active_[*key] = &transfer;
  }
  const std::string body = SerializeMessage(message);
  Perform(transfer, "POST", &body, "");
  int attempts = 0;
  std::optional<Error> error;
  while (true) {
    if (transfer.failure) {
      CloseWith(*transfer.failure);
      break;
    }
    if (closing_ || transfer.abort || transfer.got_response) break;
    if (transfer.code != CURLE_OK) {
      error = udon::MakeError("mcp.disconnected", "the HTTP exchange failed after sending");
      error->details["curlCode"] = static_cast<int>(transfer.code);
      error->details["curlError"] = curl_easy_strerror(transfer.code);
      break;
    }
    if (transfer.status < 200 || transfer.status >= 300) {
      // A 401 or 403 refuses the credential before anything was processed, whatever its body.
      if (transfer.status == 401 || transfer.status == 403) {
        error = HttpStatusError(transfer.status, transfer.www_authenticate, "the server refused the credential");
        break;
      }
      if (transfer.modern && DeliverErrorBody(transfer)) break;
      if (SessionGone(transfer)) {
        CloseWith(udon::MakeError("mcp.session_expired", "the server ended the session"));
        break;
      }
      error = HttpStatusError(transfer.status, transfer.www_authenticate,
                              transfer.status >= 300 && transfer.status < 400
                                  ? "the server answered with a redirect, which is never followed "
                                    "(configure the final URL)"
                                  : "the server answered with an HTTP error");
      break;
    }
    // 2xx without our response: resume the stream if it can be resumed.
    if (transfer.modern || !transfer.is_sse || transfer.last_event_id.empty() ||
        attempts >= options_.max_resume_attempts) {
      error = udon::MakeError("mcp.stream_ended", "the response stream ended without a response");
      error->details["status"] = transfer.status;
      break;
    }
    ++attempts;
    auto wait = transfer.retry_ms ? std::chrono::milliseconds(*transfer.retry_ms) : options_.default_retry;
    if (deadline) wait = std::min(wait, std::chrono::milliseconds(MillisecondsUntil(*deadline, std::numeric_limits<int>::max())));
    if (!SleepUnlessClosing(wait, &transfer) || transfer.Expired()) break;
    const std::string resume_from = transfer.last_event_id;
    Perform(transfer, "GET", nullptr, resume_from);
    if (transfer.last_event_id.empty()) transfer.last_event_id = resume_from;
  }
  if (key) {
    std::lock_guard lock(mutex_);
    active_.erase(*key);
  }
  if (error) callbacks_.on_request_failed(message.id, std::move(*error));
}

void HttpTransport::SettleStream(NotificationStream state) {
  std::lock_guard lock(mutex_);
  if (stream_state_ != NotificationStream::kPending) return;  // only the first answer counts
  stream_state_ = state;
  stream_settled_.notify_all();
}

NotificationStream HttpTransport::AwaitNotificationStream(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  stream_settled_.wait_for(lock, timeout, [this] {
    return stream_state_ != NotificationStream::kPending || closing_.load();
  });
  return stream_state_;
}

void HttpTransport::RunNotificationStream() {
  Transfer transfer;
  transfer.owner = this;
  transfer.notification_stream = true;
  {
    std::lock_guard lock(mutex_);
    stream_transfer_ = &transfer;
  }
  RunStreamLoop(transfer);
  SettleStream(NotificationStream::kFailed);  // ended before any answer: it never stood
  std::lock_guard lock(mutex_);
  stream_transfer_ = nullptr;
}

void HttpTransport::RunStreamLoop(Transfer& transfer) {
  std::string last_event_id;
  int failures = 0;
  while (!closing_ && failures < options_.max_resume_attempts) {
    Perform(transfer, "GET", nullptr, last_event_id);
    if (transfer.failure) {
      CloseWith(*transfer.failure);
      return;
    }
    // 405 (no stream offered), 404, or anything else that is not a stream: give up.
    if (transfer.code == CURLE_OK && !transfer.is_sse) return;
    if (!transfer.last_event_id.empty()) last_event_id = transfer.last_event_id;
    failures = transfer.code == CURLE_OK ? 0 : failures + 1;
    if (last_event_id.empty() && transfer.code == CURLE_OK) ++failures;
    const auto wait = transfer.retry_ms ? std::chrono::milliseconds(*transfer.retry_ms)
                                        : options_.default_retry;
    if (!SleepUnlessClosing(wait, &transfer)) return;
  }
}

void HttpTransport::OnInitialized(const std::string& protocol_version) {
  std::lock_guard lock(mutex_);
  protocol_version_ = protocol_version;
  if (options_.notification_stream && !notification_stream_.joinable() && !closing_) {
    stream_state_ = NotificationStream::kPending;
    notification_stream_ = std::thread([this] { RunNotificationStream(); });
  }
}

void HttpTransport::Abandon(const json::Value& id) {
  if (!id.is_number_integer()) return;
  std::lock_guard lock(mutex_);
  auto it = active_.find(id.get<std::int64_t>());
  if (it != active_.end()) {
    it->second->abort = true;
    WakeLocked(*it->second);
  }
  closing_cv_.notify_all();
}

// Runs queued requests until the transport closes; beyond kMaxIdleWorkers idle ones a
// worker ends, so a burst's threads do not all stay.
void HttpTransport::RunWorker(std::shared_ptr<std::atomic<bool>> done) {
  constexpr std::size_t kMaxIdleWorkers = 4;
  std::unique_lock lock(mutex_);
  for (;;) {
    if (queued_.empty()) {
      if (closing_ || idle_workers_ >= kMaxIdleWorkers) break;
      ++idle_workers_;
      work_ready_.wait(lock, [this] { return !queued_.empty() || closing_; });
      --idle_workers_;
      continue;
    }
    std::function<void()> job = std::move(queued_.front());
    queued_.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // what it holds goes before the lock is taken again
    lock.lock();
  }
  *done = true;
}

void HttpTransport::ReapWorkers() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (*it->done) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

void HttpTransport::Close() {
  std::vector<Worker> workers;
  std::thread stream;
  {
    std::lock_guard lock(mutex_);
    if (closing_.exchange(true)) return;
    for (auto& [id, transfer] : active_) {
      transfer->abort = true;
      WakeLocked(*transfer);
    }
    if (stream_transfer_ != nullptr) WakeLocked(*stream_transfer_);
    closing_cv_.notify_all();
    work_ready_.notify_all();
    workers.swap(workers_);
    stream.swap(notification_stream_);
  }
  for (auto& worker : workers) worker.thread.join();
  if (stream.joinable()) stream.join();
  {
    // Aborted above; once they are out, nothing runs a transfer of this transport.
    std::unique_lock lock(mutex_);
    const std::thread::id self = std::this_thread::get_id();
    caller_exchange_ended_.wait(lock, [&] {
      return std::all_of(caller_threads_.begin(), caller_threads_.end(), [&](auto id) { return id == self; });
    });
  }
  if (!session_id().empty()) {
    Transfer transfer;
    transfer.owner = this;
    transfer.outlives_close = true;
    Perform(transfer, "DELETE", nullptr, "");
  }
}

}  // namespace udon::mcp
