#include "gateway/gateway.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <utility>

#include "json/display.h"
#include "base/file.h"
#include "base/sha256.h"
#include "manifest/binding.h"
#include "manifest/host_pointer.h"
#include "manifest/manifest.h"
#include "manifest/pin_file.h"

namespace udon::gateway {
namespace {

constexpr std::size_t kMaxPinFileBytes = 4096;

// Offered tools may be called by any number of clients at once; each needs a connection of
// its own while its call runs, and this many stay open between calls per upstream server:
// as many as the HTTP server runs requests at once (HttpServerOptions::threads). With 8, a
// closed loop of 64 sessions opened a fresh upstream connection (a process, its handshake
// and its close) for a quarter of its calls (docs/benchmarks.md, "serve").
constexpr std::size_t kIdleConnectionsPerServer = 64;
// A burst's extra upstream connections (processes, reader threads) end this long after it;
// each server's newest stays, so the steady state never starts a server cold.
constexpr std::chrono::seconds kIdleCloseAfter{30};

// Refusals that prove the reviewed Tool no longer matches the live one: the tool is
// withdrawn. (Others, such as invalid arguments or a busy lock, say nothing of the tool.)
bool WithdrawsTool(const std::string& code) {
  return code == "catalog.tool_drift" || code == "catalog.tool_missing" || code == "catalog.tool_duplicate" ||
         code == "catalog.task_required";
}

// Refusals that prove the server no longer is the reviewed one, or that its catalog changed
// (or can no longer be watched): every tool of that server is withdrawn. An invalidation
// this gate records (list_changed after a binding, during a call or while idle) withdraws
// them as it is recorded, through GateEnvironment::on_invalidated; manifest.invalidated
// here is one recorded earlier (by another process, say).
bool WithdrawsServer(const Error& error) {
  const std::string& code = error.code;
  return code == "server.server_info_mismatch" || code == "server.protocol_version_mismatch" ||
         code == "manifest.invalidated" || code == "binding.invalidated" ||
         error.details.value("reason", json::Value()) == "subscription_lost";
}

Result<manifest::PinFile> ReadPin(const GatewayOptions& options) {
  manifest::PinFile pin{options.pin, {}};
  if (!options.pin_file.empty()) {
    auto text = base::ReadFile(options.pin_file, kMaxPinFileBytes);
    if (!text.ok()) {
      Error error = MakeError("io.unreadable", "the pin file cannot be read");
      error.details["cause"] = text.error().code;
      return error;
    }
    pin = manifest::ParsePinFile(*text);
  }
  if (!base::IsSha256Hex(pin.manifest_sha256)) {
    return MakeError("usage.invalid", "the pin must be a manifestSha256: 64 lowercase hex digits");
  }
  return pin;
}

// A pin that binds upstream entries (adopt --apply writes one) holds for every served
// server: the entry the gate would start it from is the one that was reviewed with the
// manifest. An entry the configuration cannot use starts nothing and fails on its own.
Status CheckBoundEntries(const manifest::PinFile& pin, const std::vector<std::string>& servers,
                         const mcp::RuntimeConfig* config) {
  if (pin.entries.empty()) return OkStatus();
  for (const std::string& key : servers) {
    const auto bound = pin.entries.find(key);
    const mcp::ServerConfig* live = nullptr;
    if (config != nullptr) {
      if (auto found = config->servers.find(key); found != config->servers.end()) live = &found->second;
    }
    if (bound == pin.entries.end() || (live != nullptr && live->entry_sha256 != bound->second)) {
      Error error = MakeError("config.entry_changed",
                              "the server's configuration entry is not the one pinned with the manifest; "
                              "nothing was started (adopt --undo, then adopt and --apply again)");
      error.details["server"] = key;
      return error;
    }
  }
  return OkStatus();
}

// The upstream result as this gateway's own: the members an era gives every result
// (resultType, the reserved io.modelcontextprotocol/ _meta keys such as the upstream's
// serverInfo) are the upstream connection's, not the host's; the gateway's server adds its
// own for a modern host.
json::Value AsOwnResult(json::Value result) {
  result.erase("resultType");
  auto meta = result.find("_meta");
  if (meta != result.end() && meta->is_object()) {
    for (auto it = meta->begin(); it != meta->end();) {
      it = it.key().rfind("io.modelcontextprotocol/", 0) == 0 ? meta->erase(it) : std::next(it);
    }
    if (meta->empty()) result.erase("_meta");
  }
  return result;
}

// A line on serve's stderr, where names from the manifest are escaped (contract 7.9).
void Say(const std::string& line) {
  const std::string text = json::LineForPeople("udon-mcp serve: " + line, "the line above");
  std::fwrite(text.data(), 1, text.size(), stderr);
}

// The differing pointers as a host may see them (manifest::HostPointer), each once.
std::string DriftPointers(const json::Value& drift) {
  std::vector<std::string> shown;
  if (!drift.is_array()) return {};
  for (const json::Value& entry : drift) {
    if (!entry.is_object() || !entry.contains("pointer") || !entry["pointer"].is_string()) continue;
    const std::string pointer = manifest::HostPointer(entry["pointer"].get<std::string>());
    if (std::find(shown.begin(), shown.end(), pointer) == shown.end()) shown.push_back(pointer);
  }
  std::string pointers;
  for (const std::string& pointer : shown) {
    pointers += (pointers.empty() ? "" : ", ") + (pointer.empty() ? std::string("(the whole Tool)") : pointer);
  }
  return pointers;
}

}  // namespace

std::string OfferedName(const std::string& server, const std::string& tool, bool qualified) {
  return qualified ? server + "__" + tool : tool;
}

json::Value RefusalResult(const Error& error, int exit, const json::Value& drift) {
  std::string text;
  if (exit == 5) {
    text = "udon-mcp: the call's outcome is unknown (" + error.code + "): " + error.message +
           ". It was not retried; check the tool's effects before calling again.";
  } else if (exit == 4) {
    text = "udon-mcp: the call failed after dispatch (" + error.code + "): " + error.message + ".";
  } else {
    text = "udon-mcp refused the call before dispatch (" + error.code + "): " + error.message +
           ". The upstream tool was not called.";
  }
  const std::string pointers = DriftPointers(drift);
  if (!pointers.empty()) text += " Differing pointers: " + pointers + ".";
  if (!error.pointer.empty()) text += " At: " + manifest::HostPointer(error.pointer) + ".";
  return {{"content", json::Value::array({{{"type", "text"}, {"text", text}}})},
          {"isError", true},
          {"_meta", {{"code", error.code}, {"exit", exit}}}};
}

// What the gate's invalidation hook reaches: it may run on an upstream connection's reader
// thread, and for a moment after the gateway is gone.
struct Gateway::Shared {
  std::mutex mutex;
  mcp::Server* server = nullptr;  // null once the gateway is gone
  std::vector<OfferedTool> offered;
  std::string manifest_sha256;                   // of the offer
  std::map<std::string, std::string> withdrawn;  // offered name -> code

