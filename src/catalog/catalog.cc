#include "catalog/catalog.h"

#include <utility>

#include "mcp/client/www_authenticate.h"
#include "mcp/protocol/protocol.h"

namespace udon::catalog {
namespace {

using mcp::Client;
using mcp::Event;
using mcp::EventKind;

Error ListingFailed(Error cause) {
  Error error = udon::MakeError("server.connect_failed", "the live tools/list failed");
  error.details["cause"] = cause.code;
  if (cause.details.contains("cause")) error.details["transportCause"] = cause.details["cause"];
  mcp::KeepRefusedCredential(cause, error);  // a 401 or 403 to the listing (contract 7.23)
  return error;
}

// What the events since the last examination mean for the listing just read.
enum class Verdict { kStable, kDisturbed };

Result<Verdict> Examine(Client& client, const ListingRules& rules, std::uint64_t listing_began,
                        std::uint64_t through, ListingFacts& facts) {
  Verdict verdict = Verdict::kStable;
  for (const Event& event : client.connection().EventsSince(facts.checked_through)) {
    if (event.sequence > through) break;
    if (event.kind == EventKind::kServerRequest) {
      facts.server_requests.push_back(event.method);
      Error error = udon::MakeError("server.request_refused",
                              "the server asked for sampling, elicitation or roots while its tools were listed");
      error.details["method"] = event.method;
      return error;
    }
    if (EndsSubscription(event, client)) {
      Error error = udon::MakeError("server.connect_failed", "the tool-list subscription ended during the listing");
      error.details["reason"] = "subscription_lost";
      return error;
    }
    if (!IsListChanged(event)) continue;
    if (rules.bound || rules.strict_list_changed) {
      Error error = rules.bound
                        ? udon::MakeError("binding.invalidated", "list_changed arrived on this connection after its binding began")
                        : udon::MakeError("binding.invalidated",
                                    "list_changed arrived on this connection and policy strictListChanged is on");
      error.details["reason"] = rules.bound ? "list_changed_after_binding" : "strict_notification";
      return error;
    }
    ++facts.list_changed_before_binding;
    if (event.sequence > listing_began) verdict = Verdict::kDisturbed;
  }
  facts.checked_through = through;
  return verdict;
}

}  // namespace

mcp::ClientOptions ClientOptionsFor(const manifest::Policy& policy, std::chrono::milliseconds request_timeout) {
  mcp::ClientOptions options;
  options.request_timeout = request_timeout;
  options.max_message_bytes = policy.max_message_bytes;
  return options;
}

ListingRules ListingRulesFor(const manifest::Policy& policy, bool for_gate) {
  ListingRules rules;
  rules.max_pages = policy.max_pages;
  rules.strict_list_changed = for_gate && policy.strict_list_changed;
  return rules;
}

bool IsListChanged(const mcp::Event& event) {
  return event.kind == mcp::EventKind::kNotification && event.method == mcp::kToolsListChangedNotification;
}

bool EndsSubscription(const Event& event, const Client& client) {
  return event.kind == EventKind::kStreamEnded && client.subscription_id() &&
         event.id == json::Value(*client.subscription_id());
}

Result<mcp::ToolPages> ListStable(Client& client, const ListingRules& rules, ListingFacts& facts) {
  for (;;) {
    const std::uint64_t listing_began = client.connection().LastSequence();
    auto listing = client.ListAllTools(rules.max_pages, rules.on_page);
    ++facts.listings;
    if (!listing.ok()) {
      // Contract codes (a malformed page, a modern result breaking the rules) stand as they are.
      const std::string& code = listing.error().code;
      if (code.rfind("catalog.", 0) == 0 || code.rfind("server.", 0) == 0) return std::move(listing).error();
      return ListingFailed(std::move(listing).error());
    }
    // Everything up to now counts, not just up to the last page: a notice that arrives
    // after the last page but before the caller compares must not pass unseen.
    UDON_ASSIGN_OR_RETURN(Verdict verdict,
                          Examine(client, rules, listing_began, client.connection().LastSequence(), facts));
    if (verdict == Verdict::kStable) return std::move(listing).value();
    if (++facts.disturbed_listings >= rules.max_disturbed) {
      Error error = udon::MakeError("catalog.unstable", "list_changed kept arriving during every listing");
      error.details["disturbedListings"] = facts.disturbed_listings;
      return error;
    }
  }
}

}  // namespace udon::catalog
