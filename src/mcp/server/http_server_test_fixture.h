// The Streamable HTTP server in-process for its tests: raw HTTP requests of both eras, raw
// connections a test can leave mid-response, and small waiting helpers.
#ifndef UDON_MCP_SERVER_HTTP_SERVER_TEST_FIXTURE_H_
#define UDON_MCP_SERVER_HTTP_SERVER_TEST_FIXTURE_H_

#include <arpa/inet.h>
#include <httplib.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mcp/protocol/protocol.h"
#include "mcp/protocol/sse.h"
#include "mcp/server/http_server.h"

namespace udon::mcp::http_test {

using json::Value;

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
  static Message InitializeMessage() {
    return MakeRequest(1, "initialize",
                       {{"protocolVersion", "2025-11-25"},
                        {"capabilities", Value::object()},
                        {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
  }
  // The HTTP status of a legacy tools/list within `session` (0: no answer).
  int StatusIn(const std::string& session) {
    auto result = Post(MakeRequest(9, "tools/list"), session);
    return result ? result->status : 0;
  }
  std::string Initialize() {
    auto result = Post(InitializeMessage());
    EXPECT_TRUE(result);
    if (!result) return {};
    EXPECT_EQ(result->status, 200);
    return result->get_header_value("Mcp-Session-Id");
  }
  // A legacy request's SSE answer: 200, a priming event with an id and `retry:` first; its
  // JSON-RPC messages (the priming event skipped).
  static std::vector<Value> PrimedSseMessages(const httplib::Result& result) {
    EXPECT_TRUE(result);
    if (!result) return {};
    EXPECT_EQ(result->status, 200);
    EXPECT_NE(result->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
    EXPECT_EQ(result->body.rfind("id: ", 0), 0u);
    EXPECT_NE(result->body.find("retry: 1000\n"), std::string::npos);
    return Events(result->body);
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

inline Value ModernParams(Value params = Value::object(), const std::string& version = "2026-07-28") {
  params["_meta"] = {{std::string(meta::kProtocolVersion), version},
                     {std::string(meta::kClientCapabilities), Value::object()}};
  return params;
}

inline httplib::Headers ModernHeaders(const std::string& method, const std::string& name = {}) {
  httplib::Headers headers = {{"Accept", "application/json, text/event-stream"},
                              {"MCP-Protocol-Version", "2026-07-28"},
                              {"Mcp-Method", method}};
  if (!name.empty()) headers.emplace("Mcp-Name", name);
  return headers;
}

class HttpModernTest : public HttpServerTest {
 protected:
  void SetUp() override {
    HttpServerTest::SetUp();
    server_->AddTool({{"name", "regional"},
                      {"description", "d"},
                      {"inputSchema",
                       {{"type", "object"},
                        {"properties",
                         {{"region", {{"type", "string"}, {"x-mcp-header", "Region"}}},
                          {"limits",
                           {{"type", "object"},
                            {"properties", {{"max", {{"type", "integer"}, {"x-mcp-header", "Max"}}}}}}}}}}}},
                     [](const Value&, ToolContext&) {
                       return ToolOutcome{{{"content", Value::array()}}, {}};
                     });
  }
  httplib::Result PostModern(const httplib::Headers& headers, const Message& message) {
    return client_->Post("/mcp", headers, SerializeMessage(message), "application/json");
  }
  // The status and the one JSON-RPC answer (JSON body or the last SSE event).
  std::pair<int, Value> Answer(const httplib::Headers& headers, const Message& message) {
    auto result = PostModern(headers, message);
    EXPECT_TRUE(result);
    if (!result) return {0, nullptr};
    Value body;
    if (result->get_header_value("Content-Type").find("text/event-stream") != std::string::npos) {
      auto events = Events(result->body);
      if (!events.empty()) body = events.back();
    } else if (auto parsed = json::Parse(result->body); parsed.ok()) {
      body = *parsed;
    }
    return {result->status, body};
  }
  Message CallRegional(Value arguments) {
    return MakeRequest(7, "tools/call", ModernParams({{"name", "regional"}, {"arguments", arguments}}));
  }
};

// A raw HTTP/1.1 connection, so that a test can leave in the middle of a response.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{60, 0};  // a read that never ends fails the test instead of hanging it
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawConnection() { Close(); }
  bool connected() const { return connected_; }
  bool Send(const std::string& method, const httplib::Headers& headers, const std::string& body = {}) {
    std::string text = method + " /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (const auto& [name, value] : headers) text += name + ": " + value + "\r\n";
    if (method == "POST") {
      text += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    }
    text += "\r\n" + body;
    return send(fd_, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
  }
  // Reads until `text` has arrived; false at the end of the stream or the read timeout.
  bool ReadUntil(const std::string& text) {
    char buffer[4096];
    while (received_.find(text) == std::string::npos) {
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return false;
      received_.append(buffer, static_cast<std::size_t>(n));
    }
    return true;
  }
  // ReadUntil with a shorter read timeout, for "has it arrived yet?".
  bool ReadUntilWithin(const std::string& text, std::chrono::milliseconds wait) {
    timeval short_timeout{static_cast<time_t>(wait.count() / 1000), static_cast<suseconds_t>(wait.count() % 1000 * 1000)};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &short_timeout, sizeof(short_timeout));
    const bool arrived = ReadUntil(text);
    timeval timeout{60, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    return arrived;
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  const std::string& received() const { return received_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string received_;
};

inline long ThreadCount() {
  long count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++count;
  return count;
}

// Waits (up to a minute, far beyond any keep-alive the tests leave room for) for `done`.
template <typename Predicate>
bool Eventually(Predicate done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

class HttpDepartureTest : public HttpModernTest {
 protected:
  void SetUp() override {
    // No keep-alive within the test's life: only the departure itself can end a stream.
    ServerOptions options;
    options.listen_keep_alive = std::chrono::hours(1);
    server_ = std::make_unique<Server>(options);
    server_->AddTool({{"name", "slow"}, {"description", "d"}, {"inputSchema", {{"type", "object"}}}},
                     [](const Value&, ToolContext& context) {
                       context.SleepFor(std::chrono::hours(1));  // until cancelled
                       return ToolOutcome{{{"content", Value::array()}}, {}};
                     });
  }
  static std::string ListenBody(const std::string& id) {
    return SerializeMessage(
        MakeRequest(id, "subscriptions/listen", ModernParams({{"notifications", {{"toolsListChanged", true}}}})));
  }
  // Opens a listen stream and waits for its acknowledgment.
  bool Listen(RawConnection& connection, const std::string& id) {
    return connection.connected() &&
           connection.Send("POST", ModernHeaders("subscriptions/listen"), ListenBody(id)) &&
           connection.ReadUntil("notifications/subscriptions/acknowledged");
  }
};

}  // namespace udon::mcp::http_test

#endif  // UDON_MCP_SERVER_HTTP_SERVER_TEST_FIXTURE_H_
