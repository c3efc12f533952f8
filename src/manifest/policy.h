// Local policy (contract 1.4): what this installation accepts beyond the Stage 1 rules.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "json/json.h"
#include "base/result.h"

namespace udon::manifest {

enum class FindingsBlock { kNone, kHigh, kWarning };

struct Policy {
  int max_review_window_days = 30;
  bool allow_model_backed = true;
  std::optional<std::vector<std::string>> allowed_side_effects;  // nullopt: any reviewed list
  FindingsBlock block_on_findings = FindingsBlock::kNone;
  int call_timeout_seconds = 60;
  std::size_t max_pages = 1000;
  std::size_t max_message_bytes = 16u * 1024u * 1024u;
  bool strict_list_changed = false;
  // How long a serialize tool's call waits for its lock before state.lock_timeout.
  int serialize_timeout_seconds = 60;
  // How far capturedAt and reviewedAt may lie ahead of this machine's clock.
  int clock_skew_seconds = 300;
  // serve over HTTP: how long a legacy session with nothing in flight and no GET stream
  // lives before it is forgotten (its client gets 404 and initializes again).
  int session_idle_seconds = 3600;
  // Where invalidations and serialize locks live when neither --state nor
  // $UDON_MCP_STATE says: a state directory path or a postgres:// URI; empty: the state
  // directory (contract 7.14).
  std::string state;
};

// A policy document: a closed set of members, each optional (defaults above).
// Errors: policy.invalid with the pointer of the offending member.
Result<Policy> PolicyFromJson(const json::Value& document);
// Reads FILE (JSON or YAML). Errors: policy.invalid, io.unreadable.
Result<Policy> LoadPolicyFile(const std::string& path);
json::Value PolicyToJson(const Policy& policy);

}  // namespace udon::manifest