  // Unlists the tools `select` picks that are still offered; then tells every client.
  template <typename Select>
  void Withdraw(Select select, const std::string& code) {
    bool changed = false;
    {
      std::lock_guard lock(mutex);
      if (server == nullptr) return;
      for (const OfferedTool& tool : offered) {
        if (!select(tool) || withdrawn.count(tool.name) != 0) continue;
        withdrawn.emplace(tool.name, code);
        server->UnlistTool(tool.name);
        Say("withdrew " + tool.server + "/" + tool.tool + " (" + code +
            "); it returns only with a new manifest and pin");
        changed = true;
      }
      if (changed) server->BroadcastToolsListChanged();
    }
  }

  // serve.tool_withdrawn when the offered tool of this upstream server and tool is
  // withdrawn; asked before the gate runs and again by its last step before dispatch.
  Status StillOffered(const std::string& server_key, const std::string& tool_name) {
    std::lock_guard lock(mutex);
    for (const OfferedTool& tool : offered) {
      if (tool.server != server_key || tool.tool != tool_name) continue;
      auto it = withdrawn.find(tool.name);
      if (it == withdrawn.end()) continue;
      Error error = MakeError("serve.tool_withdrawn",
                              "the gateway withdrew this tool after its binding was invalidated; it returns only "
                              "with a new manifest and pin");
      error.details["cause"] = it->second;
      return error;
    }
    return OkStatus();
  }
};

Gateway::Gateway(mcp::Server& server, gate::GateEnvironment env, GatewayOptions options)
    : server_(server), options_(std::move(options)), shared_(std::make_shared<Shared>()) {
  shared_->server = &server_;
  config_ = env.config;
  store_ = env.state;
  env.command = "serve";
  env.reuse_connections = true;
  env.max_idle_per_server = kIdleConnectionsPerServer;
  env.coalesce_verification = true;
  env.idle_close_after = kIdleCloseAfter;  // contract 4: one re-list verifies the calls that arrived before it
  if (!env.manifests) env.manifests = std::make_shared<manifest::ManifestCache>();
  manifests_ = env.manifests;
  env.on_invalidated = [shared = shared_](const std::string& server_key, const std::string&) {
    shared->Withdraw([&](const OfferedTool& tool) { return tool.server == server_key; }, "manifest.invalidated");
  };
  env.still_offered = [shared = shared_](const std::string& server_key, const std::string& tool) {
    return shared->StillOffered(server_key, tool);
  };
  gate_ = std::make_unique<gate::Gate>(std::move(env));
  // Another replica's invalidation of this manifest withdraws its server's tools here too.
  if (store_) {
    store_->WatchInvalidations([shared = shared_](const std::string& manifest_sha256, const std::string& server_key) {
      shared->Withdraw(
          [&](const OfferedTool& tool) { return tool.server == server_key && manifest_sha256 == shared->manifest_sha256; },
          "manifest.invalidated");
    });
  }
}

Gateway::~Gateway() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->server = nullptr;
  }
  gate_.reset();
}

