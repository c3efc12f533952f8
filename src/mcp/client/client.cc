#include "mcp/client/client.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include "json/diff.h"
#include "mcp/client/http_transport.h"
#include "mcp/protocol/param_headers.h"
#include "mcp/client/stdio_transport.h"

#ifndef UDON_PROJECT_VERSION
#error "UDON_PROJECT_VERSION must come from CMake"
#endif

namespace udon::mcp {
namespace {

// Hands a call's notifications/progress to its caller while the call is in flight.
class ProgressRelay {
 public:
  ProgressRelay(Connection& connection, std::string token, const Client::ProgressFn& on_progress)
      : connection_(connection),
        id_(connection.AddEventObserver([token = std::move(token), on_progress](const Event& event) {
          if (event.kind != EventKind::kNotification || event.method != "notifications/progress") return;
          const json::Value& params = event.params;
          if (!params.is_object() || params.value("progressToken", json::Value()) != token) return;
          on_progress(params);
        })) {}
  ~ProgressRelay() { connection_.RemoveEventObserver(id_); }
  ProgressRelay(const ProgressRelay&) = delete;
  ProgressRelay& operator=(const ProgressRelay&) = delete;

 private:
  Connection& connection_;
  std::uint64_t id_;
};

Error Wrap(std::string code, std::string message, const Error& cause) {
  Error error = udon::MakeError(std::move(code), std::move(message));
  error.details["cause"] = cause.code;
  for (const auto& [key, value] : cause.details.items()) {
    if (key != "cause") error.details[key] = value;
  }
  // Under mcp.disconnected the transport's code tells a hostile frame (malformed, too
  // large) from a lost connection.
  if (cause.details.contains("cause")) error.details["transportCause"] = cause.details["cause"];
  return error;
}

Error ErrorResponse(const Message& response) {
  Error error = udon::MakeError("mcp.error_response", "the server answered with a JSON-RPC error");
  if (response.error.is_object() && response.error.contains("code") &&
      response.error["code"].is_number_integer()) {
    error.details["rpcCode"] = response.error["code"];
  }
  return error;
}

std::optional<int> RpcCode(const Message& response) {
  if (response.error.is_object() && response.error.contains("code") &&
      response.error["code"].is_number_integer()) {
    return response.error["code"].get<int>();
  }
  return std::nullopt;
}

// The versions an UnsupportedProtocolVersion error lists, as strings.
std::vector<std::string> SupportedList(const Message& response) {
  std::vector<std::string> out;
  const json::Value& error = response.error;
  if (!error.is_object() || !error.contains("data") || !error["data"].is_object()) return out;
  auto supported = error["data"].find("supported");
  if (supported == error["data"].end() || !supported->is_array()) return out;
  for (const json::Value& version : *supported) {
    if (version.is_string()) out.push_back(version.get<std::string>());
  }
  return out;
}

// The newest version in `offered` this client speaks and `accept` admits, or empty.
std::string NewestCommon(const std::vector<std::string>& offered, bool (*accept)(std::string_view)) {
  for (const std::string& ours : SupportedProtocolVersions()) {
    if (!accept(ours)) continue;
    for (const std::string& theirs : offered) {
      if (theirs == ours) return ours;
    }
  }
  return {};
}

// Whether a failed probe identifies a legacy server: anything but a modern answer, a
// local failure or a lost connection.
bool MeansLegacy(const Error& error) {
  if (error.code != "server.connect_failed") return false;
  const std::string cause = error.details.value("cause", "");
  if (cause == "mcp.error_response") {
    return !error.details.contains("rpcCode") ||
           !rpc_code::IsModernError(error.details["rpcCode"].get<int>());
  }
  return cause == "mcp.timeout" || cause == "mcp.http_status" || cause == "mcp.stream_ended";
}

// A legacy version this client may not speak on its transport: unknown to it, or, over
// Streamable HTTP, the stdio-only 2024-11-05. nullopt when the version may be spoken.
std::optional<Error> UnspokenLegacyVersion(std::string_view version, bool http, const char* whose) {
  if (IsLegacyProtocolVersion(version) && !(http && IsStdioOnlyProtocolVersion(version))) return std::nullopt;
  Error error = udon::MakeError("server.protocol_version_mismatch",
                                IsLegacyProtocolVersion(version)
                                    ? std::string(version) + " is spoken over stdio only (its HTTP+SSE transport is not)"
                                    : "the server answered a protocol version this client does not support");
  error.details[whose] = std::string(version);
  if (http) error.details["transport"] = "http";
  return error;
}

Error PaginationError(std::string message, std::size_t page) {
  Error error = udon::MakeError("catalog.pagination_invalid", std::move(message));
  error.details["page"] = page;
  return error;
}

}  // namespace


std::string ClientVersion() { return UDON_PROJECT_VERSION; }

Client::Client(std::unique_ptr<Transport> transport, ClientOptions options)
    : options_(options),
      connection_(std::move(transport), ConnectionOptions{options.request_timeout}) {}

Result<std::unique_ptr<Client>> Client::Connect(const ServerConfig& server,
                                                ClientOptions options) {
  std::unique_ptr<Transport> transport;
  if (server.type == ServerType::kStdio) {
    StdioOptions stdio;
    stdio.max_message_bytes = options.max_message_bytes;
    stdio.shutdown_grace = options.shutdown_grace;
    transport = std::make_unique<StdioTransport>(server, stdio);
  } else {
    HttpOptions http;
    http.max_message_bytes = options.max_message_bytes;
    http.notification_stream = options.http_notification_stream;
    transport = std::make_unique<HttpTransport>(server, http);
  }
  auto client = std::make_unique<Client>(std::move(transport), options);
  UDON_RETURN_IF_ERROR(client->Start());
  return client;
}

Status Client::Start() {
  Status started = connection_.Start();
  if (!started.ok()) {
    // A spawn failure's message is ours: the configured command and the OS error.
    std::string message = "the server could not be started";
    if (started.error().code == "mcp.spawn_failed") message += ": " + started.error().message;
    return Wrap("server.connect_failed", std::move(message), started.error());
  }
  return OkStatus();
}

std::string Client::server_exit() {
  auto* stdio = dynamic_cast<StdioTransport*>(&connection_.transport());
  return stdio != nullptr ? stdio->exit_description() : std::string();
}

std::string Client::server_stderr_tail() {
  auto* stdio = dynamic_cast<StdioTransport*>(&connection_.transport());
  return stdio != nullptr ? stdio->stderr_tail() : std::string();
}

void AddServerExit(Error& error, Client& client) {
  const std::string ended = client.server_exit();
  if (ended.empty()) return;
  error.message += " (the server " + ended + ")";
  error.details["exit"] = ended;
}

Result<InitializeResult> Client::Initialize(std::string_view requested_version) {
  if (!IsLegacyProtocolVersion(requested_version)) {
    return udon::MakeError("mcp.unsupported_version", "initialize is only for legacy protocol versions");
  }
  const bool http = connection_.transport().streamable_http();
  if (auto unspoken = UnspokenLegacyVersion(requested_version, http, "requested")) return *unspoken;
  json::Value params = {
      {"protocolVersion", std::string(requested_version)},
      {"capabilities", json::Value::object()},
      {"clientInfo", {{"name", std::string(kClientName)}, {"version", ClientVersion()}}}};
  // initialize is never cancelled (the spec forbids it).
  auto response = connection_.Request("initialize", std::move(params),
                                      options_.request_timeout, /*cancellable=*/false);
  if (!response.ok()) {
    return Wrap("server.connect_failed", "initialize failed", response.error());
  }
  const Message& message = response->message;
  if (message.kind == MessageKind::kError) {
    return Wrap("server.connect_failed", "initialize was refused", ErrorResponse(message));
  }
  const json::Value& result = message.result;
  if (!result.is_object() || !result.contains("protocolVersion") ||
      !result["protocolVersion"].is_string() || !result.contains("serverInfo") ||
      !result["serverInfo"].is_object() || !result.contains("capabilities") ||
      !result["capabilities"].is_object() ||
      (result.contains("instructions") && !result["instructions"].is_string())) {
    return udon::MakeError("server.connect_failed", "the initialize result is malformed");
  }
  InitializeResult init;
  init.era = Era::kLegacy;
  init.protocol_version = result["protocolVersion"].get<std::string>();
  if (auto unspoken = UnspokenLegacyVersion(init.protocol_version, http, "answered")) {
    // The spec's SHOULD/MUST: disconnect rather than speak an unknown version.
    connection_.Close();
    return *unspoken;
  }
  init.server_info = result["serverInfo"];
  init.capabilities = result["capabilities"];
  if (result.contains("instructions")) init.instructions = result["instructions"].get<std::string>();
  init.raw = result;
  connection_.transport().OnInitialized(init.protocol_version);
  Status notified = connection_.Notify("notifications/initialized");
  if (!notified.ok()) {
    return Wrap("server.connect_failed", "notifications/initialized failed", notified.error());
  }
  // HTTP: the server may queue list_changed right after initialized and deliver it once
  // the GET stream opens. The listing a binding relies on must start after that stream
  // stands (or was declined), or the notice could land after the comparison and read as
  // a change of the bound catalog.
  notification_stream_ = connection_.transport().AwaitNotificationStream(options_.request_timeout);
  if (notification_stream_ == NotificationStream::kPending) {
    Error error = udon::MakeError("server.connect_failed",
                                  "the server neither opened nor declined its notification stream in time");
    error.details["reason"] = "notification_stream_unsettled";
    return error;
  }
  initialized_ = init;
  return init;
}

json::Value Client::WithMeta(json::Value params, std::string_view version) const {
  if (!IsModernProtocolVersion(version)) return params;
  if (!params.is_object()) params = json::Value::object();
  json::Value& meta = params["_meta"];
  if (!meta.is_object()) meta = json::Value::object();
  meta[std::string(meta::kProtocolVersion)] = std::string(version);
  meta[std::string(meta::kClientInfo)] = {{"name", std::string(kClientName)}, {"version", ClientVersion()}};
  meta[std::string(meta::kClientCapabilities)] = json::Value::object();
  return params;
}

Result<InitializeResult> Client::DiscoverOnce(std::string_view version, std::chrono::milliseconds timeout) {
  auto response = connection_.Request(std::string(kDiscoverMethod), WithMeta(json::Value::object(), version),
                                      timeout, /*cancellable=*/false);
  if (!response.ok()) return Wrap("server.connect_failed", "server/discover failed", response.error());
  const Message& message = response->message;
  if (message.kind == MessageKind::kError) {
    if (RpcCode(message) == rpc_code::kUnsupportedProtocolVersion) {
      Error error = udon::MakeError("server.protocol_version_mismatch",
                                    "the server does not support the requested protocol version");
      error.details = {{"requested", std::string(version)}, {"supported", SupportedList(message)}};
      return error;
    }
    return Wrap("server.connect_failed", "server/discover was refused", ErrorResponse(message));
  }
  const json::Value& result = message.result;
  if (!result.is_object() || !result.contains("supportedVersions") || !result["supportedVersions"].is_array() ||
      !result.contains("capabilities") || !result["capabilities"].is_object() ||
      (result.contains("instructions") && !result["instructions"].is_string())) {
    return udon::MakeError("server.connect_failed", "the server/discover result is malformed");
  }
  InitializeResult init;
  init.era = Era::kModern;
  init.protocol_version = std::string(version);
  for (const json::Value& offered : result["supportedVersions"]) {
    if (offered.is_string()) init.supported_versions.push_back(offered.get<std::string>());
  }
  if (std::find(init.supported_versions.begin(), init.supported_versions.end(), version) ==
      init.supported_versions.end()) {
    Error error = udon::MakeError("server.protocol_version_mismatch",
                                  "the server's supportedVersions lack the requested protocol version");
    error.details = {{"requested", std::string(version)}, {"supported", init.supported_versions}};
    return error;
  }
  UDON_RETURN_IF_ERROR(CheckModernResult(result, Phase::kOpen));
  const json::Value* info = nullptr;
  if (auto meta = result.find("_meta"); meta != result.end() && meta->is_object()) {
    if (auto found = meta->find(std::string(meta::kServerInfo)); found != meta->end() && found->is_object()) {
      info = &*found;
    }
  }
  // Servers built on drafts of the revision (the conformance suite's mocks among them)
  // send serverInfo as a member of the result; the identity is the same either way.
  if (info == nullptr && result.contains("serverInfo") && result["serverInfo"].is_object()) {
    info = &result["serverInfo"];
  }
  if (info == nullptr) {
    return udon::MakeError("mcp.server_info_missing", "server/discover named no serverInfo");
  }
  init.server_info = *info;
  init.capabilities = result["capabilities"];
  if (result.contains("instructions")) init.instructions = result["instructions"].get<std::string>();
  init.raw = result;
  return init;
}

Result<InitializeResult> Client::Discover(std::string_view requested_version) {
  if (!IsModernProtocolVersion(requested_version)) {
    return udon::MakeError("mcp.unsupported_version", "server/discover is only for modern protocol versions");
  }
  auto init = DiscoverOnce(requested_version, options_.request_timeout);
  if (!init.ok() && init.error().code == "server.protocol_version_mismatch" &&
      init.error().details.contains("supported")) {
    // The spec's retry: once, with the newest modern version both sides name.
    const std::string retry =
        NewestCommon(init.error().details["supported"].get<std::vector<std::string>>(), &IsModernProtocolVersion);
    if (!retry.empty()) init = DiscoverOnce(retry, options_.request_timeout);
  }
  if (init.ok()) initialized_ = *init;
  return init;
}

Result<InitializeResult> Client::Open(std::string_view version) {
  if (IsModernProtocolVersion(version)) return Discover(version);
  return Initialize(version);
}

Result<InitializeResult> Client::Negotiate() {
  auto probe = DiscoverOnce(kModernProtocolVersion, std::min(options_.probe_timeout, options_.request_timeout));
  if (probe.ok()) {
    initialized_ = *probe;
    return probe;
  }
  const Error& error = probe.error();
  if (error.code == "server.protocol_version_mismatch" && error.details.contains("supported")) {
    const auto supported = error.details["supported"].get<std::vector<std::string>>();
    if (const std::string modern = NewestCommon(supported, &IsModernProtocolVersion); !modern.empty()) {
      return Discover(modern);
    }
    // A dual-era server whose modern versions we lack: the newest legacy one it names.
    if (const std::string legacy = NewestCommon(supported, &IsLegacyProtocolVersion); !legacy.empty()) {
      return Initialize(legacy);
    }
    return std::move(probe).error();
  }
  if (MeansLegacy(error)) return Initialize(kLatestLegacyProtocolVersion);
  return std::move(probe).error();
}

Status Client::CheckModernResult(const json::Value& result, Phase phase) const {
  if (!result.is_object()) return OkStatus();
  if (auto type = result.find("resultType"); type != result.end() && *type != "complete") {
    if (*type == "input_required") {
      return udon::MakeError(phase == Phase::kCall ? "call.server_request_refused" : "server.request_refused",
                             "the server asked for client input (sampling, elicitation or roots)");
    }
    const char* code = phase == Phase::kCall   ? "call.protocol_error"
                       : phase == Phase::kList ? "catalog.pagination_invalid"
                                               : "server.connect_failed";
    return udon::MakeError(code, "the result's resultType is not one this client knows");
  }
  if (phase == Phase::kOpen || !initialized_ || initialized_->era != Era::kModern) return OkStatus();
  auto meta = result.find("_meta");
  if (meta == result.end() || !meta->is_object()) return OkStatus();
  auto info = meta->find(std::string(meta::kServerInfo));
  if (info == meta->end() || json::CanonicallyEqual(*info, initialized_->server_info)) return OkStatus();
  if (phase == Phase::kList) {
    return udon::MakeError("server.server_info_mismatch", "a tools/list result names another serverInfo");
  }
  Error error = udon::MakeError("call.indeterminate", "the call's result names another serverInfo");
  error.details["reason"] = "server_info_changed";
  return error;
}

Status Client::Ping(std::chrono::milliseconds timeout) {
  if (!initialized_) return udon::MakeError("mcp.not_initialized", "initialize first");
  auto response = connection_.Request("ping", WithMeta(json::Value::object(), initialized_->protocol_version),
                                      timeout, /*cancellable=*/true);
  // Any answer, even an error, proves the server handled everything it sent before it.
  if (!response.ok()) return Wrap("server.connect_failed", "the server did not answer ping", response.error());
  return OkStatus();
}

Status Client::Subscribe() {
  if (!initialized_ || initialized_->era != Era::kModern) return OkStatus();
  const json::Value& capabilities = initialized_->capabilities;
  const bool offered = capabilities.contains("tools") && capabilities["tools"].is_object() &&
                       capabilities["tools"].value("listChanged", false) == true;
  if (!offered) {
    subscription_ = Subscription::kNotOffered;
    return OkStatus();
  }
  std::uint64_t seen = connection_.LastSequence();
  auto id = connection_.OpenStream(std::string(kListenMethod),
                                   WithMeta({{"notifications", {{"toolsListChanged", true}}}},
                                            initialized_->protocol_version));
  if (!id.ok()) return Wrap("mcp.subscription_failed", "subscriptions/listen could not be sent", id.error());
  auto failed = [](const char* reason) {
    Error error = udon::MakeError("mcp.subscription_failed", "the tool-list subscription was not acknowledged");
    error.details["reason"] = reason;
    return error;
  };
  const auto deadline = std::chrono::steady_clock::now() + options_.request_timeout;
  while (true) {
    for (const Event& event : connection_.EventsSince(seen)) {
      seen = event.sequence;
      if (event.kind == EventKind::kDisconnected) return failed("disconnected");
      if (event.kind == EventKind::kStreamEnded && event.id == json::Value(*id)) return failed("stream_ended");
      if (event.kind != EventKind::kNotification || event.method != kAcknowledgedNotification) continue;
      const json::Value& params = event.params;
      if (!params.is_object() || !params.contains("_meta") || !params["_meta"].is_object() ||
          params["_meta"].value(std::string(meta::kSubscriptionId), json::Value()) != json::Value(*id)) {
        continue;  // another subscription's
      }
      const bool granted = params.contains("notifications") && params["notifications"].is_object() &&
                           params["notifications"].value("toolsListChanged", false) == true;
      if (!granted) {
        connection_.CancelStream(*id);
        subscription_ = Subscription::kDeclined;
        return OkStatus();
      }
      subscription_ = Subscription::kActive;
      subscription_id_ = *id;
      return OkStatus();
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      connection_.CancelStream(*id);
      return failed("unacknowledged");
    }
    connection_.WaitForEventAfter(seen, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now));
  }
}

