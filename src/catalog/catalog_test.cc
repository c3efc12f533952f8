#include "catalog/catalog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "mcp/protocol/protocol.h"
#include "mcp/testing/memory_transport.h"

namespace udon::catalog {
namespace {

using namespace udon::mcp;  // the client and the in-memory peer the listing runs on

// Two pages; `after_list` runs after each page answer, `before_list` before it.
struct CatalogServer {
  std::function<void(int listing, std::size_t page, MemoryPeer&)> before_page;
  std::atomic<int> listings{0};

  void Handle(const Message& in, MemoryPeer& peer) {
    if (in.method == "initialize") {
      peer.Send(MakeResult(in.id, {{"protocolVersion", "2025-11-25"},
                                   {"capabilities", {{"tools", {{"listChanged", true}}}}},
                                   {"serverInfo", {{"name", "catalog"}, {"version", "1"}}}}));
    } else if (in.method == "tools/list") {
      const bool second = in.params.is_object() && in.params.contains("cursor");
      if (!second) ++listings;
      if (before_page) before_page(listings, second ? 1 : 0, peer);
      json::Value page = {{"tools", {{{"name", second ? "b" : "a"}, {"inputSchema", {{"type", "object"}}}}}}};
      if (!second) page["nextCursor"] = "p2";
      peer.Send(MakeResult(in.id, page));
    }
  }
};

class ListStableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = std::make_unique<Client>(std::make_unique<MemoryTransport>(
        [this](const Message& in, MemoryPeer& peer) { server_.Handle(in, peer); }));
    ASSERT_TRUE(client_->Start().ok());
    ASSERT_TRUE(client_->Initialize().ok());
  }

  Result<std::vector<json::Value>> List(ListingRules rules = {}) {
    auto listing = ListStable(*client_, rules, facts_);
    if (!listing.ok()) return std::move(listing).error();
    return std::vector<json::Value>(std::move(listing->pages));  // the Tools built (mcp/client/tool_pages.h)
  }

  CatalogServer server_;
  std::unique_ptr<Client> client_;
  ListingFacts facts_;
};

TEST_F(ListStableTest, AQuietListingIsReadOnceWhole) {
  auto pages = List();
  ASSERT_TRUE(pages.ok()) << pages.error().Describe();
  EXPECT_EQ(pages->size(), 2u);
  EXPECT_EQ(facts_.listings, 1);
  EXPECT_EQ(facts_.disturbed_listings, 0);
  EXPECT_EQ(facts_.checked_through, client_->connection().LastSequence());
}

TEST_F(ListStableTest, ANoticeBeforeTheBindingForcesAFreshListing) {
  server_.before_page = [](int listing, std::size_t page, MemoryPeer& peer) {
    if (listing == 1 && page == 1) peer.Send(MakeNotification(std::string(kToolsListChangedNotification)));
  };
  auto pages = List();
  ASSERT_TRUE(pages.ok()) << pages.error().Describe();
  EXPECT_EQ(facts_.listings, 2);
  EXPECT_EQ(facts_.disturbed_listings, 1);
  EXPECT_EQ(facts_.list_changed_before_binding, 1);
}

TEST_F(ListStableTest, NoticesDuringEveryListingMakeTheCatalogUnstable) {
  server_.before_page = [](int, std::size_t page, MemoryPeer& peer) {
    if (page == 1) peer.Send(MakeNotification(std::string(kToolsListChangedNotification)));
  };
  ListingRules rules;
  rules.max_disturbed = 3;
  auto pages = List(rules);
  ASSERT_FALSE(pages.ok());
  EXPECT_EQ(pages.error().code, "catalog.unstable");
  EXPECT_EQ(facts_.listings, 3);
}

TEST_F(ListStableTest, ANoticeOnABoundConnectionInvalidatesInsteadOfRelisting) {
  server_.before_page = [](int, std::size_t page, MemoryPeer& peer) {
    if (page == 0) peer.Send(MakeNotification(std::string(kToolsListChangedNotification)));
  };
  ListingRules rules;
  rules.bound = true;
  auto pages = List(rules);
  ASSERT_FALSE(pages.ok());
  EXPECT_EQ(pages.error().code, "binding.invalidated");
  EXPECT_EQ(pages.error().details["reason"], "list_changed_after_binding");
  EXPECT_EQ(facts_.listings, 1);
  EXPECT_EQ(facts_.list_changed_before_binding, 0);

  ListingFacts strict_facts;
  strict_facts.checked_through = facts_.checked_through;
  ListingRules strict;
  strict.strict_list_changed = true;
  auto refused = ListStable(*client_, strict, strict_facts);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().details["reason"], "strict_notification");
}

TEST_F(ListStableTest, AServerRequestAnywhereOnTheConnectionRefuses) {
  server_.before_page = [](int, std::size_t page, MemoryPeer& peer) {
    if (page == 1) peer.Send(MakeRequest("s1", "elicitation/create", json::Value::object()));
  };
  auto pages = List();
  ASSERT_FALSE(pages.ok());
  EXPECT_EQ(pages.error().code, "server.request_refused");
  EXPECT_EQ(pages.error().details["method"], "elicitation/create");
  EXPECT_EQ(facts_.server_requests, std::vector<std::string>{"elicitation/create"});
}

TEST_F(ListStableTest, EventsAlreadyExaminedAreNotCountedAgain) {
  server_.before_page = [](int listing, std::size_t page, MemoryPeer& peer) {
    if (listing == 1 && page == 1) peer.Send(MakeNotification(std::string(kToolsListChangedNotification)));
  };
  ASSERT_TRUE(List().ok());
  server_.before_page = nullptr;
  ListingRules rules;
  rules.bound = true;  // the old notice lies before checked_through: no invalidation
  auto again = List(rules);
  ASSERT_TRUE(again.ok()) << again.error().Describe();
}

}  // namespace
}  // namespace udon::catalog
