// The evidence record (docs/contract.md 7.4): one value-free object per gate decision,
// written by the gate (and the probe, with its probe object) and read back by the probe
// and `evidence summarize`. One type, so the member names live in one place.
//
// FromJson reads what any version wrote and trusts none of it: a member that is absent
// stays absent (older records lack newer members; records written before keyed digests
// carry argumentsSha256/resultSha256), a number or boolean of the wrong type reads as
// absent, and a string member of the wrong type reads as present and empty (readers
// treat it as unreadable, never as a value).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"

namespace udon::gate {

struct EvidenceStep {
  std::string step;                    // digest, static, connect, list, compare, arguments, dispatch
  std::optional<std::string> outcome;  // "ok" or the refusal code
  std::optional<double> ms;
};

// The probe's object in a record it writes (docs/experiment.md).
struct ProbeFacts {
  std::string run;
  std::optional<int> repetition;
  std::optional<int> repeat;
  std::optional<int> concurrency;
  std::string connections;  // fresh | reuse
  bool overlapped = false;
};

struct EvidenceRecord {
  // Always written by the gate.
  std::optional<std::string> time;
  std::optional<std::string> command;
  std::optional<std::string> manifest_sha256;  // as loaded (the pin when nothing loaded)
  std::optional<std::string> pinned_sha256;
  std::optional<std::string> server;
  std::optional<std::string> tool;
  // serve: which of the gateway's clients asked (a label, never a secret).
  std::optional<std::string> client;
  // serve --auth oauth: the caller's token subject, keyed like the argument digest.
  std::optional<std::string> caller_hmac_sha256;
  std::optional<std::vector<EvidenceStep>> steps;
  std::optional<std::string> code;  // "ok" or the refusal
  std::optional<int> exit;          // DecisionExit
  std::optional<bool> dispatched;
  std::optional<std::string> connection;  // fresh | reused
  std::optional<bool> barrier;
  std::optional<int> listings;
  std::optional<int> disturbed_listings;
  std::optional<int> list_changed_before_binding;
  std::optional<double> gate_ms;
  std::optional<double> call_ms;
  // When they apply.
  std::optional<std::string> protocol_version;
  std::optional<std::string> era;
  std::optional<std::string> subscription;
  json::Value sandbox;  // {"enabled": ...}; null: absent
  std::optional<bool> model_backed;
  std::optional<std::string> invalidation;
  json::Value drift;               // [{pointer, change, area}]; null: absent
  json::Value server_info_drift;   // [{pointer, change}]; null: absent
  std::optional<std::vector<std::string>> server_requests;
  std::optional<std::string> live_tool_sha256;
  std::optional<std::string> reuse_refused;
  std::optional<std::string> invalidation_write_failed;
  std::optional<std::string> notification_stream;
  std::optional<std::string> arguments_hmac_sha256;
  std::optional<std::string> result_hmac_sha256;
  // A result that arrived, by shape only: content block types by count (the protocol's
  // type names, any other "other") and whether it held structuredContent.
  json::Value content_types;  // {"text": 2, "image": 1}; null: absent
  std::optional<bool> has_structured_content;
  std::optional<std::string> digest_key_id;
  // The state database's sslmode when its URI weakened the verify-full default (7.14).
  std::optional<std::string> store_tls;
  json::Value cause;   // the error's details.cause; null: absent
  json::Value reason;  // the error's details.reason; null: absent
  // Written by earlier versions only (plain SHA-256, before keyed digests).
  std::optional<std::string> arguments_sha256;
  std::optional<std::string> result_sha256;
  // capture's record (cli): how the server was opened.
  std::optional<std::string> negotiation;
  std::optional<ProbeFacts> probe;

  // Only the members that are set; the same bytes the gate has always written.
  json::Value ToJson() const;
  // Any JSON object (see the file comment); a non-object gives an empty record.
  static EvidenceRecord FromJson(const json::Value& value);
};

// The step that ended the gate: the first whose outcome is not "ok"; empty when none did.
std::string FailedStep(const EvidenceRecord& record);

// The `exit` a gate decision's record states: the contract's class of the decision
// (section 3) as its number, from the gate's own classes below: no error 0, indeterminate 5,
// a failed call 4, a refusal 3, unusable input 2, else 1 (the gate's machinery failed).
// The command line's table (cli/exit_codes.h, GatedExitCodeFor) decides the process's exit
// status; cli's exit-code test holds the two equal for every code the gate returns.
int DecisionExit(const std::optional<Error>& error);

// Classes of a gate decision by its error code, for logic that needs one.
// Dispatched, and the outcome cannot be established: never retried (contract 3).
bool IsIndeterminate(std::string_view code);
// A dispatched call's established failure: call.*, not indeterminate.
bool IsCallFailure(std::string_view code);
// Before any step could judge: the manifest unreadable, the server or state directory
// unknown, malformed input or configuration.
bool IsUnusableInput(std::string_view code);
// A step judged and refused (the gate failed closed): the manifest, review, server,
// catalog, binding and input refusals, a serialize lock held too long. A manifest the gate
// cannot parse is a refusal too (contract 4: manifest.invalid is 3 for a gated call).
bool IsRefusal(std::string_view code);

}  // namespace udon::gate
