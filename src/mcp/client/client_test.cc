#include "mcp/client/client.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <memory>
#include <string>

#include "mcp/testing/memory_transport.h"

namespace udon::mcp {
namespace {

using std::chrono::milliseconds;

json::Value ServerInfo() {
  return {{"name", "fake"}, {"version", "1.2.3"}, {"title", "Fake"}, {"x-extra", {1, 2}}};
}

// A scripted tools server: pages by cursor, extra behaviour per test via hooks.
struct FakeServer {
  std::string answer_version = "2025-11-25";
  std::vector<json::Value> pages;  // tools/list results in order, cursors "c1", "c2", ...
  std::function<void(const Message&, MemoryPeer&)> on_call;
  std::function<void(std::size_t page, MemoryPeer&)> after_page;

  void Handle(const Message& in, MemoryPeer& peer) {
    if (in.method == "initialize") {
      peer.Send(MakeResult(in.id, {{"protocolVersion", answer_version},
                                   {"capabilities", {{"tools", {{"listChanged", true}}}}},
                                   {"serverInfo", ServerInfo()},
                                   {"instructions", "be nice"}}));
    } else if (in.method == "tools/list") {
      std::size_t index = 0;
      if (in.params.is_object() && in.params.contains("cursor")) {
        index = std::stoul(in.params["cursor"].get<std::string>().substr(1));
      }
      if (index >= pages.size()) index = pages.size() - 1;
      peer.Send(MakeResult(in.id, pages[index]));
      if (after_page) after_page(index, peer);
    } else if (in.method == "tools/call" && on_call) {
      on_call(in, peer);
    }
  }
};

json::Value Page(std::vector<std::string> names, std::optional<std::string> next) {
  json::Value page = {{"tools", json::Value::array()}};
  for (const auto& name : names) {
    page["tools"].push_back({{"name", name},
                             {"inputSchema", {{"type", "object"}, {"x-unknown", true}}}});
  }
  if (next) page["nextCursor"] = *next;
  page["_meta"] = {{"example/page", names.size()}};
  return page;
}

struct ClientHarness {
  explicit ClientHarness(FakeServer& server, ClientOptions options = {}) {
    auto owned = std::make_unique<MemoryTransport>(
        [&server](const Message& in, MemoryPeer& peer) { server.Handle(in, peer); });
    transport = owned.get();
    client = std::make_unique<Client>(std::move(owned), options);
    EXPECT_TRUE(client->Start().ok());
  }
  MemoryTransport* transport = nullptr;
  std::unique_ptr<Client> client;
};

TEST(ClientTest, InitializeSendsEmptyCapabilitiesAndClientInfo) {
  FakeServer server;
  ClientHarness h(server);
  auto init = h.client->Initialize();
  ASSERT_TRUE(init.ok()) << init.error().Describe();
  EXPECT_EQ(init->protocol_version, "2025-11-25");
  EXPECT_EQ(init->server_info, ServerInfo());
  EXPECT_EQ(init->capabilities["tools"]["listChanged"], true);
  EXPECT_EQ(init->instructions, "be nice");
  auto sent = h.transport->Sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].method, "initialize");
  EXPECT_EQ(sent[0].params["protocolVersion"], "2025-11-25");
  EXPECT_EQ(sent[0].params["capabilities"], json::Value::object());
  EXPECT_EQ(sent[0].params["clientInfo"]["name"], "udon-mcp");
  EXPECT_EQ(sent[0].params["clientInfo"]["version"], ClientVersion());
  EXPECT_EQ(sent[1].method, "notifications/initialized");
  EXPECT_EQ(sent[1].kind, MessageKind::kNotification);
  EXPECT_EQ(h.transport->initialized_version(), "2025-11-25");
}

TEST(ClientTest, ReturnsAnOlderSupportedVersionForTheCallerToJudge) {
  for (const std::string version : {"2025-06-18", "2025-03-26", "2024-11-05"}) {
    FakeServer server;
    server.answer_version = version;
    ClientHarness h(server);
    auto init = h.client->Initialize();
    ASSERT_TRUE(init.ok());
    EXPECT_EQ(init->protocol_version, version);
  }
}

TEST(ClientTest, RequestsAnOlderVersionWhenAsked) {
  FakeServer server;
  server.answer_version = "2025-06-18";
  ClientHarness h(server);
  ASSERT_TRUE(h.client->Initialize("2025-06-18").ok());
  EXPECT_EQ(h.transport->Sent()[0].params["protocolVersion"], "2025-06-18");
  EXPECT_EQ(h.client->Initialize("2024-10-07").error().code, "mcp.unsupported_version");
}

