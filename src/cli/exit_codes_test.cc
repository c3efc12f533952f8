#include "cli/exit_codes.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "gate/evidence_record.h"

namespace udon::cli {
namespace {

// docs/contract.md sections 4 and 7.1, row by row (manifest.invalid: 2 where a manifest is
// only read; manifest.server_unknown's 2 in review is that command's own choice).
const std::vector<std::pair<const char*, int>> kContract = {
    {"manifest.unreadable", 2},           {"manifest.invalid", 2},
    {"manifest.digest_mismatch", 3},      {"manifest.expired", 3},
    {"manifest.window_exceeds_policy", 3}, {"manifest.incomplete", 3},
    {"manifest.invalidated", 3},          {"review.missing", 3},
    {"review.incomplete", 3},             {"review.rejected", 3},
    {"review.unclassified_channel", 3},   {"config.server_unknown", 2},
    {"server.connect_failed", 3},         {"server.protocol_version_mismatch", 3},
    {"server.server_info_mismatch", 3},   {"server.request_refused", 3},
    {"catalog.pagination_invalid", 3},    {"catalog.tool_missing", 3},
    {"catalog.tool_duplicate", 3},        {"catalog.unstable", 3},
    {"catalog.tool_drift", 3},            {"catalog.task_required", 3},
    {"binding.invalidated", 3},           {"binding.output_schema_required", 3},
    {"input.schema_violation", 3},        {"input.unsupported_dialect", 3},
    {"call.protocol_error", 4},           {"call.tool_error", 4},
    {"call.server_request_refused", 4},   {"call.structured_content_missing", 4},
    {"call.output_schema_violation", 4},  {"call.indeterminate", 5},
    {"uws.invalid", 2},                   {"uws.unsupported", 2},
    {"usage.invalid", 2},                 {"config.invalid", 2},
    {"config.unreadable", 2},             {"policy.invalid", 2},
    {"manifest.server_unknown", 3},       {"input.schema_invalid", 3},
    {"state.unavailable", 2},             {"state.write_failed", 1},
    {"state.lock_failed", 1},             {"state.lock_timeout", 3},
    {"evidence.write_failed", 1},         {"io.unreadable", 2},
    {"io.too_large", 2},                  {"json.syntax", 2},
    {"json.duplicate_key", 2},            {"yaml.invalid", 2},
    {"probe.side_effects_refused", 3},    {"probe.nondeterministic_not_model_backed", 1},
    {"uws.expression_failed", 2},         {"uws.criteria_unsatisfied", 4},
    {"content_trust.blocked", 3},         {"uws.timeout", 5},
    {"something.else", 1},                {"internal.error", 1},
    {"serve.name_collision", 2},          {"serve.tool_withdrawn", 3},
    {"evidence.index_invalid", 2},
    {"auth.issuer_metadata_invalid", 2}, {"auth.jwks_invalid", 2},
    {"auth.issuer_unreachable", 1},
};

TEST(ExitCodes, FollowTheContractsTables) {
  for (const auto& [code, exit] : kContract) EXPECT_EQ(ExitCodeFor(code), exit) << code;
  EXPECT_EQ(ExitCodeFor(MakeError("call.tool_error", "x")), kExitFailed);
}

TEST(ExitCodes, AGatedCallRefusesAManifestItCannotParse) {
  EXPECT_EQ(ExitCodeFor("manifest.invalid"), kExitInvalidInput);
  EXPECT_EQ(GatedExitCodeFor("manifest.invalid"), kExitRefused);
  EXPECT_EQ(GatedExitCodeFor(MakeError("manifest.invalid", "x")), kExitRefused);
  for (const auto& [code, exit] : kContract) {
    if (std::string_view(code) != "manifest.invalid" && std::string_view(code) != "state.unavailable") {
      EXPECT_EQ(GatedExitCodeFor(code), exit) << code;
    }
  }
}

// Contract 7.14: a state store the gate cannot consult before dispatch refuses the call
// (nothing was sent); a state directory that cannot be determined is unusable input.
TEST(ExitCodes, AGatedCallRefusesWhenItsStateStoreIsUnavailable) {
  EXPECT_EQ(ExitCodeFor("state.unavailable"), kExitInvalidInput);
  EXPECT_EQ(GatedExitCodeFor("state.unavailable"), kExitRefused);
}

// An evidence record states the exit of its decision (gate::DecisionExit); it must be the
// status the command exits with, for every code a gated call can end in (and for ones it
// never should, such as a component code escaping). The workflow's, the probe's, content
// trust's, the gateway's and the drift report's own codes never come out of the gate.
TEST(ExitCodes, EvidenceStatesTheExitTheCommandExitsWith) {
  std::vector<const char*> codes;
  for (const auto& [code, exit] : kContract) {
    const std::string_view name = code;
    if (name.rfind("uws.", 0) != 0 && name.rfind("probe.", 0) != 0 && name.rfind("content_trust.", 0) != 0 &&
        name.rfind("serve.", 0) != 0 && name.rfind("auth.", 0) != 0 && name != "evidence.index_invalid") {
      codes.push_back(code);
    }
  }
  for (const char* code : {"mcp.closed", "mcp.timeout", "schema.invalid"}) codes.push_back(code);
  for (const char* code : codes) {
    EXPECT_EQ(gate::DecisionExit(MakeError(code, "x")), GatedExitCodeFor(code)) << code;
  }
  EXPECT_EQ(gate::DecisionExit(std::nullopt), kExitOk);
}

}  // namespace
}  // namespace udon::cli
