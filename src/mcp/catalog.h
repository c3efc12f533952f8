// The stable listing: the one loop that capture and the gate both use to read a server's
// complete tool catalog, with the proposal's rules for what may happen on the connection
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

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "json/json.h"
#include "json/result.h"
#include "mcp/client.h"

namespace udon::mcp {

inline constexpr const char* kToolsListChanged = "notifications/tools/list_changed";

struct ListingRules {
  std::size_t max_pages = 1000;
  int max_disturbed = 3;             // disturbed listings in a row before catalog.unstable
  bool strict_list_changed = false;  // policy strictListChanged: any notice invalidates
  bool bound = false;                // the binding on this connection has begun
  Client::PageProgress on_page;      // progress: pages and tools so far in this listing
};

// What the listing saw, filled in as it goes (also when it fails), for evidence.
struct ListingFacts {
  std::uint64_t checked_through = 0;  // in and out: events up to here were examined
  int listings = 0;
  int disturbed_listings = 0;
  int list_changed_before_binding = 0;
  std::vector<std::string> server_requests;  // methods, never params
};

// Whether an event ends the modern era's tool-list subscription of this client.
bool EndsSubscription(const Event& event, const Client& client);

// Reads the complete catalog once it is stable and returns its page results intact.
// Errors:
//   catalog.pagination_invalid, catalog.unstable, server.* from the client (as they are)
//   server.request_refused     the server sent a request (details.method)
//   server.connect_failed      the listing failed (details.cause, transportCause) or the
//                              subscription ended (details.reason "subscription_lost")
//   binding.invalidated        list_changed on a bound connection, or any under strict
//                              rules (details.reason "list_changed_after_binding" |
//                              "strict_notification"): the caller records it durably
Result<std::vector<json::Value>> ListStable(Client& client, const ListingRules& rules,
                                            ListingFacts& facts);

}  // namespace udon::mcp
