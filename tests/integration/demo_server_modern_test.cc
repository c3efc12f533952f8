// The demo server in the 2026-07-28 (modern) era as a real process: stateless requests over
// stdio next to a legacy session, --era, cache hints, subscriptions/listen and the faults
// that act on modern results and listen streams (docs/demo-server.md), over stdio and HTTP.
#include <httplib.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "demo_http.h"
#include "line_client.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

constexpr char kModern[] = "2026-07-28";
constexpr char kServerInfo[] = "io.modelcontextprotocol/serverInfo";
constexpr char kSubscriptionId[] = "io.modelcontextprotocol/subscriptionId";

Json Meta() {
  return {{"io.modelcontextprotocol/protocolVersion", kModern},
          {"io.modelcontextprotocol/clientCapabilities", Json::object()},
          {"io.modelcontextprotocol/clientInfo", {{"name", "udon-test"}, {"version", "1"}}}};
}

Json ModernRequest(const Json& id, const std::string& method, Json params = Json::object()) {
  params["_meta"] = Meta();
  return Request(id, method, std::move(params));
}

Json ModernCall(const Json& id, const std::string& tool, Json arguments = Json::object()) {
  return ModernRequest(id, "tools/call", {{"name", tool}, {"arguments", std::move(arguments)}});
}

Json Listen(const Json& id) {
  return ModernRequest(id, "subscriptions/listen", {{"notifications", {{"toolsListChanged", true}}}});
}

Json ConvertArguments() { return {{"value", 1}, {"from", "km"}, {"to", "m"}}; }

