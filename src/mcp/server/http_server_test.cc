#include "mcp/server/http_server.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "mcp/server/http_server_test_fixture.h"

namespace udon::mcp::http_test {
namespace {


TEST_F(HttpServerTest, InitializeIssuesAVisibleAsciiSessionId) {
  Start();
  const std::string session = Initialize();
  ASSERT_FALSE(session.empty());
  for (char c : session) EXPECT_TRUE(c >= 0x21 && c <= 0x7e);
}

TEST_F(HttpServerTest, SseAnswerStartsWithPrimingEventAndRetry) {
  Start();
  const std::string session = Initialize();
  auto result = Post(MakeRequest(2, "tools/call", {{"name", "t1"}, {"_meta", {{"progressToken", 5}}}}),
                     session);
  auto messages = PrimedSseMessages(result);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0]["method"], "notifications/progress");
  EXPECT_EQ(messages[1]["id"], 2);
}

TEST_F(HttpServerTest, JsonModeAnswersWithOneObject) {
  HttpServerOptions options;
  options.json_responses = true;
  Start(options);
  const std::string session = Initialize();
  auto result = Post(MakeRequest(2, "tools/list"), session);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->get_header_value("Content-Type"), "application/json");
  auto body = json::Parse(result->body);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ((*body)["result"]["nextCursor"], Server::EncodeCursor(1));
}

// Whatever httplib does for a client that accepts gzip (Node's fetch does), a JSON answer
// goes as it is: compressing a few hundred bytes costs both sides more than it saves.
TEST_F(HttpServerTest, JsonAnswersAreNeverCompressed) {
  HttpServerOptions options;
  options.json_responses = true;
  Start(options);
  const std::string session = Initialize();
  httplib::Headers headers = Headers(session);
  headers.emplace("Accept-Encoding", "gzip, deflate");
  auto result = client_->Post("/mcp", headers, SerializeMessage(MakeRequest(2, "tools/list")), "application/json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  EXPECT_FALSE(result->has_header("Content-Encoding"));
  EXPECT_TRUE(json::Parse(result->body).ok()) << result->body.size() << " bytes";
}

// serve's answers (json_single_answers): a call that sent nothing but its response is one
// JSON object, the same message the SSE stream ends with; with a progress token the call
// still streams its progress as SSE.
TEST_F(HttpServerTest, SingleAnswersComeAsJsonAndProgressStillStreams) {
  HttpServerOptions options;
  options.json_single_answers = true;
  Start(options);
  const std::string session = Initialize();
  auto streamed = Post(MakeRequest(2, "tools/call", {{"name", "t1"}, {"_meta", {{"progressToken", 5}}}}), session);
  ASSERT_TRUE(streamed);
  EXPECT_NE(streamed->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
  EXPECT_EQ(streamed->body.rfind("id: ", 0), 0u);  // the priming event first
  auto events = Events(streamed->body);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["method"], "notifications/progress");
  httplib::Headers headers = Headers(session);
  headers.emplace("Accept-Encoding", "gzip, deflate");
  auto single = client_->Post("/mcp", headers, SerializeMessage(MakeRequest(2, "tools/call", {{"name", "t1"}})),
                              "application/json");
  ASSERT_TRUE(single);
  EXPECT_EQ(single->status, 200);
  EXPECT_EQ(single->get_header_value("Content-Type"), "application/json");
  EXPECT_FALSE(single->has_header("Content-Encoding"));
  auto body = json::Parse(single->body);
  ASSERT_TRUE(body.ok()) << single->body.size() << " bytes";
  EXPECT_EQ(*body, events[1]);
  EXPECT_EQ(StatusIn(session), 200);  // tools/list: JSON as well
}

// A request without a progress token that sends more than its response (a log here) is
// answered as the SSE stream it always was: priming event, the log, the response.
TEST_F(HttpServerTest, SingleAnswersModeKeepsSseForMoreThanOneMessage) {
  server_->AddTool({{"name", "logs"}, {"description", "d"}, {"inputSchema", {{"type", "object"}}}},
                   [](const Value&, ToolContext& context) {
                     context.Log("info", "working");
                     return ToolOutcome{{{"content", Value::array()}}, {}};
                   });
  HttpServerOptions options;
  options.json_single_answers = true;
  Start(options);
  const std::string session = Initialize();
  auto result = Post(MakeRequest(3, "tools/call", {{"name", "logs"}}), session);
  auto events = PrimedSseMessages(result);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["method"], "notifications/message");
  EXPECT_EQ(events[1]["id"], 3);
}

