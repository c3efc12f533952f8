// 2025-03-26 to 2025-11-25 over Streamable HTTP: requests within a session, answered as
// JSON or as an SSE stream of their own; a modern-only server's refusal of them.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "mcp/server/internal/http_impl.h"
#include "mcp/server/internal/server_common.h"

namespace udon::mcp {

// A legacy (2025-03-26 to 2025-11-25) request: initialize opens a session, anything else
// belongs to one; a request is answered as JSON or as an SSE stream of its own.
void HttpServer::Impl::ServeLegacy(const httplib::Request& request, Message message, httplib::Response& response,
                                   const std::shared_ptr<const Caller>& caller) {
  if (!server.ServesLegacy()) {
    RefuseLegacy(std::move(message), response);
    return;
  }
  std::shared_ptr<HttpSession> session =
      message.kind == MessageKind::kRequest && message.method == "initialize" ? OpenSession(request, response, caller.get())
                                                                             : FindSession(request, response, caller.get());
  if (session == nullptr) return;
  if (message.kind != MessageKind::kRequest) {
    session->core->Handle(std::move(message), session->stream);
    response.status = 202;
    return;
  }
  HandleOptions handle_options;
  handle_options.caller = caller;
  if (options.json_responses) {
    auto collector = std::make_shared<JsonCollector>(session->stream);
    session->core->Handle(std::move(message), collector, nullptr, handle_options);
    std::string body = collector->body();
    response.status = body.empty() ? 202 : 200;  // empty: the request was cancelled
    if (!body.empty()) SetJsonBody(response, std::move(body));
    return;
  }
  if (options.json_single_answers && internal::ProgressToken(message) == nullptr) {
    AnswerCollected(*session, std::move(message), handle_options, response);
    return;
  }
  AnswerWithSse(std::move(session), std::move(message), std::move(handle_options), response);
}

// A request that cannot report progress, handled before its answer is written: its
// response alone comes back as JSON; with anything sent before it (logs, server requests),
// or nothing (cancelled), the same SSE stream AnswerWithSse would have sent, all at once.
void HttpServer::Impl::AnswerCollected(HttpSession& session, Message message, const HandleOptions& handle_options,
                                       httplib::Response& response) {
  auto collected = std::make_shared<RequestChannel>();
  session.core->Handle(std::move(message), collected, nullptr, handle_options);
  collected->Finish();
  bool finished = false;
  std::vector<RequestChannel::Frame> frames = collected->Take(std::chrono::milliseconds(0), finished);
  if (frames.size() == 1 && frames.front().response) {
    SetJsonBody(response, std::move(frames.front().data));
    return;
  }
  const std::string prefix = std::to_string(session.next_stream++) + "-";
  std::size_t next = 0;
  std::string body = FormatSseEvent("", prefix + std::to_string(next++), {}, options.retry_ms);
  for (const RequestChannel::Frame& frame : frames) {
    if (!frame.keep_alive) body += FormatSseEvent(frame.data, prefix + std::to_string(next++), "message");
  }
  response.set_header("Cache-Control", "no-cache");
  response.set_content(body, "text/event-stream");  // httplib never compresses an event stream
}

// A modern-only server answers a legacy request (initialize) with the core's refusal.
void HttpServer::Impl::RefuseLegacy(Message message, httplib::Response& response) {
  if (message.kind != MessageKind::kRequest) {
    SetJsonRpcError(response, 400, kInvalidRequest, "unsupported protocol version");
    return;
  }
  auto session = server.NewSession(std::make_shared<NullSink>());
  auto collector = std::make_shared<JsonCollector>(std::make_shared<NullSink>());
  session->Handle(std::move(message), collector);
  response.status = 400;
  SetJsonBody(response, collector->body());
}

void HttpServer::Impl::AnswerWithSse(std::shared_ptr<HttpSession> session, Message message,
                                     HandleOptions handle_options, httplib::Response& response) {
  response.set_header("Cache-Control", "no-cache");
  auto pending = std::make_shared<Message>(std::move(message));
  const long retry_ms = options.retry_ms;
  response.set_chunked_content_provider(
      "text/event-stream",
      [session, pending, retry_ms, handle_options](std::size_t, httplib::DataSink& sink) {
        // The header block goes before the call runs: the client reads it meanwhile (held
        // until the answer, it measured slower). The answer and the stream's end leave
        // together (PostStream).
        if (ConnectionStream* connection = ServingStream(); connection != nullptr && !connection->SendHeld()) {
          return false;
        }
        const std::string prefix = std::to_string(session->next_stream++) + "-";
        auto stream = std::make_shared<PostStream>(&sink, prefix);
        stream->Prime(retry_ms);
        session->core->Handle(std::move(*pending), stream, nullptr, handle_options);
        stream->Detach();
        sink.done();
        return true;
      });
}

}  // namespace udon::mcp