// 2024-11-05 over stdio (here: in process) is initialize as in 2025-03-26.
TEST(ClientTest, SpeaksTheStdioOnlyRevisionOverAByteStream) {
  FakeServer server;
  server.answer_version = "2024-11-05";
  ClientHarness h(server);
  auto init = h.client->Initialize("2024-11-05");
  ASSERT_TRUE(init.ok()) << init.error().Describe();
  EXPECT_EQ(init->era, Era::kLegacy);
  EXPECT_EQ(h.transport->Sent()[0].params["protocolVersion"], "2024-11-05");
  EXPECT_EQ(h.transport->initialized_version(), "2024-11-05");
}

// An initialize-only server that names 2024-11-05 when asked for 2025-11-25: what capture
// meets in an old SDK, after its server/discover probe went unanswered.
TEST(ClientTest, NegotiateSettlesOnTheStdioOnlyRevisionAnOldServerAnswers) {
  FakeServer server;
  server.answer_version = "2024-11-05";
  ClientOptions options;
  options.probe_timeout = milliseconds(50);
  ClientHarness h(server, options);
  auto init = h.client->Negotiate();
  ASSERT_TRUE(init.ok()) << init.error().Describe();
  EXPECT_EQ(init->protocol_version, "2024-11-05");
}

// A MemoryTransport that says it is Streamable HTTP.
class MemoryHttpTransport : public MemoryTransport {
 public:
  using MemoryTransport::MemoryTransport;
  bool streamable_http() const override { return true; }
};

TEST(ClientTest, OverHttpTheStdioOnlyRevisionIsNeitherOfferedNorAccepted) {
  FakeServer server;
  server.answer_version = "2024-11-05";
  auto connect = [&server](MemoryTransport*& transport) {
    auto owned = std::make_unique<MemoryHttpTransport>(
        [&server](const Message& in, MemoryPeer& peer) { server.Handle(in, peer); });
    transport = owned.get();
    auto client = std::make_unique<Client>(std::move(owned));
    EXPECT_TRUE(client->Start().ok());
    return client;
  };
  MemoryTransport* transport = nullptr;
  auto first = connect(transport);  // kept: the transport lives as long as its client
  auto asked = first->Initialize("2024-11-05");
  ASSERT_FALSE(asked.ok());
  EXPECT_EQ(asked.error().code, "server.protocol_version_mismatch");
  EXPECT_EQ(asked.error().details["requested"], "2024-11-05");
  EXPECT_EQ(asked.error().details["transport"], "http");
  EXPECT_NE(asked.error().message.find("stdio only"), std::string::npos) << asked.error().message;
  EXPECT_TRUE(transport->Sent().empty());

  auto client = connect(transport);
  auto answered = client->Initialize();
  ASSERT_FALSE(answered.ok());
  EXPECT_EQ(answered.error().code, "server.protocol_version_mismatch");
  EXPECT_EQ(answered.error().details["answered"], "2024-11-05");
  EXPECT_EQ(transport->Sent().size(), 1u);  // no notifications/initialized
}

TEST(ClientTest, UnsupportedAnsweredVersionIsAMismatch) {
  for (const std::string version : {"2024-10-07", "2026-07-28", "2025-11-25 "}) {
    FakeServer server;
    server.answer_version = version;
    ClientHarness h(server);
    auto init = h.client->Initialize();
    ASSERT_FALSE(init.ok());
    EXPECT_EQ(init.error().code, "server.protocol_version_mismatch");
    // Nothing else is sent on a connection speaking an unknown version.
    EXPECT_EQ(h.transport->Sent().size(), 1u);
  }
}

TEST(ClientTest, MalformedOrRefusedInitializeIsConnectFailed) {
  {
    auto owned = std::make_unique<MemoryTransport>([](const Message& in, MemoryPeer& peer) {
      peer.Send(MakeResult(in.id, {{"protocolVersion", "2025-11-25"}, {"capabilities", {}}}));
    });
    Client client(std::move(owned));
    ASSERT_TRUE(client.Start().ok());
    EXPECT_EQ(client.Initialize().error().code, "server.connect_failed");
  }
  {
    auto owned = std::make_unique<MemoryTransport>([](const Message& in, MemoryPeer& peer) {
      peer.Send(MakeError(in.id, kInvalidParams, "Unsupported protocol version"));
    });
    Client client(std::move(owned));
    ASSERT_TRUE(client.Start().ok());
    auto init = client.Initialize();
    EXPECT_EQ(init.error().code, "server.connect_failed");
    EXPECT_EQ(init.error().details["cause"], "mcp.error_response");
  }
}