TEST_F(HttpServerTest, SessionRulesAndDelete) {
  Start();
  auto without = Post(MakeRequest(2, "ping"));
  ASSERT_TRUE(without);
  EXPECT_EQ(without->status, 400);
  auto unknown = Post(MakeRequest(2, "ping"), "no-such-session");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  const std::string session = Initialize();
  auto notification = Post(MakeNotification("notifications/initialized"), session);
  ASSERT_TRUE(notification);
  EXPECT_EQ(notification->status, 202);
  auto deleted = client_->Delete("/mcp", Headers(session));
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 200);
  auto after = Post(MakeRequest(3, "ping"), session);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 404);
}

TEST_F(HttpServerTest, HeaderChecks) {
  Start();
  const std::string body = SerializeMessage(MakeRequest(1, "ping"));
  auto no_sse = client_->Post("/mcp", {{"Accept", "application/json"}}, body, "application/json");
  ASSERT_TRUE(no_sse);
  EXPECT_EQ(no_sse->status, 406);
  auto text = client_->Post("/mcp", Headers(), body, "text/plain");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->status, 415);
  httplib::Headers foreign = Headers();
  foreign.emplace("Origin", "http://evil.example.com");
  auto forbidden = client_->Post("/mcp", foreign, body, "application/json");
  ASSERT_TRUE(forbidden);
  EXPECT_EQ(forbidden->status, 403);
  httplib::Headers rebinding = Headers();
  rebinding.emplace("Host", "evil.example.com");
  auto rebound = client_->Post("/mcp", rebinding, body, "application/json");
  ASSERT_TRUE(rebound);
  EXPECT_EQ(rebound->status, 403);
  // An unknown revision, and 2024-11-05, which is spoken over stdio only (its HTTP
  // transport was HTTP+SSE, not this one): even an initialize that would open a session.
  for (const char* unspoken : {"1999-01-01", "2024-11-05"}) {
    httplib::Headers version = Headers();
    version.emplace("MCP-Protocol-Version", unspoken);
    auto bad_version =
        client_->Post("/mcp", version, SerializeMessage(InitializeMessage()), "application/json");
    ASSERT_TRUE(bad_version);
    EXPECT_EQ(bad_version->status, 400) << unspoken;
  }
  auto large = client_->Post("/mcp", Headers(), std::string(8192, ' '), "application/json");
  ASSERT_TRUE(large);
  EXPECT_EQ(large->status, 413);
  auto garbage = client_->Post("/mcp", Headers(), "{not json", "application/json");
  ASSERT_TRUE(garbage);
  EXPECT_EQ(garbage->status, 400);
}

TEST_F(HttpServerTest, OneGetStreamPerSessionCarriesUnsolicitedMessages) {
  HttpServerOptions options;
  options.json_responses = true;  // progress then travels on the GET stream
  Start(options);
  const std::string session = Initialize();
  std::mutex mutex;
  std::condition_variable cv;
  std::string received;
  httplib::Client stream_client("127.0.0.1", port_);
  httplib::Headers headers = {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}};
  std::thread reader([&] {
    stream_client.Get("/mcp", headers, [&](const char* data, size_t size) {
      std::lock_guard lock(mutex);
      received.append(data, size);
      cv.notify_all();
      return received.find("notifications/progress") == std::string::npos;
    });
  });
  {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return !received.empty(); });  // the priming event: stream is open
  }
  auto second = client_->Get("/mcp", headers);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 409);
  auto call = Post(MakeRequest(2, "tools/call", {{"name", "t1"}, {"_meta", {{"progressToken", 9}}}}),
                   session);
  ASSERT_TRUE(call);
  EXPECT_EQ(call->status, 200);
  reader.join();
  EXPECT_NE(received.find("\"progressToken\":9"), std::string::npos);
}


// ---- The modern era (2026-07-28) on the same endpoint. ----


