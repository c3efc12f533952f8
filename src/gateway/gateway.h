// The gateway behind `udon-mcp serve`: an MCP server that offers the reviewed tools of a
// pinned manifest and runs the whole gate before every call it forwards upstream.
//
// Start-up runs gate steps 1 and 2 (digest, static) for every reviewed tool of the selected
// servers; what passes is offered as its complete reviewed Tool object (renamed
// SERVER__TOOL when more than one server is served). A call runs every step against the
// tool's upstream server and forwards the upstream result: content and isError as sent,
// structuredContent only once validated against the reviewed outputSchema. A refusal is a
// result with isError true, a fixed text and _meta {code, exit}: nothing is sent upstream.
// Drift, an upstream list_changed or a lost subscription withdraws the tools concerned at
// once (clients hear notifications/tools/list_changed); only Reload brings them back.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gate/gate.h"
#include "json/json.h"
#include "base/result.h"
#include "manifest/binding.h"
#include "mcp/server/server.h"
#include "telemetry/telemetry.h"

namespace udon::gateway {

struct GatewayOptions {
  std::string manifest_path;
  std::string pin;       // manifestSha256; ignored when pin_file is set
  std::string pin_file;  // holds the pin (manifest/pin_file.h); re-read by Reload
  std::vector<std::string> servers;  // empty: every server of the manifest
  // Metrics and traces of every call (telemetry/telemetry.h); null: none.
  std::shared_ptr<telemetry::Telemetry> telemetry;
};

// The name a tool is offered under: its own when one server is served, else SERVER__TOOL.
std::string OfferedName(const std::string& server, const std::string& tool, bool qualified);

struct OfferedTool {
  std::string server;
  std::string tool;
  std::string name;  // as tools/list shows it
};

struct WithheldTool {
  std::string server;
  std::string tool;
  Error why;  // the static step's refusal (code and fixed message)
};

// What a start or reload found.
struct Offer {
  std::string manifest_sha256;
  std::vector<OfferedTool> offered;
  std::vector<WithheldTool> withheld;
  std::size_t unreviewed = 0;  // tools of the selected servers without a review: never offered
};

// A refused or failed call as a CallToolResult: isError, one text block naming the code, the
// fixed message and the differing pointers, and _meta {code, exit}. Values never appear, and
// pointers only as manifest::HostPointer shows them: a name the server chose is "*".
json::Value RefusalResult(const Error& error, int exit, const json::Value& drift);

class Gateway {
 public:
  // `env` is the gate's environment (config, policy, state, evidence); the gateway sets its
  // command, connection reuse and invalidation hook. `server` is where the tools are offered.
  Gateway(mcp::Server& server, gate::GateEnvironment env, GatewayOptions options);
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Steps 1 and 2 for every reviewed tool, then offers what passed; nothing is offered on an
  // error. Errors: usage.invalid (a bad pin, a server the manifest lacks), io.unreadable
  // (the pin file), manifest.unreadable, manifest.invalid, manifest.digest_mismatch,
  // serve.name_collision, config.entry_changed (the pin file binds upstream entries and a
  // served server's is not the one bound, or is not bound).
  Result<Offer> Start();
  // Re-reads the pin file and the manifest and starts over (SIGHUP). On an error nothing is
  // offered until a later Reload succeeds (fail closed), and clients hear of it either way.
  Result<Offer> Reload();

  // Whether this gateway can take calls (serve's /readyz): its last start or reload offered
  // tools, its manifest (and pin file) can be read, every served server has a configuration
  // entry, and the state store answers. Withdrawn tools do not make it unready: a call to one
  // is refused with its code on every replica alike. Errors: serve.not_ready (nothing
  // offered), manifest.unreadable, io.unreadable (the pin file), config.server_unknown,
  // state.unavailable.
  Status Ready();

  // The offered names withdrawn since the last start, with the code that withdrew them.
  std::map<std::string, std::string> withdrawn() const;

 private:
  struct Shared;
  Result<Offer> Build();
  mcp::ToolOutcome Call(const OfferedTool& tool, const std::string& pin, const json::Value& arguments,
                        mcp::ToolContext& context);
  gate::GateResult GatedCall(const OfferedTool& tool, const std::string& pin, const json::Value& arguments,
                             gate::CallOptions options, mcp::ToolContext& context);
  void AfterCall(const OfferedTool& tool, const gate::GateResult& result);

  mcp::Server& server_;
  GatewayOptions options_;
  std::shared_ptr<Shared> shared_;  // what the gate's invalidation hook may still reach
  std::shared_ptr<manifest::ManifestCache> manifests_;  // the gate's: start-up reads once
  std::unique_ptr<gate::Gate> gate_;
  const mcp::RuntimeConfig* config_ = nullptr;  // the gate's: a pin's bound entries are checked against it
  std::shared_ptr<gate::StateStore> store_;     // the gate's, when not the state directory
};

}  // namespace udon::gateway