TEST(ClientTest, ListAllToolsFollowsEveryCursorAndKeepsPagesIntact) {
  FakeServer server;
  server.pages = {Page({"a", "b"}, "c1"), Page({"c"}, "c2"), Page({"d"}, std::nullopt)};
  ClientHarness h(server);
  ASSERT_TRUE(h.client->Initialize().ok());
  auto listed = h.client->ListAllTools();
  ASSERT_TRUE(listed.ok()) << listed.error().Describe();
  ASSERT_EQ(listed->pages.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(listed->pages[i], server.pages[i]);
  auto lists = h.transport->Sent();
  std::vector<json::Value> cursors;
  for (const auto& m : lists) {
    if (m.method == "tools/list") cursors.push_back(m.params.value("cursor", json::Value()));
  }
  ASSERT_EQ(cursors.size(), 3u);
  EXPECT_TRUE(cursors[0].is_null());
  EXPECT_EQ(cursors[1], "c1");
  EXPECT_EQ(cursors[2], "c2");
  EXPECT_EQ(listed->sequence_before, listed->sequence_after);
}

TEST(ClientTest, ListAllToolsNeverStopsAtTheFirstPage) {
  FakeServer server;
  server.pages = {Page({"a"}, "c1"), Page({"b"}, std::nullopt)};
  ClientHarness h(server);
  ASSERT_TRUE(h.client->Initialize().ok());
  auto listed = h.client->ListAllTools(1);
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().code, "catalog.pagination_invalid");
}

TEST(ClientTest, RepeatedCursorIsRefused) {
  FakeServer server;
  server.pages = {Page({"a"}, "c1"), Page({"b"}, "c1")};
  ClientHarness h(server);
  ASSERT_TRUE(h.client->Initialize().ok());
  auto listed = h.client->ListAllTools();
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().code, "catalog.pagination_invalid");
}

TEST(ClientTest, PageLimitIsEnforced) {
  FakeServer server;
  server.pages = {Page({"a"}, "c1"), Page({"b"}, "c2"), Page({"c"}, "c3"), Page({"d"}, "c4"),
                  Page({"e"}, std::nullopt)};
  ClientHarness h(server);
  ASSERT_TRUE(h.client->Initialize().ok());
  EXPECT_EQ(h.client->ListAllTools(4).error().code, "catalog.pagination_invalid");
  EXPECT_TRUE(h.client->ListAllTools(5).ok());
}

TEST(ClientTest, MalformedPagesAreRefused) {
  for (json::Value bad : {json::Value{{"tools", "nope"}}, json::Value{{"other", 1}},
                          json::Value{{"tools", json::Value::array()}, {"nextCursor", 7}}}) {
    FakeServer server;
    server.pages = {bad};
    ClientHarness h(server);
    ASSERT_TRUE(h.client->Initialize().ok());
    EXPECT_EQ(h.client->ListAllTools().error().code, "catalog.pagination_invalid") << bad;
  }
}

TEST(ClientTest, ListChangedDuringListingFallsInsideTheSequenceWindow) {
  FakeServer server;
  server.pages = {Page({"a"}, "c1"), Page({"b"}, "c2"), Page({"c"}, std::nullopt)};
  server.after_page = [](std::size_t page, MemoryPeer& peer) {
    if (page == 1) peer.Send(MakeNotification("notifications/tools/list_changed"));
  };
  ClientHarness h(server);
  ASSERT_TRUE(h.client->Initialize().ok());
  auto listed = h.client->ListAllTools();
  ASSERT_TRUE(listed.ok());
  auto events = h.client->connection().EventsSince(listed->sequence_before);
  ASSERT_EQ(listed->sequence_after, listed->sequence_before + 1);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].method, "notifications/tools/list_changed");
  EXPECT_LE(events[0].sequence, listed->sequence_after);
}

TEST(ClientTest, ListChangedAfterTheLastPageFallsOutsideTheWindow) {
  FakeServer server;
  server.pages = {Page({"a"}, std::nullopt)};
  server.after_page = [](std::size_t, MemoryPeer& peer) {
    peer.Send(MakeNotification("notifications/tools/list_changed"));
  };
  ClientHarness h(server);
  ASSERT_TRUE(h.client->Initialize().ok());
  auto first = h.client->ListAllTools();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->sequence_before, first->sequence_after);
  // The notification lands after the first listing, at the latest during the second.
  auto second = h.client->ListAllTools();
  ASSERT_TRUE(second.ok());
  auto events = h.client->connection().EventsSince(first->sequence_after);
  ASSERT_FALSE(events.empty());
  EXPECT_LE(events[0].sequence, second->sequence_after);
}

