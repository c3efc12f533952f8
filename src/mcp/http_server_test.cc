#include "mcp/http_server.h"

#include <httplib.h>
#include <gtest/gtest.h>

#include <thread>

#include "mcp/sse.h"

namespace udon::mcp {
namespace {

using json::Value;

TEST(HttpOriginTest, AcceptsOnlyLoopbackOrigins) {
  EXPECT_TRUE(IsAllowedOrigin(""));
  EXPECT_TRUE(IsAllowedOrigin("http://localhost:3000"));
  EXPECT_TRUE(IsAllowedOrigin("http://127.0.0.1"));
  EXPECT_TRUE(IsAllowedOrigin("https://[::1]:8443"));
  EXPECT_TRUE(IsAllowedOrigin("http://LOCALHOST"));
  EXPECT_FALSE(IsAllowedOrigin("http://evil.example.com"));
  EXPECT_FALSE(IsAllowedOrigin("http://localhost.evil.example.com"));
  EXPECT_FALSE(IsAllowedOrigin("null"));
  EXPECT_FALSE(IsAllowedOrigin("file://localhost"));
  EXPECT_FALSE(IsAllowedOrigin("http://127.0.0.1.nip.io"));
}

TEST(HttpHostTest, AcceptsOnlyLoopbackHosts) {
  EXPECT_TRUE(IsAllowedHost("localhost:8080"));
  EXPECT_TRUE(IsAllowedHost("127.0.0.1:1"));
  EXPECT_TRUE(IsAllowedHost("[::1]:80"));
  EXPECT_TRUE(IsAllowedHost("localhost"));
  EXPECT_FALSE(IsAllowedHost("evil.example.com:8080"));
  EXPECT_FALSE(IsAllowedHost("[::1"));
  EXPECT_FALSE(IsAllowedHost("[::1]x"));
}

// The server in-process, with a client for raw HTTP requests.
class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.page_size = 1;
    server_ = std::make_unique<Server>(options);
    server_->AddTool({{"name", "t1"}, {"description", "d"}, {"inputSchema", {{"type", "object"}}}},
                     [](const Value&, ToolContext& context) {
                       context.Progress(1, 1);
                       return ToolOutcome{{{"content", Value::array()}}, {}};
                     });
    server_->AddTool({{"name", "t2"}, {"description", "d"}, {"inputSchema", {{"type", "object"}}}},
                     [](const Value&, ToolContext&) {
                       return ToolOutcome{{{"content", Value::array()}}, {}};
                     });
  }
  void Start(HttpServerOptions options = {}) {
    options.max_body_bytes = 4096;
    http_ = std::make_unique<HttpServer>(*server_, options);
    auto port = http_->Bind();
    ASSERT_TRUE(port.ok());
    port_ = *port;
    thread_ = std::thread([this] { http_->Serve(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  }
  void TearDown() override {
    if (http_) http_->Stop();
    if (thread_.joinable()) thread_.join();
  }
  httplib::Headers Headers(const std::string& session = {}) {
    httplib::Headers headers = {{"Accept", "application/json, text/event-stream"}};
    if (!session.empty()) headers.emplace("Mcp-Session-Id", session);
    return headers;
  }
  httplib::Result Post(const Message& message, const std::string& session = {}) {
    return client_->Post("/mcp", Headers(session), SerializeMessage(message), "application/json");
  }
  std::string Initialize() {
    auto result = Post(MakeRequest(1, "initialize",
                                   {{"protocolVersion", "2025-11-25"},
                                    {"capabilities", Value::object()},
                                    {"clientInfo", {{"name", "t"}, {"version", "1"}}}}));
    EXPECT_TRUE(result);
    if (!result) return {};
    EXPECT_EQ(result->status, 200);
    return result->get_header_value("Mcp-Session-Id");
  }
  // The JSON-RPC messages of an SSE body (empty priming events skipped).
  static std::vector<Value> Events(const std::string& body) {
    SseParser parser(1 << 20);
    std::vector<SseEvent> events;
    EXPECT_TRUE(parser.Feed(body, events).ok());
    std::vector<Value> out;
    for (const auto& event : events) {
      if (!event.data.empty()) out.push_back(*json::Parse(event.data));
    }
    return out;
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<HttpServer> http_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = 0;
};

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
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  EXPECT_NE(result->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
  EXPECT_EQ(result->body.rfind("id: ", 0), 0u);
  EXPECT_NE(result->body.find("retry: 1000\n"), std::string::npos);
  auto messages = Events(result->body);
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
  httplib::Headers version = Headers();
  version.emplace("MCP-Protocol-Version", "1999-01-01");
  auto bad_version = client_->Post("/mcp", version, body, "application/json");
  ASSERT_TRUE(bad_version);
  EXPECT_EQ(bad_version->status, 400);
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

}  // namespace
}  // namespace udon::mcp
