// The client in the modern era (MCP 2026-07-28): discovery, negotiation with fallback to
// the legacy handshake, per-request _meta, result checks and the tool-list subscription.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "mcp/client/client.h"
#include "mcp/testing/memory_transport.h"

namespace udon::mcp {
namespace {

using std::chrono::milliseconds;

json::Value Info() { return {{"name", "modern-fake"}, {"version", "2.0.0"}}; }

json::Value Meta(const Message& in) {
  return in.params.is_object() && in.params.contains("_meta") ? in.params["_meta"] : json::Value();
}

// A scripted server of either era.
struct FakeServer {
  bool modern = true;                 // answers server/discover
  bool silent_to_discover = false;    // a legacy server that ignores unknown methods
  int reject_first_discover_with = 0; // an rpc code for the first server/discover
  bool list_changed = true;           // capabilities.tools.listChanged
  std::optional<bool> grant;          // the ack's toolsListChanged; nullopt: never ack
  json::Value page_meta = json::Value::object();
  json::Value call_result = {{"resultType", "complete"}, {"content", json::Value::array()}};
  int discovers = 0;
  bool close_listen_before_call = false;
  json::Value listen_id;

  json::Value Result(json::Value result) {
    result["resultType"] = "complete";
    result["_meta"][std::string(meta::kServerInfo)] = Info();
    return result;
  }