TEST(ClientTest, CallToolReturnsTheRawResultAndEventsDuringIt) {
  FakeServer server;
  server.pages = {Page({"a"}, std::nullopt)};
  server.on_call = [](const Message& in, MemoryPeer& peer) {
    peer.Send(MakeNotification("notifications/progress", {{"progressToken", 1}, {"progress", 1}}));
    peer.Send(MakeRequest("s1", "sampling/createMessage"));
    peer.Send(MakeResult(in.id, {{"content", {{{"type", "text"}, {"text", "hi"}}}},
                                 {"structuredContent", {{"n", 3}}},
                                 {"_meta", {{"k", "v"}}}}));
  };
  ClientHarness h(server);
  ASSERT_TRUE(h.client->Initialize().ok());
  auto outcome = h.client->CallTool("a", {{"x", 1}});
  ASSERT_TRUE(outcome.ok()) << outcome.error().Describe();
  ASSERT_TRUE(outcome->result.has_value());
  EXPECT_EQ((*outcome->result)["structuredContent"]["n"], 3);
  EXPECT_EQ((*outcome->result)["_meta"]["k"], "v");
  ASSERT_EQ(outcome->events.size(), 2u);
  EXPECT_EQ(outcome->events[0].method, "notifications/progress");
  EXPECT_EQ(outcome->events[1].kind, EventKind::kServerRequest);
  EXPECT_EQ(outcome->events[1].method, "sampling/createMessage");
  Message call;
  for (const auto& m : h.transport->Sent()) {
    if (m.method == "tools/call") call = m;
  }
  EXPECT_EQ(call.params["name"], "a");
  EXPECT_EQ(call.params["arguments"], (json::Value{{"x", 1}}));
}

TEST(ClientTest, CallToolReturnsJsonRpcErrorResponses) {
  FakeServer server;
  server.on_call = [](const Message& in, MemoryPeer& peer) {
    peer.Send(MakeError(in.id, kInvalidParams, "Unknown tool"));
  };
  ClientHarness h(server);
  ASSERT_TRUE(h.client->Initialize().ok());
  auto outcome = h.client->CallTool("nope", json::Value::object());
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->result.has_value());
  ASSERT_TRUE(outcome->error.has_value());
  EXPECT_EQ((*outcome->error)["code"], kInvalidParams);
}

TEST(ClientTest, CallToolTimeoutIsIndeterminateAndCancels) {
  FakeServer server;
  server.on_call = [](const Message&, MemoryPeer&) {};
  ClientHarness h(server);
  ASSERT_TRUE(h.client->Initialize().ok());
  auto outcome = h.client->CallTool("slow", json::Value::object(), milliseconds(20));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().code, "call.indeterminate");
  EXPECT_EQ(outcome.error().details["reason"], "timeout");
  bool cancelled = false;
  for (const auto& m : h.transport->Sent()) cancelled |= m.method == "notifications/cancelled";
  EXPECT_TRUE(cancelled);
}

TEST(ClientTest, DisconnectAfterSendIsIndeterminate) {
  FakeServer server;
  server.on_call = [](const Message&, MemoryPeer& peer) { peer.Disconnect(); };
  ClientHarness h(server);
  ASSERT_TRUE(h.client->Initialize().ok());
  auto outcome = h.client->CallTool("boom", json::Value::object());
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().code, "call.indeterminate");
  EXPECT_EQ(outcome.error().details["reason"], "disconnected");
}

TEST(ClientTest, MalformedCallResultIsAProtocolError) {
  for (json::Value bad : {json::Value("text"), json::Value{{"structuredContent", {}}},
                          json::Value{{"content", "x"}}}) {
    FakeServer server;
    server.on_call = [&](const Message& in, MemoryPeer& peer) { peer.Send(MakeResult(in.id, bad)); };
    ClientHarness h(server);
    ASSERT_TRUE(h.client->Initialize().ok());
    EXPECT_EQ(h.client->CallTool("t", json::Value::object()).error().code, "call.protocol_error");
  }
}

TEST(ClientTest, OperationsNeedInitialize) {
  FakeServer server;
  ClientHarness h(server);
  EXPECT_EQ(h.client->ListAllTools().error().code, "mcp.not_initialized");
  EXPECT_EQ(h.client->CallTool("x", json::Value::object()).error().code, "mcp.not_initialized");
}

}  // namespace
}  // namespace udon::mcp