TEST_F(HttpModernTest, ModernRequestsNeedNoSessionAndMintNone) {
  Start();
  auto result = PostModern(ModernHeaders("tools/list"), MakeRequest(1, "tools/list", ModernParams()));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  EXPECT_FALSE(result->has_header("Mcp-Session-Id"));
  EXPECT_EQ(result->body.find("id: "), std::string::npos);  // no resumability, no event ids
  auto events = Events(result->body);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["result"]["resultType"], "complete");
  EXPECT_EQ(events[0]["result"]["cacheScope"], "public");
  httplib::Headers stale = ModernHeaders("tools/list");
  stale.emplace("Mcp-Session-Id", "left-over-from-legacy");
  EXPECT_EQ(Answer(stale, MakeRequest(2, "tools/list", ModernParams())).first, 200);
}

TEST_F(HttpModernTest, MetaAndVersionErrorsAre400WithTheRequestId) {
  Start();
  auto [missing_status, missing] =
      Answer(ModernHeaders("server/discover"), MakeRequest(101, "server/discover", Value::object()));
  EXPECT_EQ(missing_status, 400);
  EXPECT_EQ(missing["error"]["code"], kInvalidParams);
  EXPECT_EQ(missing["id"], 101);
  auto [mismatch_status, mismatch] = Answer(
      ModernHeaders("server/discover"), MakeRequest(302, "server/discover", ModernParams({}, "v999.0.0")));
  EXPECT_EQ(mismatch_status, 400);
  EXPECT_EQ(mismatch["error"]["code"], rpc_code::kHeaderMismatch);
  httplib::Headers unknown_version = ModernHeaders("server/discover");
  unknown_version.erase("MCP-Protocol-Version");
  unknown_version.emplace("MCP-Protocol-Version", "v999.0.0");
  auto [version_status, version] = Answer(
      unknown_version, MakeRequest(301, "server/discover", ModernParams({}, "v999.0.0")));
  EXPECT_EQ(version_status, 400);
  EXPECT_EQ(version["error"]["code"], rpc_code::kUnsupportedProtocolVersion);
  EXPECT_EQ(version["error"]["data"]["requested"], "v999.0.0");
  EXPECT_EQ(version["id"], 301);
  httplib::Headers no_header = ModernHeaders("tools/list");
  no_header.erase("MCP-Protocol-Version");
  EXPECT_EQ(Answer(no_header, MakeRequest(3, "tools/list", ModernParams())).second["error"]["code"],
            rpc_code::kHeaderMismatch);
}

TEST_F(HttpModernTest, MethodHeaderMustMatchAndUnknownMethodsAre404) {
  Start();
  httplib::Headers no_method = ModernHeaders("tools/list");
  no_method.erase("Mcp-Method");
  auto [absent_status, absent] = Answer(no_method, MakeRequest(1, "tools/list", ModernParams()));
  EXPECT_EQ(absent_status, 400);
  EXPECT_EQ(absent["error"]["code"], rpc_code::kHeaderMismatch);
  EXPECT_EQ(Answer(ModernHeaders("TOOLS/LIST"), MakeRequest(2, "tools/list", ModernParams())).first,
            400);
  httplib::Headers lower = {{"accept", "application/json, text/event-stream"},
                            {"mcp-protocol-version", "2026-07-28"},
                            {"mcp-method", "  tools/list  "}};
  EXPECT_EQ(Answer(lower, MakeRequest(3, "tools/list", ModernParams())).first, 200);
  for (const char* method : {"ping", "initialize", "logging/setLevel", "unknown/method"}) {
    auto [status, body] = Answer(ModernHeaders(method), MakeRequest(4, method, ModernParams()));
    EXPECT_EQ(status, 404) << method;
    EXPECT_EQ(body["error"]["code"], kMethodNotFound) << method;
  }
}

TEST_F(HttpModernTest, NameHeaderMustMatchTheToolDecodedFromBase64) {
  Start();
  const Message call = MakeRequest(1, "tools/call", ModernParams({{"name", "t2"}}));
  EXPECT_EQ(Answer(ModernHeaders("tools/call"), call).second["error"]["code"], rpc_code::kHeaderMismatch);
  EXPECT_EQ(Answer(ModernHeaders("tools/call", "t1"), call).first, 400);
  EXPECT_EQ(Answer(ModernHeaders("tools/call", "=?base64?dDI?="), call).first, 400);  // bad padding
  EXPECT_EQ(Answer(ModernHeaders("tools/call", "t2"), call).first, 200);
  auto [status, body] = Answer(ModernHeaders("tools/call", "=?base64?dDI=?="), call);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body["result"]["resultType"], "complete");
}

