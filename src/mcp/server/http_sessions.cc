// Legacy sessions of the Streamable HTTP server: ids, the session table (idle expiry and
// eviction), the session's GET stream of unsolicited messages, and DELETE.
#include <utility>

#include "base/random.h"
#include "mcp/server/internal/http_impl.h"

namespace udon::mcp {

std::int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

RequestHold::Activity::Activity(std::shared_ptr<HttpSession> s) : session(std::move(s)) {
  ++session->busy;
  session->last_used = SteadyNanos();
}

RequestHold::Activity::~Activity() {
  session->last_used = SteadyNanos();
  --session->busy;
}

// Called with sessions_mutex held: the session leaves the table, its GET stream ends.
void HttpServer::Impl::Forget(std::map<std::string, std::shared_ptr<HttpSession>>::iterator it) {
  it->second->stream->Close();
  sessions.erase(it);
}

// Called with sessions_mutex held: the session `id` names, unless it has been idle (no
// request in flight, no GET stream) beyond session_idle: then it is forgotten here.
std::shared_ptr<HttpSession> HttpServer::Impl::LiveSession(const std::string& id) {
  auto it = sessions.find(id);
  if (it == sessions.end()) return nullptr;
  const HttpSession& session = *it->second;
  const auto idle = std::chrono::nanoseconds(SteadyNanos() - session.last_used.load());
  if (session.busy.load() == 0 && idle >= options.session_idle) {
    Forget(it);
    return nullptr;
  }
  return it->second;
}

// Called with sessions_mutex held, the table full: forgets every expired session, else the
// least recently used idle one (its client's next request gets 404 and initializes again).
// False when every session is busy.
bool HttpServer::Impl::MakeRoom() {
  const std::int64_t now = SteadyNanos();
  auto oldest = sessions.end();
  for (auto it = sessions.begin(); it != sessions.end();) {
    const HttpSession& session = *it->second;
    if (session.busy.load() != 0) {
      ++it;
    } else if (std::chrono::nanoseconds(now - session.last_used.load()) >= options.session_idle) {
      Forget(it++);
    } else {
      if (oldest == sessions.end() || session.last_used.load() < oldest->second->last_used.load()) oldest = it;
      ++it;
    }
  }
  if (sessions.size() < options.max_sessions) return true;
  if (oldest == sessions.end()) return false;
  Forget(oldest);
  return true;
}

// initialize: a new session under a fresh id (128 bits from the OS CSPRNG: a session id is
// the only thing that stands between a client and another's session).
std::shared_ptr<HttpSession> HttpServer::Impl::OpenSession(const httplib::Request& request,
                                                           httplib::Response& response, const Caller* caller) {
  if (request.has_header(kSessionHeader)) {
    SetJsonRpcError(response, 400, kInvalidRequest, "initialize must not carry a session id");
    return nullptr;
  }
  auto id = base::RandomHex(16);
  if (!id.ok()) {
    SetJsonRpcError(response, 500, kInternalError, "no randomness for a session id");
    return nullptr;
  }
  auto session = std::make_shared<HttpSession>();
  session->stream = std::make_shared<SessionStream>(options.max_queued_messages);
  session->core = server.NewSession(session->stream);
  session->core->SetOrigin("tcp", *id);
  session->last_used = SteadyNanos();
  if (caller != nullptr) session->subject = caller->subject;
  {
    std::lock_guard lock(sessions_mutex);
    if (sessions.size() >= options.max_sessions && !MakeRoom()) {
      SetJsonRpcError(response, 503, kInvalidRequest, "too many sessions");
      return nullptr;
    }
    sessions[*id] = session;
  }
  response.set_header(kSessionHeader, *id);
  return session;
}

// A session opened by one authenticated caller is not found for another: its id alone
// gives no one else its stream or its place.
std::shared_ptr<HttpSession> HttpServer::Impl::FindSession(const httplib::Request& request,
                                                           httplib::Response& response, const Caller* caller) {
  if (!request.has_header(kSessionHeader)) {
    SetJsonRpcError(response, 400, kInvalidRequest, "missing session id");
    return nullptr;
  }
  std::lock_guard lock(sessions_mutex);
  auto session = LiveSession(request.get_header_value(kSessionHeader));
  if (session != nullptr && session->subject != (caller != nullptr ? caller->subject : std::string())) {
    session = nullptr;
  }
  if (session == nullptr) SetJsonRpcError(response, 404, kInvalidRequest, "session not found");
  return session;
}

void HttpServer::Impl::Get(const httplib::Request& request, httplib::Response& response, RequestHold& hold) {
  if (!Admit(request, response) || !Enter(request, response, hold, true)) return;
  if (!HeaderHas(request, "Accept", "text/event-stream")) {
    SetJsonRpcError(response, 406, kInvalidRequest, "Accept must list text/event-stream");
    return;
  }
  auto session = FindSession(request, response, hold.caller.get());
  if (session == nullptr) return;
  // The stream mostly waits: its thread is counted out of the connection threads.
  std::shared_ptr<WorkerPool::Lasting> lasting = WorkerPool::HoldLasting();
  if (lasting == nullptr) {
    SetJsonRpcError(response, 503, kInternalError, "too many streams");
    return;
  }
  const std::uint64_t generation = session->stream->TryOpen();
  if (generation == 0) {
    SetJsonRpcError(response, 409, kInvalidRequest, "a GET stream is already open");
    return;
  }
  // The client's departure ends the stream at once, not at the next keep-alive.
  std::shared_ptr<PeerWatch::Ticket> ticket =
      WatchClient(request, [stream = session->stream, generation] { stream->Depart(generation); });
  response.set_header("Cache-Control", "no-cache");
  const long retry_ms = options.retry_ms;
  const auto keep_alive = std::chrono::milliseconds(std::max(options.keep_alive_ms, 1L));
  response.set_chunked_content_provider(
      "text/event-stream",
      [this, session, retry_ms, keep_alive, ticket](std::size_t, httplib::DataSink& sink) {
        std::uint64_t next = 0;
        auto write = [&](const std::string& event) { return sink.write(event.data(), event.size()); };
        // The priming event carries whatever was queued before the stream opened, in one
        // write: a client that has seen the stream open sees those messages next, before
        // anything it asks afterwards on another connection comes back.
        std::string opening = FormatSseEvent("", "0-" + std::to_string(next++), {}, retry_ms);
        bool closed_early = false;
        bool gone = false;
        for (const auto& frame : session->stream->Take(std::chrono::milliseconds(0), closed_early, gone)) {
          opening += FormatSseEvent(frame, "0-" + std::to_string(next++), "message");
        }
        if (!write(opening)) return false;
        auto last_write = std::chrono::steady_clock::now();
        while (!stopping.load()) {
          bool closed = false;
          // Woken by a message, the session's end or the client's departure; else at the
          // next keep-alive. Stop() closes every session stream.
          const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
              keep_alive - (std::chrono::steady_clock::now() - last_write));
          auto frames = session->stream->Take(std::max(wait, std::chrono::milliseconds(0)), closed, gone);
          if (gone) return false;
          for (const auto& frame : frames) {
            if (!write(FormatSseEvent(frame, "0-" + std::to_string(next++), "message"))) {
              return false;
            }
            last_write = std::chrono::steady_clock::now();
          }
          if (closed) break;
          if (std::chrono::steady_clock::now() - last_write >= keep_alive) {
            if (!write(": keep-alive\n\n")) return false;
            last_write = std::chrono::steady_clock::now();
          }
        }
        sink.done();
        return true;
      },
      [session, ticket, lasting](bool) { session->stream->Release(); });
}

void HttpServer::Impl::Delete(const httplib::Request& request, httplib::Response& response, RequestHold& hold) {
  if (!Admit(request, response) || !Enter(request, response, hold, false)) return;
  auto session = FindSession(request, response, hold.caller.get());
  if (session == nullptr) return;
  {
    std::lock_guard lock(sessions_mutex);
    auto it = sessions.find(request.get_header_value(kSessionHeader));
    if (it != sessions.end() && it->second == session) Forget(it);
  }
  response.status = 200;
}

}  // namespace udon::mcp
