// 2026-07-28 over Streamable HTTP: stateless requests, their metadata headers, and their
// answers (one message, or a stream while their work runs).
#include <utility>

#include "mcp/protocol/param_headers.h"
#include "mcp/server/internal/http_impl.h"

namespace udon::mcp {
namespace {

// Whether a decoded Mcp-Param value stands for the body value (integers compare as numbers).
bool HeaderMatchesValue(const std::string& header, const json::Value& value) {
  if (value.is_string()) return header == value.get<std::string>();
  if (value.is_boolean()) return header == (value.get<bool>() ? "true" : "false");
  if (value.is_number()) {
    char* end = nullptr;
    errno = 0;
    const double parsed = std::strtod(header.c_str(), &end);
    return !header.empty() && end == header.c_str() + header.size() && errno == 0 &&
           parsed == value.get<double>();
  }
  return header == value.dump();
}

}  // namespace

// Modern: a modern MCP-Protocol-Version header, or a body the core serves as modern.
bool HttpServer::Impl::IsModern(const httplib::Request& request, const Message& message) const {
  if (!server.ServesModern()) return false;
  if (auto header = HeaderValue(request, http_header::kProtocolVersion);
      header && IsModernProtocolVersion(*header)) {
    return true;
  }
  return message.kind == MessageKind::kRequest && server.RequestEra(message) == Era::kModern;
}

// The request metadata headers of a modern request, in the order the specification's
// errors need: _meta fields (-32602), MCP-Protocol-Version equal to _meta (-32020), a
// supported version (-32022), Mcp-Method, an implemented method (404, -32601), Mcp-Name and
// the Mcp-Param-* headers of the tool's x-mcp-header properties (-32020).
bool HttpServer::Impl::CheckModernHeaders(const httplib::Request& request, const Message& message,
                                          httplib::Response& response) {
  std::optional<Message> rejected = ValidateModernRequest(server, message);
  if (rejected && rejected->error["code"] == kInvalidParams) {
    response.status = 400;
    SetJsonBody(response, SerializeMessage(*rejected));
    return false;
  }
  const std::string requested =
      message.params["_meta"][std::string(meta::kProtocolVersion)].get<std::string>();
  if (HeaderValue(request, http_header::kProtocolVersion) != requested) {
    SetModernError(response, message.id, rpc_code::kHeaderMismatch,
                   "MCP-Protocol-Version header does not match _meta protocolVersion");
    return false;
  }
  if (rejected) {
    response.status = 400;
    SetJsonBody(response, SerializeMessage(*rejected));
    return false;
  }
  if (HeaderValue(request, http_header::kMethod) != message.method) {
    SetModernError(response, message.id, rpc_code::kHeaderMismatch,
                   "Mcp-Method header does not match the body method");
    return false;
  }
  if (!server.ServesModernMethod(message.method)) {
    SetModernError(response, message.id, kMethodNotFound, "method not found");
    return false;
  }
  // Mcp-Name mirrors params.name (tools/call, prompts/get) or params.uri (resources/read).
  const char* name_field = message.method == "tools/call" || message.method == "prompts/get" ? "name"
                           : message.method == "resources/read"                              ? "uri"
                                                                                             : nullptr;
  if (name_field == nullptr) return true;
  const json::Value& params = message.params;
  if (!params.contains(name_field) || !params[name_field].is_string()) return true;  // the core's -32602
  const std::string name = params[name_field].get<std::string>();
  std::string decoded;
  auto name_header = HeaderValue(request, http_header::kName);
  if (!name_header || !DecodeHeaderValue(*name_header, decoded) || decoded != name) {
    SetModernError(response, message.id, rpc_code::kHeaderMismatch,
                   "Mcp-Name header does not match the body name");
    return false;
  }
  if (message.method != "tools/call") return true;
  return CheckParamHeaders(request, message, name, response);
}

// One Mcp-Param-{Name} per x-mcp-header annotation of the called tool whose argument is
// present and not null, equal to it, and none for an absent or null one (-32020). The annotations are read by the walk the
// client mirrors them with (mcp/param_headers.h); a tool whose annotations break the
// revision's rules cannot have its headers checked, so its calls are refused (-32603),
// as a client refuses to call it.
bool HttpServer::Impl::CheckParamHeaders(const httplib::Request& request, const Message& message,
                                         const std::string& tool_name, httplib::Response& response) {
  // One tool's lookup, not a copy of the catalog: a call costs the same at 10 tools or 10,000.
  const std::optional<json::Value> tool = server.ListedTool(tool_name);
  if (!tool || !tool->contains("inputSchema")) return true;  // the core answers for an unknown tool
  auto params = ParamHeadersOf(*tool);
  if (!params.ok()) {
    SetModernError(response, message.id, kInternalError, "the tool's x-mcp-header annotations are invalid");
    return false;
  }
  const json::Value no_arguments = json::Value::object();
  const json::Value& arguments = message.params.contains("arguments") && message.params["arguments"].is_object()
                                     ? message.params["arguments"]
                                     : no_arguments;
  for (const ParamHeader& param : *params) {
    const json::Value* value = ParamValue(param, arguments);
    const bool has_value = value != nullptr && !value->is_null();
    auto header = HeaderValue(request, std::string(http_header::kParamPrefix) + param.name);
    bool matches = !has_value && !header;
    std::string decoded;
    if (has_value && header) {
      matches = DecodeHeaderValue(*header, decoded) && HeaderMatchesValue(decoded, *value);
    }
    if (!matches) {
      SetModernError(response, message.id, rpc_code::kHeaderMismatch,
                     "an Mcp-Param header does not match its argument");
      return false;
    }
  }
  return true;
}

// A stateless request: its own short-lived session, no Mcp-Session-Id. A single answer
// comes back as JSON (or one SSE event) with the status its error needs; anything that
// streams (progress, logs, a listen stream) comes back as SSE without event ids.
//
// The request is handled on this thread; only lasting work (a tools/call, a listen stream)
// goes to the bounded work pool, so that this thread can stream its messages meanwhile. No
// free thread there: 503 at once. While that work runs, the client's departure (its socket
// closed) cancels it at once.
void HttpServer::Impl::ServeModern(const httplib::Request& http_request, Message message,
                                   httplib::Response& response, std::shared_ptr<const Caller> caller) {
  if (message.kind != MessageKind::kRequest) {
    response.status = 202;  // no client notification means anything here without a session
    return;
  }
  auto session = std::shared_ptr<ServerSession>(server.NewSession(std::make_shared<NullSink>()));
  session->SetOrigin("tcp");
  auto channel = std::make_shared<RequestChannel>();
  std::shared_ptr<PeerWatch::Ticket> ticket;
  // A listen stream mostly waits: its threads here and in the work pool are counted out of
  // `threads` (contract 7.17).
  const bool listen = message.method == kListenMethod;
  std::shared_ptr<WorkerPool::Lasting> lasting;
  bool deferred = false;
  bool refused = false;
  const json::Value id = message.id;
  const WorkRunner runner = [&](std::function<void()> work) {
    deferred = true;
    if (listen) lasting = WorkerPool::HoldLasting();
    if ((listen && lasting == nullptr) || !work_pool.TryReserve()) {
      refused = true;  // the session is this request's alone: its in-flight entry goes with it
      return;
    }
    ticket = WatchClient(http_request, [session, channel] {
      channel->Close();
      session->CancelAll();
    });
    {
      std::lock_guard lock(workers_mutex);
      ++workers;
      running.insert(session);
    }
    work_pool.RunReserved([this, session, channel, listen, work = std::move(work)]() mutable {
      {
        const auto held = listen ? WorkerPool::HoldLasting() : nullptr;  // else it runs counted
        work();
      }
      work = nullptr;
      channel->Finish();
      // Notify under the lock: Stop() returns, and the server may be destroyed, as soon as
      // it sees the count reach zero.
      std::lock_guard lock(workers_mutex);
      running.erase(session);
      --workers;
      workers_cv.notify_all();
    });
  };
  HandleOptions handle_options;
  handle_options.modern = true;
  handle_options.caller = std::move(caller);
  session->Handle(std::move(message), channel, runner, handle_options);
  if (refused) {
    response.status = 503;
    SetJsonBody(response, SerializeMessage(MakeError(id, kInternalError, "server busy")));
    return;
  }
  if (!deferred) channel->Finish();  // answered on this thread
  if (!channel->WaitForStream()) {
    AnswerModernOnce(*channel, response);
    return;
  }
  StreamModern(std::move(session), std::move(channel), std::move(ticket), std::move(lasting),
               response);
}

// A modern request answered by one message: JSON, or (SSE mode without json_single_answers,
// success) one event; the status its error needs. Nothing at all: the request was cancelled (202).
void HttpServer::Impl::AnswerModernOnce(RequestChannel& channel, httplib::Response& response) {
  bool finished = false;
  auto frames = channel.Take(std::chrono::milliseconds(0), finished);
  if (frames.empty()) {
    response.status = 202;  // cancelled: never answered
    return;
  }
  std::string& body = frames.back().data;
  const int status = frames.back().error_code ? ModernErrorStatus(*frames.back().error_code) : 200;
  response.status = status;
  if (options.json_responses || options.json_single_answers || status != 200) {
    SetJsonBody(response, std::move(body));
  } else {
    response.set_header("Cache-Control", "no-cache");
    response.set_content(FormatSseEvent(body, {}, "message"), "text/event-stream");
  }
}

// A modern request whose messages stream (progress, logs, a listen stream): SSE without
// event ids until its work ends; the client's departure cancels the work.
void HttpServer::Impl::StreamModern(std::shared_ptr<ServerSession> session, std::shared_ptr<RequestChannel> channel,
                                    std::shared_ptr<PeerWatch::Ticket> ticket,
                                    std::shared_ptr<WorkerPool::Lasting> lasting, httplib::Response& response) {
  response.set_header("Cache-Control", "no-cache");
  response.set_header("X-Accel-Buffering", "no");
  {
    std::lock_guard lock(workers_mutex);
    ++streams;
  }
  response.set_chunked_content_provider(
      "text/event-stream",
      [session, channel, ticket](std::size_t, httplib::DataSink& sink) {
        for (;;) {
          bool finished = false;
          // Woken by a frame, the end of the work or the client's departure: no polling.
          auto frames = channel->Take(std::chrono::hours(1), finished);
          for (const auto& frame : frames) {
            const std::string event =
                frame.keep_alive ? std::string(":\n\n") : FormatSseEvent(frame.data, {}, "message");
            if (!sink.write(event.data(), event.size())) {
              channel->Close();
              session->CancelAll();
              return false;
            }
          }
          if (finished && frames.empty()) break;
        }
        if (!channel->Open()) return false;  // the client left: nothing to end
        sink.done();
        return true;
      },
      [this, session, channel, ticket, lasting](bool) {
        // The client went away (or the stream ended): stop the work it was waiting for.
        channel->Close();
        session->CancelAll();
        std::lock_guard lock(workers_mutex);  // as above: notify before Stop() can return
        --streams;
        workers_cv.notify_all();
      });
}

}  // namespace udon::mcp