Result<Offer> Gateway::Start() { return Build(); }

Result<Offer> Gateway::Reload() {
  auto offer = Build();
  if (!offer.ok()) {
    std::lock_guard lock(shared_->mutex);
    shared_->offered.clear();
    shared_->withdrawn.clear();
    server_.SetTools({});
    server_.BroadcastToolsListChanged();
  }
  return offer;
}

Status Gateway::Ready() {
  std::set<std::string> servers;
  {
    std::lock_guard lock(shared_->mutex);
    for (const OfferedTool& tool : shared_->offered) servers.insert(tool.server);
  }
  if (servers.empty()) return MakeError("serve.not_ready", "the gateway offers no tool");
  if (!base::ReadFile(options_.manifest_path).ok()) {
    return MakeError("manifest.unreadable", "the manifest cannot be read");
  }
  if (!options_.pin_file.empty() && !base::ReadFile(options_.pin_file, kMaxPinFileBytes).ok()) {
    return MakeError("io.unreadable", "the pin file cannot be read");
  }
  for (const std::string& key : servers) {
    if (config_ == nullptr || config_->servers.count(key) == 0) {
      return MakeError("config.server_unknown", "a served server has no configuration entry");
    }
  }
  return store_ ? store_->CheckReachable() : OkStatus();
}

std::map<std::string, std::string> Gateway::withdrawn() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->withdrawn;
}

Result<Offer> Gateway::Build() {
  UDON_ASSIGN_OR_RETURN(manifest::PinFile pin_file, ReadPin(options_));
  const std::string pin = pin_file.manifest_sha256;
  // Read and hashed once here; every tool's static check below takes this read.
  UDON_ASSIGN_OR_RETURN(std::shared_ptr<const manifest::Manifest> manifest,
                        manifests_->Reread(options_.manifest_path));
  UDON_RETURN_IF_ERROR(manifest::CheckPin(*manifest, {options_.manifest_path, pin, "", ""}));

  std::vector<std::string> servers = options_.servers.empty() ? manifest->server_keys() : options_.servers;
  for (const std::string& key : servers) {
    if (!manifest->has_server(key)) {
      Error error = MakeError("usage.invalid", "--server names a server the manifest does not have");
      error.details["server"] = key;
      return error;
    }
  }
  UDON_RETURN_IF_ERROR(CheckBoundEntries(pin_file, servers, config_));
  const bool qualified = servers.size() > 1;
  Offer offer;
  offer.manifest_sha256 = manifest->sha256();
  std::map<std::string, std::string> names;  // offered name -> "server/tool"
  std::vector<std::pair<json::Value, mcp::ToolHandler>> tools;
  for (const std::string& key : servers) {
    for (const auto& [tool_name, count] : manifest->ToolNames(key)) {
      (void)count;
      const std::string name = OfferedName(key, tool_name, qualified);
      auto [it, inserted] = names.emplace(name, key + "/" + tool_name);
      if (!inserted) {
        Error error = MakeError("serve.name_collision", "two reviewed tools would be offered under one name");
        error.details["name"] = name;
        return error;
      }
      if (manifest->review(key, tool_name) == nullptr) {
        ++offer.unreviewed;
        continue;
      }
      gate::GateResult checked = gate_->CheckStatic({options_.manifest_path, pin, key, tool_name});
      if (!checked.ok()) {
        offer.withheld.push_back({key, tool_name, *checked.error});
        continue;
      }
      OfferedTool offered{key, tool_name, name};
      json::Value listed = *manifest->FindTool(key, tool_name).front().tool;
      listed["name"] = name;
      tools.emplace_back(std::move(listed), [this, offered, pin](const json::Value& arguments, mcp::ToolContext& context) {
        return Call(offered, pin, arguments, context);
      });
      offer.offered.push_back(std::move(offered));
    }
  }
  {
    std::lock_guard lock(shared_->mutex);
    shared_->offered = offer.offered;
    shared_->manifest_sha256 = offer.manifest_sha256;
    shared_->withdrawn.clear();
    server_.SetTools(std::move(tools));
  }
  server_.BroadcastToolsListChanged();
  return offer;
}