TEST_F(HttpModernTest, ParamHeadersMirrorAnnotatedArguments) {
  Start();
  httplib::Headers headers = ModernHeaders("tools/call", "regional");
  EXPECT_EQ(Answer(headers, CallRegional(Value::object())).first, 200);  // nothing to mirror
  EXPECT_EQ(Answer(headers, CallRegional({{"region", "us-west1"}})).second["error"]["code"],
            rpc_code::kHeaderMismatch);  // value in the body, header missing
  httplib::Headers with_region = headers;
  with_region.emplace("Mcp-Param-Region", "us-west1");
  EXPECT_EQ(Answer(with_region, CallRegional({{"region", "us-west1"}})).first, 200);
  EXPECT_EQ(Answer(with_region, CallRegional({{"region", "eu-north1"}})).first, 400);
  EXPECT_EQ(Answer(with_region, CallRegional(Value::object())).first, 400);  // header, no value
  httplib::Headers encoded = headers;
  encoded.emplace("mcp-param-region", "=?base64?IHBhZGRlZCA=?=");
  EXPECT_EQ(Answer(encoded, CallRegional({{"region", " padded "}})).first, 200);
  httplib::Headers nested = headers;
  nested.emplace("Mcp-Param-Max", "42");
  EXPECT_EQ(Answer(nested, CallRegional({{"limits", {{"max", 42}}}})).first, 200);
  EXPECT_EQ(Answer(nested, CallRegional({{"limits", {{"max", 43}}}})).first, 400);
}

// The server reads the annotations with the client's walk (mcp/param_headers.h): a tool
// whose annotations break the rules (here two names equal but for case) cannot have its
// headers checked, so it is never called, however the headers look.
TEST_F(HttpModernTest, AToolWithInvalidParamHeaderAnnotationsIsNeverCalled) {
  std::atomic<int> calls{0};
  server_->AddTool({{"name", "misannotated"},
                    {"inputSchema",
                     {{"type", "object"},
                      {"properties",
                       {{"a", {{"type", "string"}, {"x-mcp-header", "Region"}}},
                        {"b", {{"type", "string"}, {"x-mcp-header", "region"}}}}}}}},
                   [&calls](const Value&, ToolContext&) {
                     ++calls;
                     return ToolOutcome{{{"content", Value::array()}}, {}};
                   });
  Start();
  httplib::Headers headers = ModernHeaders("tools/call", "misannotated");
  headers.emplace("Mcp-Param-Region", "x");
  const Message call =
      MakeRequest(8, "tools/call", ModernParams({{"name", "misannotated"}, {"arguments", {{"a", "x"}, {"b", "x"}}}}));
  auto [status, body] = Answer(headers, call);
  EXPECT_EQ(body["error"]["code"], kInternalError) << status;
  EXPECT_EQ(body["id"], 8);
  EXPECT_EQ(calls.load(), 0);
  // A valid tool beside it is served as before.
  httplib::Headers regional = ModernHeaders("tools/call", "regional");
  regional.emplace("Mcp-Param-Region", "us-west1");
  EXPECT_EQ(Answer(regional, CallRegional({{"region", "us-west1"}})).first, 200);
}

TEST_F(HttpModernTest, ProgressStreamsEvenInJsonMode) {
  HttpServerOptions options;
  options.json_responses = true;
  Start(options);
  Value params = ModernParams({{"name", "t1"}});
  params["_meta"]["progressToken"] = 3;
  auto result = PostModern(ModernHeaders("tools/call", "t1"), MakeRequest(5, "tools/call", params));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  EXPECT_NE(result->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
  auto events = Events(result->body);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["method"], "notifications/progress");
  EXPECT_EQ(events[1]["id"], 5);
  auto plain = PostModern(ModernHeaders("tools/list"), MakeRequest(6, "tools/list", ModernParams()));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->get_header_value("Content-Type"), "application/json");
}