// A stdio demo server driven one message at a time.
class ModernStdio {
 public:
  explicit ModernStdio(std::vector<std::string> extra = {}) : client_(Argv(std::move(extra))) {}
  static std::vector<std::string> Argv(std::vector<std::string> extra) {
    std::vector<std::string> argv = {DemoServerBinary()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }
  // Sends a request and returns its response; every message read meanwhile is kept.
  Json Ask(const Json& request) {
    client_.Send(request);
    auto response = client_.ReadResponse(request["id"], &seen_);
    EXPECT_TRUE(response) << request.dump();
    return response ? *response : Json();
  }
  // Opens a listen stream and returns its acknowledgment.
  Json OpenListen(const Json& id) {
    client_.Send(Listen(id));
    return NextMessage();
  }
  Json NextMessage() {
    auto line = client_.ReadLine();
    EXPECT_TRUE(line);
    return line ? Json::parse(*line, nullptr, false) : Json();
  }
  // Closes input and returns everything written until the server exited.
  std::vector<Json> Finish() {
    client_.CloseInput();
    std::vector<Json> rest;
    for (const std::string& line : client_.ReadAll()) rest.push_back(Json::parse(line, nullptr, false));
    EXPECT_EQ(client_.Wait(), 0);
    return rest;
  }
  // Messages read while waiting for responses that were not those responses.
  std::vector<Json> Notifications(const std::string& method) const {
    std::vector<Json> out;
    for (const Json& m : seen_) {
      if (m.is_object() && m.value("method", "") == method) out.push_back(m);
    }
    return out;
  }
  LineClient& client() { return client_; }

 private:
  LineClient client_;
  std::vector<Json> seen_;
};

TEST(DemoServerModern, StatelessOverStdioWithoutInitialize) {
  ModernStdio server;
  Json discover = server.Ask(ModernRequest(1, "server/discover"))["result"];
  EXPECT_EQ(discover["supportedVersions"], Json({"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}));
  EXPECT_EQ(discover["capabilities"]["tools"]["listChanged"], true);
  EXPECT_EQ(discover["_meta"][kServerInfo]["name"], "udon-mcp-demo-server");
  EXPECT_EQ(discover["resultType"], "complete");
  EXPECT_FALSE(discover["instructions"].get<std::string>().empty());
  Json list = server.Ask(ModernRequest(2, "tools/list"))["result"];
  EXPECT_EQ(list["tools"].size(), 7u);
  EXPECT_EQ(list["ttlMs"], 0);
  EXPECT_EQ(list["cacheScope"], "public");
  Json call = server.Ask(ModernCall(3, "convert_units", ConvertArguments()))["result"];
  EXPECT_EQ(call["structuredContent"]["value"], 1000.0);
  EXPECT_EQ(call["resultType"], "complete");
  EXPECT_EQ(call["_meta"][kServerInfo]["version"], "0.1.0");
  EXPECT_EQ(server.Ask(ModernRequest(4, "ping"))["error"]["code"], -32601);
  // A legacy session on the same process still works, and stays legacy.
  Json init = server.Ask(InitializeRequest(5));
  EXPECT_EQ(init["result"]["protocolVersion"], "2025-11-25");
  EXPECT_FALSE(server.Ask(Request(6, "tools/list"))["result"].contains("resultType"));
  EXPECT_EQ(server.Ask(ModernRequest(7, "tools/list"))["result"]["resultType"], "complete");
  server.Finish();
}

TEST(DemoServerModern, MetaErrorsAndUnsupportedVersions) {
  ModernStdio server;
  EXPECT_EQ(server.Ask(Request(1, "server/discover", Json::object()))["error"]["code"], -32602);
  Json v999 = ModernRequest(2, "tools/list");
  v999["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "v999";
  Json unsupported = server.Ask(v999)["error"];
  EXPECT_EQ(unsupported["code"], -32022);
  EXPECT_EQ(unsupported["data"]["requested"], "v999");
  EXPECT_EQ(unsupported["data"]["supported"][0], kModern);
  server.Finish();
}

TEST(DemoServerModern, EraFlagSelectsWhatIsServed) {
  ModernStdio modern({"--era", "modern"});
  Json refused = modern.Ask(InitializeRequest(1))["error"];
  EXPECT_EQ(refused["code"], -32022);
  EXPECT_NE(refused["message"].get<std::string>().find(kModern), std::string::npos);
  EXPECT_EQ(refused["data"]["supported"], Json({kModern}));
  EXPECT_EQ(modern.Ask(ModernRequest(2, "server/discover"))["result"]["supportedVersions"],
            Json({kModern}));
  modern.Finish();
  ModernStdio legacy({"--era", "legacy"});
  EXPECT_EQ(legacy.Ask(ModernRequest(1, "server/discover"))["error"]["code"], -32601);
  EXPECT_EQ(legacy.Ask(InitializeRequest(2))["result"]["protocolVersion"], "2025-11-25");
  legacy.Finish();
}

TEST(DemoServerModern, CacheHintFlags) {
  ModernStdio server({"--ttl-ms", "60000", "--cache-scope", "private"});
  for (const char* method : {"server/discover", "tools/list"}) {
    Json result = server.Ask(ModernRequest(1, method))["result"];
    EXPECT_EQ(result["ttlMs"], 60000) << method;
    EXPECT_EQ(result["cacheScope"], "private") << method;
  }
  server.Finish();
}

TEST(DemoServerModern, ServerVersionFaultChangesDiscoverAndResultMeta) {
  ModernStdio server({"--fault", "server-version=9.9.9"});
  EXPECT_EQ(server.Ask(ModernRequest(1, "server/discover"))["result"]["_meta"][kServerInfo]["version"],
            "9.9.9");
  EXPECT_EQ(server.Ask(ModernRequest(2, "tools/list"))["result"]["_meta"][kServerInfo]["version"],
            "9.9.9");
  EXPECT_EQ(server.Ask(ModernCall(3, "convert_units", ConvertArguments()))["result"]["_meta"][kServerInfo]
                ["version"],
            "9.9.9");
  EXPECT_EQ(server.Ask(InitializeRequest(4))["result"]["serverInfo"]["version"], "9.9.9");
  server.Finish();
}

TEST(DemoServerModern, ServerInfoDriftsInResultMetaOnlyAfterNCalls) {
  ModernStdio server({"--fault", "server-info-drift-after=2"});
  auto version = [](const Json& response) {
    return response["result"]["_meta"][kServerInfo]["version"].get<std::string>();
  };
  EXPECT_EQ(version(server.Ask(ModernCall(1, "convert_units", ConvertArguments()))), "0.1.0");
  EXPECT_EQ(version(server.Ask(ModernCall(2, "convert_units", ConvertArguments()))), "0.1.0");
  EXPECT_EQ(version(server.Ask(ModernRequest(3, "tools/list"))), "0.1.0-drift");
  EXPECT_EQ(version(server.Ask(ModernCall(4, "convert_units", ConvertArguments()))), "0.1.0-drift");
  EXPECT_EQ(version(server.Ask(ModernRequest(5, "server/discover"))), "0.1.0");
  server.Finish();
}

TEST(DemoServerModern, ResultTypeFaults) {
  ModernStdio server({"--fault", "call-input-required=convert_units", "--fault",
                      "call-unknown-result-type=analyze_text"});
  Json input_required = server.Ask(ModernCall(1, "convert_units", ConvertArguments()))["result"];
  EXPECT_EQ(input_required["resultType"], "input_required");
  EXPECT_TRUE(input_required["requestState"].is_string());
  EXPECT_FALSE(input_required.contains("content"));
  EXPECT_FALSE(input_required.contains("inputRequests"));
  Json unknown = server.Ask(ModernCall(2, "analyze_text", {{"text", "a b"}}))["result"];
  EXPECT_EQ(unknown["resultType"], "udon_unknown");
  EXPECT_TRUE(unknown.contains("content"));
  EXPECT_EQ(server.Ask(ModernCall(3, "summarize", {{"text", "a b"}}))["result"]["resultType"],
            "complete");
  server.Finish();
}

TEST(DemoServerModern, ListenGetsTaggedChangesAndAClosureAtEndOfInput) {
  ModernStdio server({"--fault", "list-changed-during-call=convert_units"});
  server.Ask(InitializeRequest(0));  // a legacy session on the same channel
  Json ack = server.OpenListen("sub");
  EXPECT_EQ(ack["method"], "notifications/subscriptions/acknowledged");
  EXPECT_EQ(ack["params"]["_meta"][kSubscriptionId], "sub");
  EXPECT_EQ(ack["params"]["notifications"], Json({{"toolsListChanged", true}}));
  server.Ask(ModernCall(1, "convert_units", ConvertArguments()));
  auto changes = server.Notifications("notifications/tools/list_changed");
  ASSERT_EQ(changes.size(), 1u);  // to the listener only: the legacy session hears nothing
  EXPECT_EQ(changes[0]["params"]["_meta"][kSubscriptionId], "sub");
  server.Ask(Request(2, "tools/call", {{"name", "convert_units"}, {"arguments", ConvertArguments()}}));
  changes = server.Notifications("notifications/tools/list_changed");
  ASSERT_EQ(changes.size(), 2u);  // a legacy call tells the legacy session, untagged
  EXPECT_FALSE(changes[1].contains("params") && changes[1]["params"].contains("_meta"));
  std::vector<Json> rest = server.Finish();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0]["id"], "sub");
  EXPECT_EQ(rest[0]["result"]["_meta"][kSubscriptionId], "sub");
  EXPECT_EQ(rest[0]["result"]["resultType"], "complete");
}

TEST(DemoServerModern, ListChangedAfterListGoesToListenersThatAskedOnly) {
  ModernStdio server({"--fault", "list-changed-after-list=1"});
  server.OpenListen("tools");
  server.client().Send(
      ModernRequest("prompts", "subscriptions/listen", {{"notifications", {{"promptsListChanged", true}}}}));
  Json narrow = server.NextMessage();
  EXPECT_EQ(narrow["params"]["notifications"], Json::object());
  server.Ask(ModernRequest(1, "tools/list"));
  Json change = server.NextMessage();
  EXPECT_EQ(change["method"], "notifications/tools/list_changed");
  EXPECT_EQ(change["params"]["_meta"][kSubscriptionId], "tools");
  std::vector<Json> rest = server.Finish();
  ASSERT_EQ(rest.size(), 2u);  // the two closures, nothing for the prompts-only stream
  for (const Json& closure : rest) EXPECT_TRUE(closure.contains("result"));
}

TEST(DemoServerModern, ListenUnsupportedAcknowledgesNothing) {
  ModernStdio server({"--fault", "listen-unsupported", "--fault", "list-changed-after-list"});
  Json ack = server.OpenListen(1);
  EXPECT_EQ(ack["params"]["notifications"], Json::object());
  server.Ask(ModernRequest(2, "tools/list"));
  EXPECT_TRUE(server.Notifications("notifications/tools/list_changed").empty());
  std::vector<Json> rest = server.Finish();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0]["id"], 1);
}

TEST(DemoServerModern, ListenDropEndsTheSubscriptionWithoutAResponse) {
  ModernStdio server({"--fault", "listen-drop", "--fault", "list-changed-after-list"});
  EXPECT_EQ(server.OpenListen(1)["method"], "notifications/subscriptions/acknowledged");
  server.Ask(ModernRequest(2, "tools/list"));
  EXPECT_TRUE(server.Notifications("notifications/tools/list_changed").empty());
  EXPECT_TRUE(server.Finish().empty());  // no closure response either
}

TEST(DemoServerModern, ListenStopsOnCancellation) {
  ModernStdio server({"--fault", "list-changed-after-list"});
  server.OpenListen(7);
  server.client().Send(Notification("notifications/cancelled", {{"requestId", 7}}));
  server.Ask(ModernRequest(1, "tools/list"));
  server.Ask(ModernRequest(2, "tools/list"));
  EXPECT_TRUE(server.Finish().empty());
}

// ---- Streamable HTTP ----

httplib::Headers ModernHeaders(const std::string& method, const std::string& name = {}) {
  httplib::Headers headers = {{"Accept", "application/json, text/event-stream"},
                              {"MCP-Protocol-Version", kModern},
                              {"Mcp-Method", method}};
  if (!name.empty()) headers.emplace("Mcp-Name", name);
  return headers;
}

// An open subscriptions/listen POST whose SSE body is collected as it arrives.
class HttpListen {
 public:
  HttpListen(int port, const Json& request) : client_("127.0.0.1", port) {
    request_.method = "POST";
    request_.path = "/mcp";
    request_.headers = ModernHeaders("subscriptions/listen");
    request_.headers.emplace("Content-Type", "application/json");
    request_.body = request.dump();
    request_.content_receiver = [this](const char* data, std::size_t size, std::uint64_t, std::uint64_t) {
      std::lock_guard lock(mutex_);
      received_.append(data, size);
      cv_.notify_all();
      return true;
    };
    thread_ = std::thread([this] {
      httplib::Response response;
      httplib::Error error = httplib::Error::Success;
      client_.send(request_, response, error);
      std::lock_guard lock(mutex_);
      ended_ = true;
      cv_.notify_all();
    });
  }
  ~HttpListen() {
    client_.stop();
    thread_.join();
  }
  bool WaitFor(const std::string& text) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::minutes(1),
                        [&] { return ended_ || received_.find(text) != std::string::npos; }) &&
           received_.find(text) != std::string::npos;
  }
  bool WaitForEnd() {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::minutes(1), [&] { return ended_; });
  }
  std::vector<Json> Messages() {
    std::lock_guard lock(mutex_);
    return SseMessages(received_);
  }

 private:
  httplib::Client client_;
  httplib::Request request_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string received_;
  bool ended_ = false;
};

