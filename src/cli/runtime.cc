#include "cli/runtime.h"

namespace udon::cli {

void AddCommonOptions(CLI::App* command, CommonOptions& options) {
  command->add_option("--config", options.config,
                      "Runtime configuration (default: $UDON_MCP_CONFIG, then ./mcp.json)");
  command->add_option("--policy", options.policy, "Local policy file (JSON or YAML)");
  command->add_option("--state-dir", options.state_dir,
                      "State directory (default: $UDON_MCP_STATE_DIR, $XDG_STATE_HOME/udon-mcp)");
  command->add_option("--evidence", options.evidence, "Append value-free JSON Lines evidence here");
  command->add_option("--timeout", options.timeout_seconds,
                      "Per-request timeout in seconds (default: policy callTimeoutSeconds)")
      ->check(CLI::NonNegativeNumber);
  command->add_flag("--json", options.json, "Machine output on stdout");
}

Result<manifest::Policy> LoadPolicy(const CommonOptions& options) {
  if (!options.policy) return manifest::Policy{};
  return manifest::LoadPolicyFile(*options.policy);
}

Result<mcp::RuntimeConfig> LoadConfig(const CommonOptions& options) {
  return mcp::LoadRuntimeConfig(options.config, mcp::ProcessEnv());
}

Result<std::unique_ptr<gate::EvidenceWriter>> OpenEvidence(const CommonOptions& options) {
  if (!options.evidence) return std::unique_ptr<gate::EvidenceWriter>();
  return gate::EvidenceWriter::Open(*options.evidence);
}

}  // namespace udon::cli
