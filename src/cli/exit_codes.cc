#include "cli/exit_codes.h"

#include <map>
#include <string>

namespace udon::cli {

int ExitCodeFor(std::string_view code) {
  static const std::map<std::string, int, std::less<>> kExplicit = {
      {"manifest.unreadable", 2},   {"manifest.invalid", 2},      {"config.server_unknown", 2},
      {"config.invalid", 2},        {"config.unreadable", 2},     {"policy.invalid", 2},
      {"usage.invalid", 2},         {"uws.invalid", 2},           {"uws.unsupported", 2},
      {"uws.expression_failed", 2}, {"io.unreadable", 2},         {"io.too_large", 2},
      {"state.unavailable", 2},     {"state.lock_timeout", 3},    {"content_trust.blocked", 3},
      {"probe.side_effects_refused", 3}, {"uws.criteria_unsatisfied", 4},
      {"call.indeterminate", 5},    {"uws.timeout", 5},
      {"serve.name_collision", 2},  {"serve.tool_withdrawn", 3},  {"serve.settings_invalid", 2},
      {"evidence.index_invalid", 2},
      {"auth.store_unavailable", 1}, {"auth.random_failed", 1},
      {"auth.issuer_metadata_invalid", 2}, {"auth.jwks_invalid", 2}, {"auth.issuer_unreachable", 1},
  };
  if (auto it = kExplicit.find(code); it != kExplicit.end()) return it->second;
  // Unreadable or malformed input of any kind.
  for (std::string_view prefix : {"io.", "json.", "yaml.", "usage.", "config.", "policy.", "adopt."}) {
    if (code.substr(0, prefix.size()) == prefix) return kExitInvalidInput;
  }
  if (code.substr(0, 5) == "call.") return kExitFailed;
  for (std::string_view prefix : {"manifest.", "review.", "server.", "catalog.", "binding.", "input.", "auth."}) {
    if (code.substr(0, prefix.size()) == prefix) return kExitRefused;
  }
  return kExitInternal;
}

int ExitCodeFor(const Error& error) { return ExitCodeFor(error.code); }

// A gated call's outcome: the gate refuses (3) a manifest it cannot trust and a state store
// it cannot consult before dispatch (docs/contract.md 7.14); elsewhere both are unusable
// input (2).
int GatedExitCodeFor(std::string_view code) {
  if (code == "manifest.invalid" || code == "state.unavailable") return kExitRefused;
  return ExitCodeFor(code);
}

int GatedExitCodeFor(const Error& error) { return GatedExitCodeFor(error.code); }

}  // namespace udon::cli