TEST(DemoServerModernHttp, ChangesReachTheListenStreamNotTheCallStream) {
  HttpDemoServer server({"--fault", "list-changed-during-call=convert_units"});
  ASSERT_GT(server.port(), 0) << server.process().Output();
  HttpListen listen(server.port(), Listen("L"));
  ASSERT_TRUE(listen.WaitFor("acknowledged"));
  httplib::Client client("127.0.0.1", server.port());
  auto call = client.Post("/mcp", ModernHeaders("tools/call", "convert_units"),
                          ModernCall(1, "convert_units", ConvertArguments()).dump(), "application/json");
  ASSERT_TRUE(call);
  EXPECT_EQ(call->status, 200);
  EXPECT_FALSE(call->has_header("Mcp-Session-Id"));
  EXPECT_EQ(call->body.find("list_changed"), std::string::npos);
  ASSERT_TRUE(listen.WaitFor("list_changed"));
  auto messages = listen.Messages();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1]["params"]["_meta"][kSubscriptionId], "L");
  server.process().Stop();  // SIGTERM: the graceful closure goes out before the listener
  ASSERT_TRUE(listen.WaitForEnd());
  messages = listen.Messages();
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[2]["id"], "L");
  EXPECT_EQ(messages[2]["result"]["_meta"][kSubscriptionId], "L");
}

