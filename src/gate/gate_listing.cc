// Steps 4 and 5: the exhaustive live listing, the selected Tool exactly once, its
// canonical comparison with the reviewed one; and the binding's events since.
#include "gate/gate.h"

#include <string_view>
#include <utility>

#include "catalog/catalog.h"
#include "gate/comparison.h"
#include "gate/internal/details.h"
#include "gate/internal/run.h"
#include "gate/state_store.h"
#include "json/canonical.h"
#include "base/sha256.h"

namespace udon::gate {

using catalog::EndsSubscription;
using catalog::IsListChanged;
using internal::DriftDetails;
using internal::Refuse;

Status Gate::StepList(Run& run) {
  // A serialized tool's call holds its lock from before the listing through dispatch, so
  // no other caller's call falls between this call's comparison and its dispatch.
  if (run.arguments != nullptr && run.review.concurrency == manifest::Concurrency::kSerialize && !run.lock) {
    std::string scope = run.binding.server;
    if (run.review.serialize_scope == manifest::SerializeScope::kTool) scope += "\n" + run.binding.tool;
    UDON_ASSIGN_OR_RETURN(run.lock, env_.state->AcquireSerializeLock(
                                        scope, std::chrono::seconds(env_.policy.serialize_timeout_seconds)));
  }
  if (run.lane) return ListShared(run);
  mcp::Client& client = *run.connection->client;
  catalog::ListingRules rules = catalog::ListingRulesFor(env_.policy, /*for_gate=*/true);
  rules.bound = run.connection->bound_since.has_value();
  // Every Tool's name is read and one Tool's bytes compared: none is built (the listing's
  // pages are never read as values here).
  catalog::ListingFacts facts;
  facts.checked_through = run.checked_through;
  auto pages = catalog::ListStable(client, rules, facts);
  run.listings += facts.listings;
  run.disturbed_listings += facts.disturbed_listings;
  run.list_changed_before_binding += facts.list_changed_before_binding;
  run.server_requests.insert(run.server_requests.end(), facts.server_requests.begin(), facts.server_requests.end());
  run.checked_through = facts.checked_through;
  if (!pages.ok()) {
    Error error = std::move(pages).error();
    if (error.code == "binding.invalidated") {
      RecordInvalidation(run, error.details.value("reason", "list_changed_after_binding").c_str());
    }
    return error;
  }
  return SelectLiveTool(run, *pages);
}

// Step 4's end: the selected tool, by name across every page, exactly once, and its
// canonical bytes for the comparison. The listing was read lean: names and bytes, no Tool
// built (every transport reads a RequestToolList answer lean, see TransportCallbacks).
Status Gate::SelectLiveTool(Run& run, const mcp::ToolPages& pages) {
  std::vector<ListedTool> listing;
  for (const auto& lean : pages.lean) {
    if (lean == nullptr) continue;
    for (const json::RawElement& tool : lean->tools) {
      std::optional<std::string_view> name;
      if (tool.is_object && tool.name) name = *tool.name;
      listing.push_back({name, lean->Bytes(tool), lean->max_depth});
    }
  }
  const std::string known_bytes = run.compiled->live_bytes_known_equal.Get();
  const SelectedTool known{known_bytes, run.compiled->canonical};
  UDON_ASSIGN_OR_RETURN(SelectedTool selected,
                        SelectListedTool(listing, run.binding.tool, known_bytes.empty() ? nullptr : &known));
  run.live_tool_canonical = std::move(selected.canonical);
  run.live_tool_sha256 = run.live_tool_canonical == run.compiled->canonical ? run.compiled->canonical_sha256
                                                                           : base::Sha256Hex(run.live_tool_canonical);
  run.live_tool_bytes = std::string(selected.bytes);
  return OkStatus();
}

// Step 5; coalesced, no member goes on before every member of its verification compared,
// and a catalog refusal of any of them refuses all (Settle).
Status Gate::StepCompare(Run& run) {
  Status compared = CompareLiveTool(run);
  if (run.lane) compared = Settle(run, std::move(compared));
  if (!compared.ok()) return compared;
  BindConnection(run);
  return OkStatus();
}

Status Gate::CompareLiveTool(Run& run) {
  Status same = CompareReviewedTool({run.live_tool_bytes, run.live_tool_canonical}, run.compiled->canonical);
  if (!same.ok()) {
    // Only a drifted Tool is built, for the pointers of its differences.
    auto live = json::Parse(run.live_tool_bytes);
    run.drift = DriftDetails(json::Diff(*run.location.tool, live.ok() ? *live : json::Value()));
    Error error = std::move(same).error();
    error.details["pointers"] = run.drift;
    return error;
  }
  run.compiled->live_bytes_known_equal.Set(run.live_tool_bytes);
  return OkStatus();
}

Status Gate::CheckBindingEvents(Run& run, std::uint64_t after, bool during_call) {
  for (const auto& event : run.connection->client->connection().EventsSince(after)) {
    if (!IsListChanged(event)) continue;
    if (during_call) {
      // Dispatched: the outcome is indeterminate whatever happens to the record. A record
      // that cannot be written is said (details, stderr), never turned into another exit.
      RecordInvalidation(run, "list_changed_during_call");
      Error error = Refuse("call.indeterminate", "list_changed arrived during the call; the result is withheld");
      error.details["reason"] = "list_changed";
      return error;
    }
    RecordInvalidation(run, "list_changed_before_dispatch");
    return Refuse("binding.invalidated", "list_changed arrived after the comparison and before dispatch");
  }
  for (const auto& event : run.connection->client->connection().EventsSince(after)) {
    if (EndsSubscription(event, *run.connection->client)) {
      // Changes can no longer be seen: nothing may be trusted from here on.
      Error error = during_call ? Refuse("call.indeterminate", "the tool-list subscription ended during the call")
                                : Refuse("server.connect_failed", "the tool-list subscription ended before dispatch");
      error.details["reason"] = "subscription_lost";
      return error;
    }
    if (event.kind == mcp::EventKind::kServerRequest) {
      run.server_requests.push_back(event.method);
      return during_call ? Refuse("call.server_request_refused",
                                  "the server asked for sampling, elicitation or roots during the call")
                         : Refuse("server.request_refused",
                                  "the server asked for sampling, elicitation or roots before dispatch");
    }
    if (!during_call && event.kind == mcp::EventKind::kDisconnected) {
      return Refuse("server.connect_failed", "the connection ended before dispatch");
    }
  }
  return OkStatus();
}

}  // namespace udon::gate