  void Handle(const Message& in, MemoryPeer& peer) {
    if (in.method == "server/discover") {
      ++discovers;
      if (silent_to_discover) return;
      if (!modern) {
        peer.Send(MakeError(in.id, kMethodNotFound, "Method not found"));
        return;
      }
      if (discovers == 1 && reject_first_discover_with != 0) {
        peer.Send(MakeError(in.id, reject_first_discover_with, "no",
                            {{"supported", {"2026-07-28"}}, {"requested", "2026-07-28"}}));
        return;
      }
      json::Value tools = json::Value::object();
      if (list_changed) tools["listChanged"] = true;
      peer.Send(MakeResult(in.id, Result({{"supportedVersions", {"2026-07-28", "2025-11-25"}},
                                          {"capabilities", {{"tools", tools}}},
                                          {"ttlMs", 1000},
                                          {"cacheScope", "public"}})));
    } else if (in.method == "initialize") {
      peer.Send(MakeResult(in.id, {{"protocolVersion", "2025-11-25"},
                                   {"capabilities", {{"tools", json::Value::object()}}},
                                   {"serverInfo", {{"name", "legacy-fake"}, {"version", "1"}}}}));
    } else if (in.method == "subscriptions/listen") {
      listen_id = in.id;
      if (!grant) return;
      json::Value granted = json::Value::object();
      if (*grant) granted["toolsListChanged"] = true;
      peer.Send(MakeNotification(std::string(kAcknowledgedNotification),
                                 {{"_meta", {{std::string(meta::kSubscriptionId), in.id}}},
                                  {"notifications", granted}}));
    } else if (in.method == "tools/list") {
      json::Value page = Result({{"tools", {{{"name", "t"}, {"inputSchema", {{"type", "object"}}}}}},
                                 {"ttlMs", 5000},
                                 {"cacheScope", "public"}});
      for (const auto& [key, value] : page_meta.items()) page["_meta"][key] = value;
      peer.Send(MakeResult(in.id, page));
    } else if (in.method == "tools/call") {
      if (close_listen_before_call) {
        peer.Send(MakeResult(listen_id, {{"resultType", "complete"},
                                         {"_meta", {{std::string(meta::kSubscriptionId), listen_id}}}}));
      }
      peer.Send(MakeResult(in.id, call_result));
    }
  }
};

struct Harness {
  explicit Harness(FakeServer& server, ClientOptions options = {}) {
    auto owned = std::make_unique<MemoryTransport>(
        [&server](const Message& in, MemoryPeer& peer) { server.Handle(in, peer); });
    transport = owned.get();
    client = std::make_unique<Client>(std::move(owned), options);
    EXPECT_TRUE(client->Start().ok());
  }
  std::vector<Message> Sent(const std::string& method) const {
    std::vector<Message> out;
    for (Message& m : transport->Sent()) {
      if (m.method == method) out.push_back(std::move(m));
    }
    return out;
  }
  MemoryTransport* transport = nullptr;
  std::unique_ptr<Client> client;
};

TEST(ClientModernTest, DiscoverReadsServerInfoFromMetaAndEveryRequestCarriesMeta) {
  FakeServer server;
  Harness h(server);
  auto init = h.client->Discover();
  ASSERT_TRUE(init.ok()) << init.error().Describe();
  EXPECT_EQ(init->era, Era::kModern);
  EXPECT_EQ(init->protocol_version, "2026-07-28");
  EXPECT_EQ(init->server_info, Info());
  EXPECT_EQ(init->supported_versions, (std::vector<std::string>{"2026-07-28", "2025-11-25"}));
  ASSERT_TRUE(h.client->ListAllTools().ok());
  ASSERT_TRUE(h.client->CallTool("t", json::Value::object()).ok());
  for (const char* method : {"server/discover", "tools/list", "tools/call"}) {
    auto sent = h.Sent(method);
    ASSERT_EQ(sent.size(), 1u) << method;
    json::Value meta = Meta(sent[0]);
    EXPECT_EQ(meta[std::string(meta::kProtocolVersion)], "2026-07-28") << method;
    EXPECT_EQ(meta[std::string(meta::kClientCapabilities)], json::Value::object()) << method;
    EXPECT_EQ(meta[std::string(meta::kClientInfo)]["name"], "udon-mcp") << method;
  }
  EXPECT_TRUE(h.Sent("initialize").empty());
  EXPECT_TRUE(h.Sent("notifications/initialized").empty());
}

TEST(ClientModernTest, NegotiatePrefersTheModernRevision) {
  FakeServer server;
  Harness h(server);
  auto init = h.client->Negotiate();
  ASSERT_TRUE(init.ok()) << init.error().Describe();
  EXPECT_EQ(init->era, Era::kModern);
  EXPECT_TRUE(h.Sent("initialize").empty());
}

TEST(ClientModernTest, NegotiateFallsBackToInitializeOnANonModernError) {
  FakeServer server;
  server.modern = false;
  Harness h(server);
  auto init = h.client->Negotiate();
  ASSERT_TRUE(init.ok()) << init.error().Describe();
  EXPECT_EQ(init->era, Era::kLegacy);
  EXPECT_EQ(init->protocol_version, "2025-11-25");
  EXPECT_EQ(init->server_info["name"], "legacy-fake");
  // Legacy requests carry no modern _meta.
  ASSERT_TRUE(h.client->ListAllTools().ok());
  EXPECT_TRUE(Meta(h.Sent("tools/list")[0]).is_null());
}

TEST(ClientModernTest, NegotiateFallsBackWhenTheProbeIsIgnored) {
  FakeServer server;
  server.modern = false;
  server.silent_to_discover = true;
  ClientOptions options;
  options.probe_timeout = milliseconds(200);
  Harness h(server, options);
  auto init = h.client->Negotiate();
  ASSERT_TRUE(init.ok()) << init.error().Describe();
  EXPECT_EQ(init->era, Era::kLegacy);
  // The probe is never cancelled: a legacy server must not see notifications before initialize.
  EXPECT_TRUE(h.Sent("notifications/cancelled").empty());
}

TEST(ClientModernTest, UnsupportedVersionIsRetriedOnceNotFallenBackFrom) {
  FakeServer server;
  server.reject_first_discover_with = rpc_code::kUnsupportedProtocolVersion;
  Harness h(server);
  auto init = h.client->Negotiate();
  ASSERT_TRUE(init.ok()) << init.error().Describe();
  EXPECT_EQ(init->era, Era::kModern);
  EXPECT_EQ(server.discovers, 2);
  EXPECT_TRUE(h.Sent("initialize").empty());
}

TEST(ClientModernTest, DiscoveryWithoutTheRequestedVersionIsAMismatch) {
  FakeServer server;
  server.reject_first_discover_with = rpc_code::kUnsupportedProtocolVersion;
  server.discovers = 0;
  Harness h(server);
  // Exact opening (the gate's): the server's retry list is honoured once, then accepted.
  auto init = h.client->Open("2026-07-28");
  ASSERT_TRUE(init.ok());
  FakeServer legacy;
  legacy.modern = false;
  Harness l(legacy);
  auto refused = l.client->Open("2026-07-28");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "server.connect_failed");
  EXPECT_EQ(l.Sent("initialize").size(), 0u);  // an exact opening never falls back
}

TEST(ClientModernTest, ResultTypesOtherThanCompleteAreRefused) {
  FakeServer server;
  Harness h(server);
  ASSERT_TRUE(h.client->Discover().ok());
  server.call_result = {{"resultType", "input_required"}, {"requestState", "opaque"}};
  auto input = h.client->CallTool("t", json::Value::object());
  ASSERT_FALSE(input.ok());
  EXPECT_EQ(input.error().code, "call.server_request_refused");
  server.call_result = {{"resultType", "later"}, {"content", json::Value::array()}};
  auto unknown = h.client->CallTool("t", json::Value::object());
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, "call.protocol_error");
  server.call_result = {{"content", json::Value::array()}};  // absent: complete
  EXPECT_TRUE(h.client->CallTool("t", json::Value::object()).ok());
}