const char* SubscriptionName(Client::Subscription subscription) {
  switch (subscription) {
    case Client::Subscription::kNone: return "none";
    case Client::Subscription::kNotOffered: return "not_offered";
    case Client::Subscription::kDeclined: return "declined";
    case Client::Subscription::kActive: return "active";
  }
  return "none";
}

Result<ToolPages> Client::ListAllTools(std::size_t max_pages, const PageProgress& on_page) {
  if (!initialized_) return udon::MakeError("mcp.not_initialized", "initialize first");
  ToolPages out;
  out.sequence_before = connection_.LastSequence();
  std::set<std::string> seen_cursors;
  std::optional<std::string> cursor;
  std::size_t tools_so_far = 0;
  while (true) {
    if (out.pages.size() >= max_pages) {
      return PaginationError("the page limit was exceeded", out.pages.size());
    }
    json::Value params = json::Value::object();
    if (cursor) params["cursor"] = *cursor;
    params = WithMeta(std::move(params), initialized_->protocol_version);
    auto response = connection_.RequestToolList(std::move(params), options_.request_timeout);
    if (!response.ok()) return std::move(response).error();
    if (response->message.kind == MessageKind::kError) return ErrorResponse(response->message);
    json::Value& page = response->message.result;
    UDON_RETURN_IF_ERROR(CheckModernResult(page, Phase::kList));
    if (!page.is_object() || !page.contains("tools") || !page["tools"].is_array()) {
      return PaginationError("a tools/list page is malformed", out.pages.size());
    }
    std::optional<std::string> next;
    if (page.contains("nextCursor") && !page["nextCursor"].is_null()) {
      if (!page["nextCursor"].is_string()) {
        return PaginationError("nextCursor is not a string", out.pages.size());
      }
      next = page["nextCursor"].get<std::string>();
    }
    out.sequence_after = response->sequence_at_response;
    const auto& lean_tools = response->message.lean_tools;
    tools_so_far += lean_tools ? lean_tools->tools.size() : page["tools"].size();
    out.pages.Append(std::move(page), lean_tools);
    out.lean.push_back(lean_tools);
    if (on_page) on_page(out.pages.size(), tools_so_far);
    if (!next) break;
    if (!seen_cursors.insert(*next).second) {
      return PaginationError("the server repeated a cursor", out.pages.size());
    }
    cursor = std::move(next);
  }
  return out;
}

