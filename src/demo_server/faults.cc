#include "demo_server/faults.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <thread>
#include <utility>

namespace udon::demo {
namespace {

using json::Value;
using mcp::Message;
using mcp::MessageKind;

constexpr char kDefaultTarget[] = "render_turntable";

// Faults that change the catalog; VALUE names the tool (default render_turntable).
const std::vector<std::string>& CatalogFaults() {
  static const std::vector<std::string> names = {
      "description", "input-schema", "output-schema", "annotations", "execution",
      "remove-tool", "rename-tool", "duplicate-tool", "duplicate-tool-last"};
  return names;
}

// Faults aimed at calls; VALUE names the tool (default every tool).
const std::vector<std::string>& CallFaults() {
  static const std::vector<std::string> names = {
      "call-is-error",          "call-no-structured-content", "call-bad-structured-content",
      "call-rpc-error",         "list-changed-during-call",   "sampling-during-call",
      "elicitation-during-call", "crash-during-call",         "hang-during-call",
      "garbage-during-call",    "oversized-during-call",      "call-input-required",
      "call-unknown-result-type", "call-is-error-string"};
  return names;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string ToolName(const Message& request) {
  if (request.params.is_object() && request.params.contains("name") &&
      request.params["name"].is_string()) {
    return request.params["name"].get<std::string>();
  }
  return {};
}

std::string RenamedTool(const std::string& name) { return name + "_v2"; }

void Mutate(const std::string& fault, Value& tool) {
  if (fault == "description") {
    tool["description"] = tool.value("description", std::string()) + " (revised)";
  } else if (fault == "input-schema") {
    tool["inputSchema"]["properties"]["priority"] = {{"type", "integer"}};
  } else if (fault == "output-schema") {
    if (!tool.contains("outputSchema")) tool["outputSchema"] = {{"type", "object"}};
    tool["outputSchema"]["properties"]["elapsedMs"] = {{"type", "number"}};
  } else if (fault == "annotations") {
    Value& annotations = tool["annotations"];
    annotations["destructiveHint"] = !annotations.value("destructiveHint", true);
  } else if (fault == "execution") {
    const std::string current =
        tool.contains("execution") ? tool["execution"].value("taskSupport", "forbidden")
                                   : "forbidden";
    tool["execution"]["taskSupport"] = current == "optional" ? "forbidden" : "optional";
  } else if (fault == "rename-tool") {
    tool["name"] = RenamedTool(tool["name"].get<std::string>());
  }
}

std::string LogLine(const Message& message) {
  Value line = Value::object();
  switch (message.kind) {
    case MessageKind::kRequest:
    case MessageKind::kNotification:
      line["method"] = message.method;
      if (message.method == "tools/call") {
        if (std::string tool = ToolName(message); !tool.empty()) line["tool"] = tool;
      }
      // The W3C trace context a caller passed on (not a value of the call).
      if (message.params.is_object() && message.params.contains("_meta") && message.params["_meta"].is_object() &&
          message.params["_meta"].contains("traceparent") && message.params["_meta"]["traceparent"].is_string()) {
        line["traceparent"] = message.params["_meta"]["traceparent"];
      }
      break;
    case MessageKind::kResult:
      line["response"] = "result";
      break;
    case MessageKind::kError:
      line["response"] = "error";
      break;
  }
  return line.dump(-1, ' ', false, Value::error_handler_t::replace) + "\n";
}

// Set on the thread whose tools/list answer just completed the first full listing, so that
// the after-response step of that same request still counts as "before".
thread_local bool t_first_listing_now = false;

}  // namespace

const std::vector<FaultInfo>& KnownFaults() {
  static const std::vector<FaultInfo> faults = {
      {"description", "TOOL", "append text to the tool's description"},
      {"input-schema", "TOOL", "add a property to the tool's inputSchema"},
      {"output-schema", "TOOL", "add a property to the tool's outputSchema (or add one)"},
      {"annotations", "TOOL", "flip the tool's destructiveHint annotation"},
      {"execution", "TOOL", "change the tool's execution.taskSupport"},
      {"remove-tool", "TOOL", "drop the tool from tools/list; calls to it fail as unknown"},
      {"rename-tool", "TOOL", "list the tool as TOOL_v2; only the new name can be called"},
      {"duplicate-tool", "TOOL", "list the tool twice in a row"},
      {"duplicate-tool-last", "TOOL",
       "list the tool again at the end of the catalog (another page when paginated)"},
      {"server-version", "VERSION", "report serverInfo.version VERSION (default: suffix -changed)"},
      {"protocol-version", "VERSION",
       "negotiate VERSION instead of the requested version (default: another supported one); "
       "server/discover offers only VERSION (default: 2025-11-25)"},
      {"cursor-loop", "", "tools/list keeps returning the cursor it was given, forever"},
      {"list-changed-after-list", "N",
       "send notifications/tools/list_changed after each tools/list answer (only the first N)"},
      {"list-changed-after-initialized", "",
       "send notifications/tools/list_changed right after notifications/initialized"},
      {"list-changed-during-call", "TOOL",
       "send notifications/tools/list_changed before answering a tools/call"},
      {"call-is-error", "TOOL", "answer calls with an isError: true result"},
      {"call-is-error-string", "TOOL",
       "answer calls with isError \"true\" (a string: not the protocol's result shape), content kept"},
      {"call-no-structured-content", "TOOL", "answer calls without structuredContent"},
      {"call-bad-structured-content", "TOOL",
       "answer calls with structuredContent that violates the outputSchema (members set to null)"},
      {"call-rpc-error", "TOOL", "answer calls with a JSON-RPC error (-32603)"},
      {"sampling-during-list", "", "send sampling/createMessage before answering tools/list"},
      {"elicitation-during-list", "", "send elicitation/create before answering tools/list"},
      {"sampling-during-call", "TOOL", "send sampling/createMessage before answering a tools/call"},
      {"elicitation-during-call", "TOOL", "send elicitation/create before answering a tools/call"},
      {"crash-during-call", "TOOL", "die by SIGKILL when a tools/call arrives (after logging it)"},
      {"hang-during-call", "TOOL", "never answer a tools/call, ignoring cancellation"},
      {"garbage-during-call", "TOOL", "write a line that is not JSON before answering a tools/call"},
      {"oversized-during-call", "TOOL",
       "write a 16 MiB + 1 KiB message before answering a tools/call"},
      {"call-input-required", "TOOL",
       "answer calls with resultType input_required carrying only a requestState"},
      {"call-unknown-result-type", "TOOL",
       "answer calls with the unknown resultType udon_unknown (content kept)"},
      {"server-info-drift-after", "N",
       "modern: after N tools/call results, result _meta serverInfo.version gains -drift "
       "(server/discover keeps the original; default N 1)"},
      {"listen-unsupported", "",
       "modern: subscriptions/listen acknowledgments omit toolsListChanged (nothing is delivered)"},
      {"listen-drop", "",
       "modern: subscriptions/listen streams end right after the acknowledgment, without a "
       "response (HTTP: the SSE stream closes; stdio: the subscription is silently dropped)"},
  };
  return faults;
}

Result<FaultSpec> ParseFault(const std::string& text, FaultTrigger default_trigger) {
  FaultSpec spec;
  spec.trigger = default_trigger;
  std::string head = text;
  if (const auto eq = text.find('='); eq != std::string::npos) {
    head = text.substr(0, eq);
    spec.value = text.substr(eq + 1);
    if (spec.value.empty()) return MakeError("demo.fault_invalid", "empty fault value");
  }
  if (const auto at = head.find('@'); at != std::string::npos) {
    const std::string trigger = head.substr(at + 1);
    head = head.substr(0, at);
    if (trigger == "startup") {
      spec.trigger = FaultTrigger::kStartup;
    } else if (trigger == "after-first-list") {
      spec.trigger = FaultTrigger::kAfterFirstList;
    } else {
      return MakeError("demo.fault_invalid", "fault trigger must be startup or after-first-list");
    }
  }
  spec.name = head;
  const auto& known = KnownFaults();
  auto info = std::find_if(known.begin(), known.end(),
                           [&](const FaultInfo& f) { return spec.name == f.name; });
  if (info == known.end()) return MakeError("demo.fault_unknown", "unknown fault");
  if (!spec.value.empty() && std::string_view(info->value).empty()) {
    return MakeError("demo.fault_invalid", "this fault takes no value");
  }
  if ((spec.name == "list-changed-after-list" || spec.name == "server-info-drift-after") &&
      !spec.value.empty()) {
    long n = 0;
    auto [end, ec] = std::from_chars(spec.value.data(), spec.value.data() + spec.value.size(), n);
    if (ec != std::errc() || end != spec.value.data() + spec.value.size() || n < 1) {
      return MakeError("demo.fault_invalid", "N must be a positive integer");
    }
  }
  if (spec.name == "protocol-version" && !spec.value.empty() &&
      !mcp::IsSupportedProtocolVersion(spec.value)) {
    return MakeError("demo.fault_invalid", "VERSION must be a supported protocol version");
  }
  if (Contains(CatalogFaults(), spec.name) && spec.value.empty()) spec.value = kDefaultTarget;
  return spec;
}

Result<std::unique_ptr<DemoHooks>> DemoHooks::Create(mcp::Server& server,
                                                     std::vector<FaultSpec> faults,
                                                     const std::string& request_log) {
  for (const FaultSpec& fault : faults) {
    const bool targets_tool =
        Contains(CatalogFaults(), fault.name) || Contains(CallFaults(), fault.name);
    if (targets_tool && !fault.value.empty() && !server.HasTool(fault.value)) {
      return MakeError("demo.fault_invalid", "a fault names a tool the catalog lacks");
    }
  }
  int fd = -1;
  if (!request_log.empty()) {
    fd = open(request_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return MakeError("demo.log_unwritable", "cannot open the request log");
  }
  return std::unique_ptr<DemoHooks>(new DemoHooks(server, std::move(faults), fd));
}

DemoHooks::DemoHooks(mcp::Server& server, std::vector<FaultSpec> faults, int log_fd)
    : server_(server), faults_(std::move(faults)), log_fd_(log_fd) {}

bool DemoHooks::Modern(const Message& request) const {
  return server_.RequestEra(request) == mcp::Era::kModern;
}

// A tools list change caused by `request`: the modern era tells the listen streams that
// asked for it, the legacy era the session (on `legacy_sink`).
void DemoHooks::ToolsListChanged(const Message& request, mcp::MessageSink& legacy_sink) {
  if (Modern(request)) {
    server_.NotifyToolsListChanged();
  } else {
    legacy_sink.Send(mcp::MakeNotification("notifications/tools/list_changed"));
  }
}

DemoHooks::~DemoHooks() {
  if (log_fd_ >= 0) close(log_fd_);
}

bool DemoHooks::Active(const FaultSpec& fault) const {
  return fault.trigger == FaultTrigger::kStartup || (listed_.load() && !t_first_listing_now);
}

const FaultSpec* DemoHooks::Find(const std::string& name) const {
  for (const FaultSpec& fault : faults_) {
    if (fault.name == name && Active(fault)) return &fault;
  }
  return nullptr;
}

const FaultSpec* DemoHooks::ForTool(const std::string& name, const std::string& tool) const {
  for (const FaultSpec& fault : faults_) {
    if (fault.name == name && (fault.value.empty() || fault.value == tool) && Active(fault)) {
      return &fault;
    }
  }
  return nullptr;
}

// One write(2) per line, straight to the kernel: a line logged before a crash is on disk.
void DemoHooks::OnMessage(const Message& message) {
  if (log_fd_ < 0) return;
  const std::string line = LogLine(message);
  std::lock_guard lock(log_mutex_);
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = write(log_fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    written += static_cast<std::size_t>(n);
  }
}

void DemoHooks::AfterNotification(const Message& notification, mcp::ServerSession& session) {
  if (notification.method == "notifications/initialized" &&
      Find("list-changed-after-initialized") != nullptr) {
    session.standalone().Send(mcp::MakeNotification("notifications/tools/list_changed"));
  }
}

void DemoHooks::SendServerRequest(mcp::MessageSink& sink, const std::string& method) {
  Value params;
  if (method == "sampling/createMessage") {
    params = {{"messages",
               Value::array({{{"role", "user"},
                              {"content", {{"type", "text"}, {"text", "Say hello."}}}}})},
              {"maxTokens", 16}};
  } else {
    params = {{"mode", "form"},
              {"message", "Please confirm."},
              {"requestedSchema",
               {{"type", "object"}, {"properties", {{"confirm", {{"type", "boolean"}}}}}}}};
  }
  sink.Send(mcp::MakeRequest("udon-fault-" + std::to_string(next_request_id_++), method,
                             std::move(params)));
}

std::optional<Message> DemoHooks::BeforeRequest(Message& request, mcp::MessageSink& related) {
  if (request.method == "tools/list") {
    if (list_delay_.count() > 0) std::this_thread::sleep_for(list_delay_);
    if (Find("sampling-during-list") != nullptr) {
      SendServerRequest(related, "sampling/createMessage");
    }
    if (Find("elicitation-during-list") != nullptr) SendServerRequest(related, "elicitation/create");
    return std::nullopt;
  }
  if (request.method != "tools/call") return std::nullopt;
  const std::string tool = ToolName(request);
  for (const FaultSpec& fault : faults_) {
    if (!Active(fault)) continue;
    if (fault.name == "remove-tool" && fault.value == tool) {
      return mcp::MakeError(request.id, mcp::kInvalidParams, "unknown tool");
    }
    if (fault.name == "rename-tool") {
      if (fault.value == tool) return mcp::MakeError(request.id, mcp::kInvalidParams, "unknown tool");
      if (RenamedTool(fault.value) == tool) request.params["name"] = fault.value;
    }
  }
  if (ForTool("crash-during-call", tool) != nullptr) kill(getpid(), SIGKILL);
  if (ForTool("hang-during-call", tool) != nullptr) {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (ForTool("garbage-during-call", tool) != nullptr) related.SendRaw("}{ this is not JSON");
  if (ForTool("oversized-during-call", tool) != nullptr) {
    const std::string padding(mcp::kDefaultMaxMessageBytes + 1024, 'x');
    related.Send(mcp::MakeNotification("notifications/message",
                                       {{"level", "debug"}, {"data", padding}}));
  }
  if (ForTool("list-changed-during-call", tool) != nullptr) ToolsListChanged(request, related);
  if (ForTool("sampling-during-call", tool) != nullptr) {
    SendServerRequest(related, "sampling/createMessage");
  }
  if (ForTool("elicitation-during-call", tool) != nullptr) {
    SendServerRequest(related, "elicitation/create");
  }
  return std::nullopt;
}

bool DemoHooks::TransformsTools() const {
  return std::any_of(faults_.begin(), faults_.end(),
                     [](const FaultSpec& fault) { return Contains(CatalogFaults(), fault.name); });
}

void DemoHooks::TransformTools(std::vector<Value>& tools) {
  for (const FaultSpec& fault : faults_) {
    if (!Active(fault) || !Contains(CatalogFaults(), fault.name)) continue;
    auto it = std::find_if(tools.begin(), tools.end(),
                           [&](const Value& tool) { return tool.value("name", "") == fault.value; });
    if (it == tools.end()) continue;
    if (fault.name == "remove-tool") {
      tools.erase(it);
    } else if (fault.name == "duplicate-tool") {
      tools.insert(it + 1, *it);
    } else if (fault.name == "duplicate-tool-last") {
      tools.push_back(*it);
    } else {
      Mutate(fault.name, *it);
    }
  }
}

void DemoHooks::AfterRequest(const Message& request, Message& response, mcp::MessageSink&) {
  t_first_listing_now = false;
  if (response.kind != MessageKind::kResult) return;
  ChangeResult(request, response);
  if (response.kind == MessageKind::kResult && Modern(request)) ChangeServerInfo(request, response);
  // Counted before the answer goes out, so the client's next request already sees it.
  if (request.method == "tools/call") ++calls_answered_;
}

// The identity a modern result carries in _meta, after server-version and
// server-info-drift-after.
void DemoHooks::ChangeServerInfo(const Message& request, Message& response) {
  if (!response.result.is_object()) return;
  Value info = server_.options().server_info;
  bool changed = false;
  if (const FaultSpec* fault = Find("server-version")) {
    info["version"] = fault->value.empty() ? info.value("version", "") + "-changed" : fault->value;
    changed = true;
  }
  if (const FaultSpec* fault = Find("server-info-drift-after");
      fault != nullptr && request.method != mcp::kDiscoverMethod) {
    const long after = fault->value.empty() ? 1 : std::stol(fault->value);
    if (calls_answered_.load() >= after) {
      info["version"] = info.value("version", "") + "-drift";
      changed = true;
    }
  }
  if (!changed) return;
  if (!response.result.contains("_meta") || !response.result["_meta"].is_object()) {
    response.result["_meta"] = Value::object();
  }
  response.result["_meta"][std::string(mcp::meta::kServerInfo)] = std::move(info);
}

void DemoHooks::ChangeResult(const Message& request, Message& response) {
  if (request.method == "initialize") {
    if (const FaultSpec* fault = Find("server-version")) {
      Value& info = response.result["serverInfo"];
      info["version"] = fault->value.empty() ? info.value("version", "") + "-changed" : fault->value;
    }
    if (const FaultSpec* fault = Find("protocol-version")) {
      std::string version = fault->value;
      if (version.empty()) {
        const std::string requested = response.result["protocolVersion"].get<std::string>();
        version = requested == mcp::kLatestLegacyProtocolVersion
                      ? "2025-06-18"
                      : std::string(mcp::kLatestLegacyProtocolVersion);
      }
      response.result["protocolVersion"] = version;
    }
  } else if (request.method == "server/discover") {
    // The modern era's version fault: the server stops offering what the client asked for.
    if (const FaultSpec* fault = Find("protocol-version"); fault != nullptr && response.result.is_object()) {
      response.result["supportedVersions"] =
          Value::array({fault->value.empty() ? std::string(mcp::kLatestLegacyProtocolVersion) : fault->value});
    }
  } else if (request.method == "tools/list") {
    if (Find("cursor-loop") != nullptr) {
      const bool has_cursor = request.params.is_object() && request.params.contains("cursor");
      if (has_cursor) {
        response.result["nextCursor"] = request.params["cursor"];
      } else if (!response.result.contains("nextCursor")) {
        response.result["nextCursor"] = mcp::Server::EncodeCursor(0);
      }
    }
    if (!response.result.contains("nextCursor") && !listed_.exchange(true)) {
      t_first_listing_now = true;
    }
  } else if (request.method == "tools/call") {
    const std::string tool = ToolName(request);
    if (ForTool("call-rpc-error", tool) != nullptr) {
      response = mcp::MakeError(request.id, mcp::kInternalError, "injected failure");
      return;
    }
    Value& result = response.result;
    if (ForTool("call-is-error", tool) != nullptr) {
      result = {{"content", Value::array({{{"type", "text"}, {"text", "injected tool error"}}})},
                {"isError", true}};
    }
    if (ForTool("call-is-error-string", tool) != nullptr) result["isError"] = "true";
    if (ForTool("call-no-structured-content", tool) != nullptr) result.erase("structuredContent");
    if (ForTool("call-input-required", tool) != nullptr) {
      result = {{"resultType", "input_required"}, {"requestState", "udon-fault-request-state"}};
    }
    if (ForTool("call-unknown-result-type", tool) != nullptr) result["resultType"] = "udon_unknown";
    if (ForTool("call-bad-structured-content", tool) != nullptr) {
      Value broken = Value::object();
      if (result.contains("structuredContent") && result["structuredContent"].is_object()) {
        for (const auto& [name, value] : result["structuredContent"].items()) broken[name] = nullptr;
      }
      broken["injectedFault"] = nullptr;
      result["structuredContent"] = std::move(broken);
    }
  }
}

void DemoHooks::AfterResponse(const Message& request, mcp::ServerSession& session) {
  if (request.method == "tools/list") {
    if (const FaultSpec* fault = Find("list-changed-after-list")) {
      const long answered = ++lists_answered_;
      const long limit = fault->value.empty() ? 0 : std::stol(fault->value);
      if (limit == 0 || answered <= limit) ToolsListChanged(request, session.standalone());
    }
  }
  t_first_listing_now = false;
}

void DemoHooks::TransformAcknowledgment(Value& notifications) {
  if (Find("listen-unsupported") != nullptr) notifications.erase("toolsListChanged");
}

bool DemoHooks::DropSubscription(const Message&) { return Find("listen-drop") != nullptr; }

}  // namespace udon::demo
