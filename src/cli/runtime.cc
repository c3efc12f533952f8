#include "cli/runtime.h"

#include <cstdio>
#include <cstdlib>

#include "cli/logins.h"
#include "cli/output.h"
#include "gate/state.h"
#include "gate/state_store.h"
#include "base/file.h"
#include "mcp/client/sandbox_layout.h"
#include "mcp/protocol/protocol.h"
#include "oauth/token_store.h"
#include "state_pg/open.h"
#include "state_pg/token_store.h"

namespace udon::cli {

void AddBindingOptions(CLI::App* command, BindingOptions& options) {
  command->add_option("--manifest", options.manifest, "Reviewed manifest")->required();
  command->add_option("--sha256", options.sha256, "The pinned manifestSha256")->required();
  command->add_option("--server", options.server, "Server key")->required();
  command->add_option("--tool", options.tool, "Tool name")->required();
}

void AddArgumentOptions(CLI::App* command, BindingOptions& options, const char* args_help) {
  command->add_option("--args", options.args, args_help);
  command->add_option("--args-file", options.args_file, "Arguments from a file (- for stdin)");
}

void AddTokenKeyOption(CLI::App* command, CommonOptions& options) {
  command->add_option("--token-key", options.token_key,
                      "Key file (32 bytes, 0600) sealing OAuth logins in a postgres:// state store "
                      "(default: $UDON_MCP_TOKEN_KEY_FILE)");
}

void AddCommonOptions(CLI::App* command, CommonOptions& options) {
  command->add_option("--config", options.config,
                      "Runtime configuration (default: $UDON_MCP_CONFIG, then ./mcp.json)");
  command->add_option("--policy", options.policy, "Local policy file (JSON or YAML)");
  command->add_option("--state-dir", options.state_dir,
                      "State directory (default: $UDON_MCP_STATE_DIR, $XDG_STATE_HOME/udon-mcp)");
  command->add_option("--state", options.state,
                      "Shared state store: a directory or a postgres:// URI (default: $UDON_MCP_STATE, "
                      "policy \"state\", the state directory)");
  AddTokenKeyOption(command, options);
  command->add_option("--evidence", options.evidence,
                      "Append value-free JSON Lines evidence here (a file or a postgres:// URI)");
  command->add_option("--timeout", options.timeout_seconds,
                      "Per-request timeout in seconds (default: policy callTimeoutSeconds)")
      ->check(CLI::NonNegativeNumber);
  command->add_flag("--json", options.json, "Machine output on stdout");
}

Result<manifest::Policy> LoadPolicy(const CommonOptions& options) {
  if (!options.policy) return manifest::Policy{};
  return manifest::LoadPolicyFile(*options.policy);
}

namespace {

// A file store or an evidence file, never a database URI.
void HidePath(const std::optional<std::string>& place) {
  if (place && !place->empty() && !gate::IsPostgresUrl(*place)) mcp::HideFromSandboxes(*place);
}

// udon-mcp's own files never show inside a sandboxed server (contract 7.10), even where a
// tree the server needs holds them: every command that starts servers loads the
// configuration here first.
void HideOwnFiles(const CommonOptions& options) {
  mcp::HideFromSandboxes(mcp::ResolveConfigPath(options.config, mcp::ProcessEnv()));
  HidePath(options.policy);
  if (auto dir = gate::ResolveStateDir(options.state_dir); dir.ok()) mcp::HideFromSandboxes(*dir);
  HidePath(options.state);
  if (const char* state = std::getenv("UDON_MCP_STATE"); state != nullptr) HidePath(std::string(state));
  HidePath(options.evidence);
}

}  // namespace

Result<mcp::RuntimeConfig> LoadConfig(const CommonOptions& options) {
  HideOwnFiles(options);
  auto config = mcp::LoadRuntimeConfig(options.config, mcp::ProcessEnv());
  // check and validate never read the runtime configuration: every command that does
  // flags its unsafe entries here, on stderr.
  if (config.ok()) {
    for (const std::string& warning : config->warnings) std::fprintf(stderr, "udon-mcp: warning: %s\n", warning.c_str());
    // Remote servers behind OAuth get their stored login's token (contract 7.23).
    AttachStoredLogins(*config, OpenLoginStore(options));
  }
  return config;
}

Result<json::Value> ReadToolArguments(const std::string& args, const std::string& args_file) {
  if (!args.empty() && !args_file.empty()) {
    return MakeError("usage.invalid", "--args and --args-file exclude each other");
  }
  if (args.empty() && args_file.empty()) return json::Value::object();
  std::string text = args;
  if (!args_file.empty()) {
    UDON_ASSIGN_OR_RETURN(text, base::ReadFile(args_file, 16u << 20));
  }
  auto value = json::Parse(text);
  if (!value.ok()) return value.error().WithCode("usage.invalid");
  if (!value->is_object()) return MakeError("usage.invalid", "arguments must be a JSON object");
  return value;
}

Status CheckProtocolVersionOption(const std::optional<std::string>& version) {
  if (!version || mcp::IsSupportedProtocolVersion(*version)) return OkStatus();
  std::string supported;
  json::Value list = json::Value::array();
  for (const std::string& known : mcp::SupportedProtocolVersions()) {
    supported += (supported.empty() ? "" : ", ") + known;
    list.push_back(known);
  }
  Error error = MakeError("usage.invalid", "--protocol-version must be one this udon-mcp speaks: " + supported);
  error.details["supported"] = std::move(list);
  return error;
}

std::chrono::milliseconds TimeoutOption(const CommonOptions& options) {
  if (options.timeout_seconds <= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(static_cast<long long>(options.timeout_seconds * 1000));
}

std::string StateLocation(const CommonOptions& options, const manifest::Policy& policy) {
  if (options.state && !options.state->empty()) return *options.state;
  if (const char* state = std::getenv("UDON_MCP_STATE"); state != nullptr && *state != '\0') return state;
  return policy.state;
}

namespace {

// A database that never answers (connect_timeout=0, a name server that hangs) ends each
// connection attempt within the call's timeout: --timeout, else callTimeoutSeconds.
std::chrono::milliseconds DatabaseConnectBound(const CommonOptions& options, const manifest::Policy& policy) {
  const std::chrono::milliseconds bound = TimeoutOption(options);
  return bound.count() > 0 ? bound : std::chrono::seconds(policy.call_timeout_seconds);
}

}  // namespace

Status OpenState(const CommonOptions& options, gate::GateEnvironment& env) {
  const std::string location = StateLocation(options, env.policy);
  if (location.empty()) return OkStatus();
  HidePath(location);
  UDON_ASSIGN_OR_RETURN(env.state, state_pg::OpenStateStore(location, DatabaseConnectBound(options, env.policy)));
  // The command consults the store first after reading its manifest: a database store
  // connects meanwhile.
  env.state->Warm();
  return OkStatus();
}

Result<std::shared_ptr<oauth::TokenStore>> OpenLoginStore(const CommonOptions& options) {
  UDON_ASSIGN_OR_RETURN(const std::string state_dir, gate::ResolveStateDir(options.state_dir));
  // The gate reports a policy it cannot load; here its "state" member is only a default.
  Result<manifest::Policy> policy = LoadPolicy(options);
  const manifest::Policy used = policy.ok() ? *policy : manifest::Policy{};
  const std::string location = StateLocation(options, used);
  if (!gate::IsPostgresUrl(location)) return std::shared_ptr<oauth::TokenStore>(new oauth::FileTokenStore(state_dir));
  // A key made on one machine would seal rows no other runner of the database can open.
  if (state_pg::ResolveTokenKeySource(options.token_key, state_dir).create_if_missing) {
    Error error = MakeError("auth.store_key_unavailable",
                            "OAuth logins in a postgres:// state store are sealed with a key that is not in the "
                            "database: give its file with --token-key FILE (or $UDON_MCP_TOKEN_KEY_FILE)");
    error.details["option"] = "--token-key";
    return error;
  }
  UDON_ASSIGN_OR_RETURN(std::unique_ptr<oauth::TokenStore> store,
                        state_pg::OpenTokenStore(location, state_dir, options.token_key,
                                                 DatabaseConnectBound(options, used)));
  return std::shared_ptr<oauth::TokenStore>(std::move(store));
}

Result<std::unique_ptr<gate::EvidenceWriter>> OpenEvidence(const CommonOptions& options,
                                                           const manifest::Policy& policy) {
  if (!options.evidence) return std::unique_ptr<gate::EvidenceWriter>();
  return state_pg::OpenEvidenceWriter(*options.evidence, DatabaseConnectBound(options, policy));
}

Result<std::unique_ptr<PreparedGate>> PrepareGate(const CommonOptions& o, const char* command, bool diagnostics) {
  auto prepared = std::make_unique<PreparedGate>();
  UDON_ASSIGN_OR_RETURN(prepared->env.policy, LoadPolicy(o));
  auto config = LoadConfig(o);
  if (!config.ok() && config.error().code != "config.unreadable") return std::move(config).error();
  if (config.ok()) prepared->config = std::move(config).value();
  UDON_ASSIGN_OR_RETURN(prepared->env.state_dir, gate::ResolveStateDir(o.state_dir));
  UDON_RETURN_IF_ERROR(OpenState(o, prepared->env));
  UDON_ASSIGN_OR_RETURN(prepared->evidence, OpenEvidence(o, prepared->env.policy));
  prepared->env.config = &prepared->config;
  prepared->env.evidence = prepared->evidence.get();
  prepared->env.command = command;
  if (diagnostics) prepared->env.diagnostics = [](const std::vector<mcp::Diagnostic>& d) { PrintDiagnostics(d); };
  prepared->env.call_timeout = TimeoutOption(o);
  return prepared;
}

}  // namespace udon::cli