mcp::ToolOutcome Gateway::Call(const OfferedTool& tool, const std::string& pin, const json::Value& arguments,
                               mcp::ToolContext& context) {
  // A caller's tokens decide what it may call (serve --auth oauth): the same list it was
  // shown, checked again here because a client may call a name it was never shown.
  if (const mcp::Caller* caller = context.caller(); caller != nullptr && !caller->MayUse(tool.name)) {
    const Error refused = MakeError("auth.insufficient_scope",
                                    "this caller's access token grants no scope that maps to this tool");
    return {RefusalResult(refused, 3, nullptr), std::nullopt};
  }
  // Progress is relayed while the handler runs; the relay may be reached for a moment
  // after, so it holds the context only while `open`.
  struct Relay {
    std::mutex mutex;
    mcp::ToolContext* context = nullptr;
  };
  auto relay = std::make_shared<Relay>();
  relay->context = &context;
  gate::CallOptions options;
  options.keep_result = true;
  options.client = context.client_label();
  if (const mcp::Caller* caller = context.caller()) options.caller = caller->subject;
  options.on_progress = [relay](const json::Value& params) {
    if (!params.contains("progress") || !params["progress"].is_number()) return;
    std::optional<double> total;
    if (params.contains("total") && params["total"].is_number()) total = params["total"].get<double>();
    const std::string message = params.value("message", json::Value("")).is_string()
                                    ? params.value("message", std::string())
                                    : std::string();
    std::lock_guard lock(relay->mutex);
    if (relay->context != nullptr) relay->context->Progress(params["progress"].get<double>(), total, message);
  };
  gate::GateResult result = GatedCall(tool, pin, arguments, std::move(options), context);
  {
    std::lock_guard lock(relay->mutex);
    relay->context = nullptr;
  }
  AfterCall(tool, result);
  if (result.ok() || (result.error->code == "call.tool_error" && result.forwarded.is_object())) {
    return {AsOwnResult(std::move(result.forwarded)), std::nullopt};
  }
  return {RefusalResult(*result.error, result.evidence.exit.value_or(1), result.evidence.drift), std::nullopt};
}

// The gate's run, refused at once for a withdrawn tool, observed by telemetry when set.
gate::GateResult Gateway::GatedCall(const OfferedTool& tool, const std::string& pin, const json::Value& arguments,
                                    gate::CallOptions options, mcp::ToolContext& context) {
  telemetry::CallTrace trace;
  if (options_.telemetry) {
    trace = options_.telemetry->Begin({context.protocol_version(), context.session_id(), context.network_transport(),
                                       context.trace().traceparent, context.trace().tracestate});
    options.trace = {trace.upstream_traceparent(), trace.trace_state};
  }
  gate::GateResult result;
  if (Status offered = shared_->StillOffered(tool.server, tool.tool); !offered.ok()) {
    result.error = offered.error();
    result.evidence.exit = 3;
  } else {
    result = gate_->Call({options_.manifest_path, pin, tool.server, tool.tool}, arguments, options);
  }
  if (options_.telemetry) {
    const mcp::ServerConfig* upstream = nullptr;
    if (config_ != nullptr) {
      if (auto found = config_->servers.find(tool.server); found != config_->servers.end()) upstream = &found->second;
    }
    const bool stdio = upstream == nullptr || upstream->type == mcp::ServerType::kStdio;
    options_.telemetry->End(trace, {tool.name, tool.server, tool.tool, stdio ? "stdio" : "http"}, result);
  }
  return result;
}

void Gateway::AfterCall(const OfferedTool& tool, const gate::GateResult& result) {
  if (result.ok()) return;
  const std::string& code = result.error->code;
  // The host hears these pointers as HostPointer shows them; the operator reads them whole.
  const json::Value& drift = result.evidence.drift;
  for (const json::Value& entry : drift.is_array() ? drift : json::Value::array()) {
    if (!entry.is_object()) continue;
    const std::string pointer = entry.value("pointer", std::string());
    Say(tool.server + "/" + tool.tool + " differs at " + (pointer.empty() ? "(the whole Tool)" : pointer) + " (" +
        entry.value("change", std::string()) + ")");
  }
  if (WithdrawsTool(code)) {
    shared_->Withdraw([&](const OfferedTool& offered) { return offered.name == tool.name; }, code);
  } else if (WithdrawsServer(*result.error)) {
    shared_->Withdraw([&](const OfferedTool& offered) { return offered.server == tool.server; }, code);
  }
}

}  // namespace udon::gateway