Result<CallOutcome> Client::CallTool(const std::string& name, const json::Value& arguments,
                                     std::chrono::milliseconds timeout, const json::Value* tool,
                                     const ProgressFn& on_progress, const TraceContext* trace) {
  if (!initialized_) return udon::MakeError("mcp.not_initialized", "initialize first");
  if (timeout.count() <= 0) timeout = options_.request_timeout;
  RequestHeaders headers;
  if (tool != nullptr && initialized_->era == Era::kModern) {
    auto params = ParamHeadersOf(*tool);
    if (!params.ok()) return std::move(params).error();
    headers = MirrorArguments(*params, arguments);
  }
  json::Value params = WithMeta({{"name", name}, {"arguments", arguments}}, initialized_->protocol_version);
  std::optional<ProgressRelay> relay;
  if (on_progress) {
    const std::string token = "udon-progress-" + std::to_string(next_progress_token_++);
    params["_meta"]["progressToken"] = token;
    relay.emplace(connection_, token, on_progress);
  }
  if (trace != nullptr && !trace->traceparent.empty()) {
    params["_meta"]["traceparent"] = trace->traceparent;
    headers.emplace_back("traceparent", trace->traceparent);
    if (!trace->tracestate.empty()) {
      params["_meta"]["tracestate"] = trace->tracestate;
      headers.emplace_back("tracestate", trace->tracestate);
    }
  }
  auto response = connection_.Request("tools/call", std::move(params), timeout, /*cancellable=*/true, headers);
  relay.reset();
  if (!response.ok()) {
    const Error& cause = response.error();
    if (cause.code == "mcp.timeout" || cause.code == "mcp.disconnected") {
      Error error = Wrap("call.indeterminate", "the call's outcome is unknown", cause);
      error.details["reason"] = cause.code == "mcp.timeout" ? "timeout" : "disconnected";
      return error;
    }
    return std::move(response).error();
  }
  CallOutcome outcome;
  outcome.sequence_before = response->sequence_at_send;
  outcome.sequence_after = response->sequence_at_response;
  for (Event& event : connection_.EventsSince(outcome.sequence_before)) {
    if (event.sequence > outcome.sequence_after) break;
    outcome.events.push_back(std::move(event));
  }
  Message& message = response->message;
  if (message.kind == MessageKind::kError) {
    outcome.error = std::move(message.error);
    return outcome;
  }
  UDON_RETURN_IF_ERROR(CheckModernResult(message.result, Phase::kCall));
  if (!message.result.is_object() || !message.result.contains("content") ||
      !message.result["content"].is_array()) {
    return udon::MakeError("call.protocol_error", "the tools/call result is malformed");
  }
  outcome.result = std::move(message.result);
  return outcome;
}