TEST_F(HttpModernTest, SingleAnswersComeAsJsonAndProgressStillStreams) {
  HttpServerOptions options;
  options.json_single_answers = true;
  Start(options);
  httplib::Headers headers = ModernHeaders("tools/list");
  headers.emplace("Accept-Encoding", "gzip, deflate");
  auto plain = PostModern(headers, MakeRequest(6, "tools/list", ModernParams()));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plain->get_header_value("Content-Type"), "application/json");
  EXPECT_FALSE(plain->has_header("Content-Encoding"));
  auto body = json::Parse(plain->body);
  ASSERT_TRUE(body.ok()) << plain->body.size() << " bytes";
  EXPECT_EQ((*body)["id"], 6);
  Value params = ModernParams({{"name", "t1"}});
  params["_meta"]["progressToken"] = 3;
  auto streamed = PostModern(ModernHeaders("tools/call", "t1"), MakeRequest(5, "tools/call", params));
  ASSERT_TRUE(streamed);
  EXPECT_NE(streamed->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
  EXPECT_EQ(Events(streamed->body).size(), 2u);
}

TEST_F(HttpModernTest, GetAndDeleteAreForLegacySessionsOnly) {
  Start();
  httplib::Headers headers = {{"Accept", "text/event-stream"}, {"MCP-Protocol-Version", "2026-07-28"}};
  auto get = client_->Get("/mcp", headers);
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  auto del = client_->Delete("/mcp", headers);
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
}

TEST_F(HttpModernTest, BothErasOnOneEndpoint) {
  Start();
  const std::string session = Initialize();
  ASSERT_FALSE(session.empty());
  auto legacy = Post(MakeRequest(2, "tools/list"), session);
  ASSERT_TRUE(legacy);
  auto legacy_events = Events(legacy->body);
  ASSERT_EQ(legacy_events.size(), 1u);
  EXPECT_FALSE(legacy_events[0]["result"].contains("resultType"));
  auto [status, modern] = Answer(ModernHeaders("tools/list"), MakeRequest(3, "tools/list", ModernParams()));
  EXPECT_EQ(status, 200);
  EXPECT_EQ(modern["result"]["resultType"], "complete");
}

TEST_F(HttpModernTest, ListenStreamCarriesChangesAndEndsGracefullyAtStop) {
  Start();
  std::mutex mutex;
  std::condition_variable cv;
  std::string received;
  httplib::Client listen_client("127.0.0.1", port_);
  httplib::Request request;
  request.method = "POST";
  request.path = "/mcp";
  request.headers = ModernHeaders("subscriptions/listen");
  request.headers.emplace("Content-Type", "application/json");
  request.body = SerializeMessage(MakeRequest(
      "listen-1", "subscriptions/listen", ModernParams({{"notifications", {{"toolsListChanged", true}}}})));
  request.content_receiver = [&](const char* data, std::size_t size, std::uint64_t, std::uint64_t) {
    std::lock_guard lock(mutex);
    received.append(data, size);
    cv.notify_all();
    return true;
  };
  int status = 0;
  std::thread reader([&] {
    httplib::Response response;
    httplib::Error error = httplib::Error::Success;
    listen_client.send(request, response, error);
    status = response.status;
  });
  auto wait_for = [&](const char* text) {
    std::unique_lock lock(mutex);
    return cv.wait_for(lock, std::chrono::minutes(1),
                       [&] { return received.find(text) != std::string::npos; });
  };
  ASSERT_TRUE(wait_for("notifications/subscriptions/acknowledged"));
  server_->NotifyToolsListChanged();
  ASSERT_TRUE(wait_for("notifications/tools/list_changed"));
  http_->Stop();
  reader.join();
  EXPECT_EQ(status, 200);
  auto events = Events(received);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["method"], "notifications/subscriptions/acknowledged");
  EXPECT_EQ(events[1]["params"]["_meta"][std::string(meta::kSubscriptionId)], "listen-1");
  EXPECT_EQ(events[2]["id"], "listen-1");
  EXPECT_EQ(events[2]["result"]["_meta"][std::string(meta::kSubscriptionId)], "listen-1");
}


// ---- Departed clients, bounded threads. ----


