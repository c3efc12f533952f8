// The catalog: what capture and the gate share to read a server's complete tool catalog.
// The client options and listing rules the local policy implies, and the stable listing:
// the one loop both use, with the proposal's rules for what may happen on the connection
// while it is read.
//
//   - Every tools/list page is read (Client::ListAllTools: cursors, page limit).
//   - A server request (sampling, elicitation, roots) anywhere on the connection so far
//     refuses: a headless client never answers one, so a catalog read beside it is not
//     the catalog a later call would meet.
//   - notifications/tools/list_changed before the connection's binding began only forces
//     a fresh listing; after `max_disturbed` disturbed listings the catalog is unstable.
//     Once bound (or under strictListChanged) any list_changed invalidates instead.
//   - Modern era: the end of the tool-list subscription means changes can no longer be
//     seen, so nothing read from here on is trusted.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "json/json.h"
#include "base/result.h"
#include "manifest/policy.h"
#include "mcp/client/client.h"

namespace udon::catalog {

struct ListingRules {
  std::size_t max_pages = 1000;
  int max_disturbed = 3;             // disturbed listings in a row before catalog.unstable
  bool strict_list_changed = false;  // policy strictListChanged: any notice invalidates
  bool bound = false;                // the binding on this connection has begun
  mcp::Client::PageProgress on_page;      // progress: pages and tools so far in this listing
};

// What the listing saw, filled in as it goes (also when it fails), for evidence.
struct ListingFacts {
  std::uint64_t checked_through = 0;  // in and out: events up to here were examined
  int listings = 0;
  int disturbed_listings = 0;
  int list_changed_before_binding = 0;
  std::vector<std::string> server_requests;  // methods, never params
};

// The options of every connection capture and the gate open: requests bounded by
// `request_timeout` (the policy's callTimeoutSeconds, or what overrides it for a server)
// and messages by the policy's maxMessageBytes.
mcp::ClientOptions ClientOptionsFor(const manifest::Policy& policy, std::chrono::milliseconds request_timeout);

// The listing rules of the policy: its page limit, and for a gated call (`for_gate`) its
// strictListChanged (contract 7.6; a capture has no binding that a notice could end).
ListingRules ListingRulesFor(const manifest::Policy& policy, bool for_gate);

// Whether an event is notifications/tools/list_changed.
bool IsListChanged(const mcp::Event& event);

// Whether an event ends the modern era's tool-list subscription of this client.
bool EndsSubscription(const mcp::Event& event, const mcp::Client& client);

// Reads the complete catalog once it is stable and returns its page results intact (their
// Tool objects as bytes in ToolPages::lean, built as values when ToolPages::pages is read).
// Errors:
//   catalog.pagination_invalid, catalog.unstable, server.* from the client (as they are)
//   server.request_refused     the server sent a request (details.method)
//   server.connect_failed      the listing failed (details.cause, transportCause) or the
//                              subscription ended (details.reason "subscription_lost")
//   binding.invalidated        list_changed on a bound connection, or any under strict
//                              rules (details.reason "list_changed_after_binding" |
//                              "strict_notification"): the caller records it durably
Result<mcp::ToolPages> ListStable(mcp::Client& client, const ListingRules& rules, ListingFacts& facts);

}  // namespace udon::catalog