void Client::Close() { connection_.Close(); }

}  // namespace udon::mcp

namespace udon::mcp {

std::string TruncateTail(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  return "(earlier output cut) " + text.substr(text.size() - limit);
}

std::string TruncateHead(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  return text.substr(0, limit) + " (cut at " + std::to_string(limit) + " bytes)";
}

std::vector<Diagnostic> ConnectionDiagnostics(const Error& error, Client* client) {
  std::vector<Diagnostic> out;
  const json::Value& details = error.details;
  std::string cause;
  auto add = [&cause](const std::string& part) {
    if (!cause.empty()) cause += "; ";
    cause += part;
  };
  for (const char* key : {"cause", "transportCause"}) {
    if (details.contains(key) && details[key].is_string()) add(details[key].get<std::string>());
  }
  if (details.contains("status") && details["status"].is_number_integer()) {
    add("HTTP status " + std::to_string(details["status"].get<long long>()));
  }
  if (details.contains("curlCode") && details["curlCode"].is_number_integer()) {
    add("curl error " + std::to_string(details["curlCode"].get<long long>()) +
        (details.contains("curlError") && details["curlError"].is_string()
             ? " (" + details["curlError"].get<std::string>() + ")"
             : std::string()));
  }
  if (details.contains("errno") && details["errno"].is_number_integer()) {
    add(std::string("OS error: ") + std::strerror(details["errno"].get<int>()));
  }
  std::string ended = details.value("exit", "");
  if (ended.empty() && client != nullptr) ended = client->server_exit();
  if (!ended.empty()) add("the server " + ended);
  if (!cause.empty()) out.push_back({"transport", cause});
  if (client != nullptr) {
    const std::string tail = client->server_stderr_tail();
    if (!tail.empty()) out.push_back({"server stderr", TruncateTail(tail)});
  }
  return out;
}

}  // namespace udon::mcp
