// Legacy sessions of the Streamable HTTP server: ids, the session table, the session's GET
// stream of unsolicited messages, and DELETE.
#include <random>
#include <utility>

#include "mcp/server/internal/http_impl.h"

namespace udon::mcp {
namespace {

std::string NewSessionId() {
  static std::mutex mutex;
  static std::random_device device;
  static std::mt19937_64 generator(device());
  std::lock_guard lock(mutex);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 2; ++i) {
    std::uint64_t bits = generator();
    for (int k = 0; k < 16; ++k, bits >>= 4) id.push_back(kHex[bits & 0xf]);
  }
  return id;
}

}  // namespace

// initialize: a new session under a fresh id, refused while the table is full.
std::shared_ptr<HttpSession> HttpServer::Impl::OpenSession(const httplib::Request& request,
                                                           httplib::Response& response) {
  if (request.has_header(kSessionHeader)) {
    SetJsonRpcError(response, 400, kInvalidRequest, "initialize must not carry a session id");
    return nullptr;
  }
  auto session = std::make_shared<HttpSession>();
  session->stream = std::make_shared<SessionStream>(options.max_queued_messages);
  session->core = server.NewSession(session->stream);
  const std::string id = NewSessionId();
  {
    std::lock_guard lock(sessions_mutex);
    if (sessions.size() >= options.max_sessions) {
      SetJsonRpcError(response, 503, kInvalidRequest, "too many sessions");
      return nullptr;
    }
    sessions[id] = session;
  }
  response.set_header(kSessionHeader, id);
  return session;
}

std::shared_ptr<HttpSession> HttpServer::Impl::FindSession(const httplib::Request& request,
                                                           httplib::Response& response) {
  if (!request.has_header(kSessionHeader)) {
    SetJsonRpcError(response, 400, kInvalidRequest, "missing session id");
    return nullptr;
  }
  std::lock_guard lock(sessions_mutex);
  auto it = sessions.find(request.get_header_value(kSessionHeader));
  if (it == sessions.end()) {
    SetJsonRpcError(response, 404, kInvalidRequest, "session not found");
    return nullptr;
  }
  return it->second;
}

void HttpServer::Impl::Get(const httplib::Request& request, httplib::Response& response) {
  if (!Admit(request, response)) return;
  if (!HeaderHas(request, "Accept", "text/event-stream")) {
    SetJsonRpcError(response, 406, kInvalidRequest, "Accept must list text/event-stream");
    return;
  }
  auto session = FindSession(request, response);
  if (session == nullptr) return;
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
      [session, ticket](bool) { session->stream->Release(); });
}

void HttpServer::Impl::Delete(const httplib::Request& request, httplib::Response& response) {
  if (!Admit(request, response)) return;
  auto session = FindSession(request, response);
  if (session == nullptr) return;
  {
    std::lock_guard lock(sessions_mutex);
    sessions.erase(request.get_header_value(kSessionHeader));
  }
  session->stream->Close();
  response.status = 200;
}

}  // namespace udon::mcp