TEST(DemoServerModernHttp, ListenDropClosesTheStreamWithoutAResponse) {
  HttpDemoServer server({"--fault", "listen-drop"});
  ASSERT_GT(server.port(), 0);
  HttpListen listen(server.port(), Listen(1));
  ASSERT_TRUE(listen.WaitForEnd());
  auto messages = listen.Messages();
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0]["method"], "notifications/subscriptions/acknowledged");
}

TEST(DemoServerModernHttp, ModernOnlyRefusesInitializeAndLegacyStillWorksInDual) {
  HttpDemoServer modern({"--era", "modern"});
  ASSERT_GT(modern.port(), 0);
  RawHttpPeer legacy_client(modern.port());
  auto refused = legacy_client.Post(InitializeRequest(1));
  EXPECT_EQ(refused.status, 400);
  ASSERT_EQ(refused.messages.size(), 1u);
  EXPECT_EQ(refused.messages[0]["error"]["code"], -32022);
  EXPECT_TRUE(refused.session_id.empty());
  HttpDemoServer dual;
  ASSERT_GT(dual.port(), 0);
  RawHttpPeer peer(dual.port());
  EXPECT_EQ(peer.Initialize()["result"]["protocolVersion"], "2025-11-25");
  httplib::Client client("127.0.0.1", dual.port());
  auto list = client.Post("/mcp", ModernHeaders("tools/list"), ModernRequest(2, "tools/list").dump(),
                          "application/json");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->status, 200);
  auto messages = SseMessages(list->body);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0]["result"]["resultType"], "complete");
}

}  // namespace
}  // namespace udon::testing