TEST_F(HttpDepartureTest, AListenClientThatLeavesIsNoticedWithoutAKeepAlive) {
  Start();
  {
    RawConnection connection(port_);
    ASSERT_TRUE(Listen(connection, "l1"));
    EXPECT_EQ(server_->open_subscriptions(), 1u);
  }  // the client leaves
  EXPECT_TRUE(Eventually([&] { return server_->open_subscriptions() == 0; }));
  EXPECT_GE(http_->departures(), 1u);
}

TEST_F(HttpDepartureTest, AGetStreamWhoseClientLeftFreesTheSessionsStream) {
  HttpServerOptions options;
  options.keep_alive_ms = 3600 * 1000;
  Start(options);
  const std::string session = Initialize();
  ASSERT_FALSE(session.empty());
  const httplib::Headers headers = {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}};
  {
    RawConnection stream(port_);
    ASSERT_TRUE(stream.Send("GET", headers));
    ASSERT_TRUE(stream.ReadUntil("retry:"));  // the priming event: the stream is open
  }
  // The session has one GET stream at a time: a second one opens only once the first is
  // known to be gone.
  EXPECT_TRUE(Eventually([&] {
    RawConnection again(port_);
    if (!again.Send("GET", headers) || !again.ReadUntil("\r\n")) return false;
    return again.received().find(" 200 ") != std::string::npos;
  }));
}

TEST_F(HttpDepartureTest, ACallWhoseClientLeftIsCancelled) {
  HttpServerOptions options;
  options.threads = 2;
  Start(options);
  for (int i = 0; i < 6; ++i) {  // three times the threads: each call must free its own
    RawConnection connection(port_);
    ASSERT_TRUE(connection.Send("POST", ModernHeaders("tools/call", "slow"),
                                SerializeMessage(MakeRequest(i, "tools/call", ModernParams({{"name", "slow"}})))));
    connection.Close();
    ASSERT_TRUE(Eventually([&] { return http_->departures() >= static_cast<std::uint64_t>(i + 1); }));
  }
  auto [status, body] = Answer(ModernHeaders("tools/list"), MakeRequest(99, "tools/list", ModernParams()));
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body["result"]["tools"][0]["name"], "slow");
}

TEST_F(HttpDepartureTest, ThreadsStayBoundedUnderManyConnectionsAndAFlood) {
  HttpServerOptions options;
  options.threads = 4;
  options.max_queued_connections = 8;
  options.max_streams = 8;
  // A sanitizer's runtime starts a background thread of its own at the first thread
  // creation: let that happen before counting.
  std::thread([] {}).join();
  const long before = ThreadCount();
  Start(options);
  // The accept loop, the departure watch, and two pools of `threads` plus a spare per
  // open stream.
  const long bound = before + 2 + 2 * (options.threads + static_cast<long>(options.max_streams));
  long most = 0;
  for (int i = 0; i < 40; ++i) {  // ten times the threads, one listen stream after another
    RawConnection connection(port_);
    ASSERT_TRUE(Listen(connection, "l" + std::to_string(i))) << i;
    most = std::max(most, ThreadCount());
  }
  std::vector<std::unique_ptr<RawConnection>> flood;
  for (int i = 0; i < 200; ++i) {  // calls and listens that leave without reading a byte
    auto connection = std::make_unique<RawConnection>(port_);
    const bool listen = i % 2 == 0;
    connection->Send("POST", listen ? ModernHeaders("subscriptions/listen") : ModernHeaders("tools/call", "slow"),
                     listen ? ListenBody("f" + std::to_string(i))
                            : SerializeMessage(MakeRequest(i, "tools/call", ModernParams({{"name", "slow"}}))));
    flood.push_back(std::move(connection));
    // They leave ten at a time: more than the threads, fewer than threads and queue together
    // (beyond those the server stops accepting until some have left).
    if (flood.size() == 10) flood.clear();
    most = std::max(most, ThreadCount());
  }
  flood.clear();
  EXPECT_LE(most, bound);
  EXPECT_TRUE(Eventually([&] { return server_->open_subscriptions() == 0; }));
  auto [status, body] = Answer(ModernHeaders("tools/list"), MakeRequest(99, "tools/list", ModernParams()));
  EXPECT_EQ(status, 200);  // still serving
}

}  // namespace
}  // namespace udon::mcp::http_test