TEST(ClientModernTest, AnotherServerInfoInAResultIsAChange) {
  FakeServer server;
  server.page_meta = {{std::string(meta::kServerInfo), {{"name", "modern-fake"}, {"version", "2.0.1"}}}};
  Harness h(server);
  ASSERT_TRUE(h.client->Discover().ok());
  auto pages = h.client->ListAllTools();
  ASSERT_FALSE(pages.ok());
  EXPECT_EQ(pages.error().code, "server.server_info_mismatch");
}

TEST(ClientModernTest, PagesKeepCachingHintsIntact) {
  FakeServer server;
  Harness h(server);
  ASSERT_TRUE(h.client->Discover().ok());
  auto pages = h.client->ListAllTools();
  ASSERT_TRUE(pages.ok());
  EXPECT_EQ(pages->pages[0]["ttlMs"], 5000);
  EXPECT_EQ(pages->pages[0]["cacheScope"], "public");
}

TEST(ClientModernTest, SubscribeWaitsForTheAcknowledgment) {
  FakeServer server;
  server.grant = true;
  Harness h(server);
  ASSERT_TRUE(h.client->Discover().ok());
  ASSERT_TRUE(h.client->Subscribe().ok());
  EXPECT_EQ(h.client->subscription(), Client::Subscription::kActive);
  ASSERT_TRUE(h.client->subscription_id().has_value());
  auto listen = h.Sent("subscriptions/listen");
  ASSERT_EQ(listen.size(), 1u);
  EXPECT_EQ(listen[0].params["notifications"], (json::Value{{"toolsListChanged", true}}));
  EXPECT_EQ(Meta(listen[0])[std::string(meta::kProtocolVersion)], "2026-07-28");
}

TEST(ClientModernTest, SubscribeRecordsADeclineAndAServerWithoutListChanged) {
  FakeServer declining;
  declining.grant = false;
  Harness d(declining);
  ASSERT_TRUE(d.client->Discover().ok());
  ASSERT_TRUE(d.client->Subscribe().ok());
  EXPECT_EQ(d.client->subscription(), Client::Subscription::kDeclined);
  EXPECT_FALSE(d.client->subscription_id().has_value());

  FakeServer quiet;
  quiet.list_changed = false;
  Harness q(quiet);
  ASSERT_TRUE(q.client->Discover().ok());
  ASSERT_TRUE(q.client->Subscribe().ok());
  EXPECT_EQ(q.client->subscription(), Client::Subscription::kNotOffered);
  EXPECT_TRUE(q.Sent("subscriptions/listen").empty());
}

TEST(ClientModernTest, AnUnacknowledgedSubscriptionFails) {
  FakeServer server;  // grant unset: never acknowledges
  ClientOptions options;
  options.request_timeout = milliseconds(200);
  Harness h(server, options);
  ASSERT_TRUE(h.client->Discover().ok());
  Status subscribed = h.client->Subscribe();
  ASSERT_FALSE(subscribed.ok());
  EXPECT_EQ(subscribed.error().code, "mcp.subscription_failed");
  EXPECT_EQ(subscribed.error().details["reason"], "unacknowledged");
}

TEST(ClientModernTest, TheEndOfAListenStreamIsAnEvent) {
  FakeServer server;
  server.grant = true;
  Harness h(server);
  ASSERT_TRUE(h.client->Discover().ok());
  ASSERT_TRUE(h.client->Subscribe().ok());
  const std::int64_t id = *h.client->subscription_id();
  server.close_listen_before_call = true;  // graceful closure: a result for the listen id
  ASSERT_TRUE(h.client->CallTool("t", json::Value::object()).ok());
  bool ended = false;
  for (const Event& event : h.client->connection().EventsSince(0)) {
    if (event.kind == EventKind::kStreamEnded && event.id == json::Value(id)) ended = true;
  }
  EXPECT_TRUE(ended);
  EXPECT_EQ(h.client->connection().ignored_responses(), 0u);
}

}  // namespace
}  // namespace udon::mcp
