// Options that every gate-facing command shares (contract section 2, "Common flags") and
// the runtime objects they resolve to.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "gate/evidence.h"
#include "gate/gate.h"
#include "base/result.h"
#include "manifest/binding.h"
#include "manifest/policy.h"
#include "mcp/client/config.h"

namespace udon::cli {

struct CommonOptions {
  std::optional<std::string> config;
  std::optional<std::string> policy;
  std::optional<std::string> state_dir;
  std::optional<std::string> state;  // --state PATH|URI (contract 7.14)
  std::optional<std::string> token_key;  // --token-key FILE: the PostgreSQL token store's key
  std::optional<std::string> evidence;
  double timeout_seconds = 0;  // 0: the policy's callTimeoutSeconds
  bool json = false;
};

void AddCommonOptions(CLI::App* command, CommonOptions& options);
// --token-key FILE alone, for the login commands (AddCommonOptions adds it too).
void AddTokenKeyOption(CLI::App* command, CommonOptions& options);

// What verify, call and probe name: the binding (--manifest, --sha256, --server, --tool, all
// required) and, for the commands that call, the arguments (--args, --args-file).
struct BindingOptions {
  std::string manifest;
  std::string sha256;
  std::string server;
  std::string tool;
  std::string args;
  std::string args_file;

  manifest::Binding binding() const { return {manifest, sha256, server, tool}; }
};

void AddBindingOptions(CLI::App* command, BindingOptions& options);
void AddArgumentOptions(CLI::App* command, BindingOptions& options, const char* args_help);

// The policy (defaults without --policy). Errors: policy.invalid, io.unreadable.
Result<manifest::Policy> LoadPolicy(const CommonOptions& options);
// The runtime configuration by the contract's lookup order.
Result<mcp::RuntimeConfig> LoadConfig(const CommonOptions& options);
// tools/call arguments from --args TEXT or --args-file FILE ("-" for stdin): a JSON object;
// neither given is the absent body, {}. Errors: usage.invalid, io.unreadable.
Result<json::Value> ReadToolArguments(const std::string& args, const std::string& args_file);
// --protocol-version, checked before anything is spawned or contacted: a version udon-mcp
// does not speak is a usage error naming the supported ones (details.supported).
// Errors: usage.invalid.
Status CheckProtocolVersionOption(const std::optional<std::string>& version);
// The gate's call timeout from --timeout, or 0 when it was not given: the gate then takes
// the server entry's "timeout" (milliseconds, as MCP clients write it), else the policy's
// callTimeoutSeconds (gate::Gate::CallTimeout).
std::chrono::milliseconds TimeoutOption(const CommonOptions& options);
// --state, else $UDON_MCP_STATE, else the policy's "state"; empty: the state directory.
std::string StateLocation(const CommonOptions& options, const manifest::Policy& policy);
// Sets env.state from StateLocation (env.policy already loaded); left null, the gate uses
// the file store in env.state_dir. A database is contacted only by the gate itself, so an
// unreachable one refuses the call (state.unavailable, exit 3). Errors: usage.invalid.
Status OpenState(const CommonOptions& options, gate::GateEnvironment& env);
// What a gate needs, loaded before any step runs.
struct PreparedGate {
  mcp::RuntimeConfig config;
  std::unique_ptr<gate::EvidenceWriter> evidence;
  gate::GateEnvironment env;  // points at config and evidence: keep PreparedGate alive
};

// The gate's environment from the common options: policy, configuration, state directory
// and store, evidence, timeout; `command` is what evidence records. A usage or
// configuration problem is an error (exit 2). The configuration is optional here: a digest
// mismatch must be reported without touching it, so an unknown server surfaces at the
// connect step. `diagnostics`: --diagnostics (stderr only). Errors: policy.invalid,
// io.unreadable, config.invalid, usage.invalid, state.unavailable.
Result<std::unique_ptr<PreparedGate>> PrepareGate(const CommonOptions& options, const char* command,
                                                  bool diagnostics);

// The evidence writer when --evidence was given (a file, or a postgres:// URI: the
// database's evidence table, reached within the call's timeout as the state store is),
// else nullptr.
Result<std::unique_ptr<gate::EvidenceWriter>> OpenEvidence(const CommonOptions& options,
                                                           const manifest::Policy& policy);

}  // namespace udon::cli
