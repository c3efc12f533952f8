#include "mcp/client/http_transport.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mcp/client/client.h"
#include "mcp/client/connection.h"
#include "mcp/client/www_authenticate.h"
#include "test_support.h"

namespace udon::mcp {
namespace {

using std::chrono::milliseconds;

std::string Sse(const std::string& data, const std::string& id = "", long retry = -1) {
  std::string out;
  if (!id.empty()) out += "id: " + id + "\n";
  if (retry >= 0) out += "retry: " + std::to_string(retry) + "\n";
  return out + "data: " + data + "\n\n";
}

// A scripted Streamable HTTP server on 127.0.0.1 that records what it saw.
class FakeHttpServer {
 public:
  struct Seen {
    std::string method;       // HTTP method
    std::string rpc_method;   // JSON-RPC method of a POST body
    httplib::Headers headers;
    int remote_port = -1;     // the client's end of the TCP connection it came on
  };
  using PostHandler = std::function<void(const Message&, httplib::Response&)>;

  explicit FakeHttpServer(PostHandler on_post) : on_post_(std::move(on_post)) {
    server_.Post("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      auto message = ParseMessage(req.body);
      Record(req, message.ok() ? message->method : "");
      if (!message.ok()) {
        res.status = 400;
        return;
      }
      on_post_(*message, res);
    });
    server_.Get("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      Record(req, "");
      if (on_get) {
        on_get(req, res);
      } else {
        res.status = 405;
      }
    });
    server_.Delete("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      Record(req, "");
      res.status = 200;
    });
    server_.set_keep_alive_max_count(1000);  // as udon's server; httplib's default is 5
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeHttpServer() {
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }
  std::vector<Seen> seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }

  std::function<void(const httplib::Request&, httplib::Response&)> on_get;

 private:
  void Record(const httplib::Request& req, std::string rpc_method) {
    std::lock_guard lock(mutex_);
    seen_.push_back(Seen{req.method, std::move(rpc_method), req.headers, req.remote_port});
  }

  PostHandler on_post_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<Seen> seen_;
};

void Json(httplib::Response& res, const Message& message, const std::string& session = "") {
  if (!session.empty()) res.set_header("Mcp-Session-Id", session);
  res.set_content(SerializeMessage(message), "application/json");
}

void Stream(httplib::Response& res, std::string body, const std::string& session = "") {
  if (!session.empty()) res.set_header("Mcp-Session-Id", session);
  res.set_chunked_content_provider("text/event-stream",
                                   [body](std::size_t, httplib::DataSink& sink) {
                                     sink.write(body.data(), body.size());
                                     sink.done();
                                     return true;
                                   });
}

Message InitResult(const json::Value& id) {
  return MakeResult(id, {{"protocolVersion", "2025-11-25"},
                         {"capabilities", {{"tools", json::Value::object()}}},
                         {"serverInfo", {{"name", "fake-http"}, {"version", "1"}}}});
}

ServerConfig Config(const std::string& url) {
  ServerConfig server;
  server.key = "fake";
  server.type = ServerType::kHttp;
  server.url = url;
  server.headers = {{"Authorization", "Bearer t0ken"}};
  return server;
}

std::unique_ptr<Client> Connect(const std::string& url, bool notification_stream = false,
                                std::size_t max_bytes = kDefaultMaxMessageBytes) {
  ClientOptions options;
  options.http_notification_stream = notification_stream;
  options.max_message_bytes = max_bytes;
  options.request_timeout = milliseconds(20'000);
  auto client = Client::Connect(Config(url), options);
  EXPECT_TRUE(client.ok());
  return client.ok() ? std::move(client).value() : nullptr;
}

std::string Header(const httplib::Headers& headers, const std::string& name) {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

json::Value ListResult() { return {{"tools", json::Value::array()}}; }

TEST(HttpTransportTest, JsonAndSseAnswersWithSessionAndVersionHeaders) {
  FakeHttpServer server([](const Message& in, httplib::Response& res) {
    if (in.method == "initialize") {
      Stream(res, Sse("", "p0") + Sse(SerializeMessage(InitResult(in.id)), "e1"), "sess-1");
    } else if (in.method == "notifications/initialized") {
      res.status = 202;
    } else if (in.method == "tools/list") {
      Json(res, MakeResult(in.id, ListResult()));
    }
  });
  auto client = Connect(server.url());
  ASSERT_NE(client, nullptr);
  auto init = client->Initialize();
  ASSERT_TRUE(init.ok()) << init.error().Describe();
  EXPECT_EQ(init->server_info["name"], "fake-http");
  ASSERT_TRUE(client->ListAllTools().ok());
  client->Close();
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].rpc_method, "initialize");
  EXPECT_EQ(Header(seen[0].headers, "Accept"), "application/json, text/event-stream");
  EXPECT_EQ(Header(seen[0].headers, "Content-Type"), "application/json");
  EXPECT_EQ(Header(seen[0].headers, "Authorization"), "Bearer t0ken");
  EXPECT_EQ(Header(seen[0].headers, "Mcp-Session-Id"), "");
  EXPECT_EQ(Header(seen[0].headers, "MCP-Protocol-Version"), "");
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(Header(seen[i].headers, "Mcp-Session-Id"), "sess-1");
    EXPECT_EQ(Header(seen[i].headers, "MCP-Protocol-Version"), "2025-11-25");
  }
  EXPECT_EQ(seen[3].method, "DELETE");
  EXPECT_EQ(Header(seen[3].headers, "Mcp-Session-Id"), "sess-1");
}

// A request answered on an SSE stream the server closes after the response: the client
// reads the stream to its end, so the keep-alive connection carries the next requests
// (it used to cut the transfer at the response, which closed the connection every time).
TEST(HttpTransportTest, SseAnswersKeepTheConnectionForTheNextRequests) {
  FakeHttpServer server([](const Message& in, httplib::Response& res) {
    if (in.method == "initialize") {
      Stream(res, Sse(SerializeMessage(InitResult(in.id)), "e1"), "sess-1");
    } else if (in.method == "notifications/initialized") {
      res.status = 202;
    } else if (in.method == "tools/list") {
      Stream(res, Sse("", "p0") + Sse(SerializeMessage(MakeResult(in.id, ListResult())), "e1"));
    }
  });
  auto client = Connect(server.url());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Initialize().ok());
  constexpr int kLists = 10;
  for (int i = 0; i < kLists; ++i) ASSERT_TRUE(client->ListAllTools().ok()) << i;
  client->Close();
  std::set<int> ports;
  int lists = 0;
  for (const auto& seen : server.seen()) {
    if (seen.rpc_method != "tools/list") continue;
    ++lists;
    ports.insert(seen.remote_port);
  }
  EXPECT_EQ(lists, kLists);
  // One connection would do; a second may open while the first still reads a stream's end.
  EXPECT_LE(ports.size(), static_cast<std::size_t>(kLists / 2));
}

// This process's thread ids (the in-process server's, and the client's worker sending
// the request it is answering).
std::set<std::string> ThreadIds() {
  std::set<std::string> ids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    ids.insert(entry.path().filename().string());
  }
  return ids;
}

// Issue 41: a long-lived connection (serve's upstream: a re-list and a call per gated
// call) does not start a thread per request; sequential requests reuse a worker. Before,
// every request's worker was a new thread, which each tools/list saw in this process.
TEST(HttpTransportTest, SequentialRequestsReuseAWorkerThread) {
  std::mutex mutex;
  std::vector<std::set<std::string>> seen;
  FakeHttpServer server([&](const Message& in, httplib::Response& res) {
    if (in.method == "initialize") {
      Json(res, InitResult(in.id), "sess-1");
    } else if (in.method == "notifications/initialized") {
      res.status = 202;
    } else if (in.method == "tools/list") {
      {
        std::lock_guard<std::mutex> guard(mutex);
        seen.push_back(ThreadIds());
      }
      Json(res, MakeResult(in.id, ListResult()));
    }
  });
  auto client = Connect(server.url());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Initialize().ok());
  constexpr int kLists = 10;
  for (int i = 0; i < kLists; ++i) ASSERT_TRUE(client->ListAllTools().ok()) << i;
  client->Close();
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(kLists));
  std::set<std::string> all;
  for (const auto& ids : seen) all.insert(ids.begin(), ids.end());
  EXPECT_LT(all.size() - seen.front().size(), 3u) << "a new thread per request";
}

// Issue 41: serve re-lists before every call, and the page rarely changes. The HTTP
// reader keeps the last tools array as the stdio reader does: a page whose array is the
// same bytes is not checked again, a changed one is read whole, and what is delivered is
// the same either way.
TEST(HttpTransportTest, ARelistedPageEqualToTheLastOneIsNotCheckedAgain) {
  std::atomic<int> version{1};
  const auto tools = [&] {
    return json::Value::array({{{"name", "t" + std::to_string(version.load())}, {"inputSchema", {{"type", "object"}}}},
                               {{"name", "other"}, {"inputSchema", {{"type", "object"}}}}});
  };
  FakeHttpServer server([&](const Message& in, httplib::Response& res) {
    if (in.method == "tools/list") Stream(res, Sse(SerializeMessage(MakeResult(in.id, {{"tools", tools()}})), "e1"));
  });
  HttpTransport transport(Config(server.url()));
  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<Message> received;
  TransportCallbacks callbacks;
  callbacks.on_message = [&](Message message) {
    std::lock_guard lock(mutex);
    received.push_back(std::move(message));
    arrived.notify_all();
  };
  callbacks.on_request_failed = [](const json::Value&, Error) {};
  callbacks.on_closed = [](Error) {};
  callbacks.lean_tool_lists = [] { return true; };
  ASSERT_TRUE(transport.Start(callbacks).ok());
  const auto list = [&](int id) -> std::string {
    EXPECT_TRUE(transport.SendRequest(MakeRequest(id, "tools/list", json::Value::object()), {}).ok());
    std::unique_lock lock(mutex);
    EXPECT_TRUE(arrived.wait_for(lock, std::chrono::seconds(60), [&] { return received.size() == std::size_t(id); }));
    if (received.size() != std::size_t(id) || received.back().lean_tools == nullptr) return "";
    const LeanToolList& lean = *received.back().lean_tools;
    return std::string(lean.Bytes(lean.tools.at(0))) + "|" + std::to_string(lean.tools.size());
  };
  const std::string first = list(1);
  EXPECT_EQ(first, list(2));
  EXPECT_EQ(first, list(3));
  EXPECT_EQ(transport.tool_lists_reused(), 2u);
  version = 2;  // the page changed: read whole, and its new bytes delivered
  const std::string changed = list(4);
  EXPECT_NE(changed.find("\"t2\""), std::string::npos) << changed;
  EXPECT_EQ(transport.tool_lists_reused(), 2u);
  transport.Close();
}

// The drain after a response is bounded: a server that holds the stream open after the
// response sees the client cut it while the connection is still in use, not at its close.
TEST(HttpTransportTest, AStreamHeldOpenAfterItsResponseIsCut) {
  auto departed = std::make_shared<std::atomic<bool>>(false);
  FakeHttpServer server([departed](const Message& in, httplib::Response& res) {
    if (in.method == "initialize") {
      Json(res, InitResult(in.id));
    } else if (in.method == "notifications/initialized") {
      res.status = 202;
    } else if (in.method == "tools/list") {
      const std::string body = Sse(SerializeMessage(MakeResult(in.id, ListResult())), "e1");
      res.set_chunked_content_provider("text/event-stream", [body, departed](std::size_t, httplib::DataSink& sink) {
        sink.write(body.data(), body.size());
        // Keep-alive comments until the client is gone (bounded, so the test cannot hang).
        for (int i = 0; i < 2000 && sink.is_writable(); ++i) {
          sink.write(": keep-alive\n\n", 14);
          std::this_thread::sleep_for(milliseconds(5));
        }
        *departed = !sink.is_writable();
        sink.done();
        return true;
      });
    }
  });
  auto client = Connect(server.url());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Initialize().ok());
  ASSERT_TRUE(client->ListAllTools().ok());
  for (int i = 0; i < 2000 && !*departed; ++i) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_TRUE(*departed);  // before Close: the client cut the stream itself
  client->Close();
}

json::Value DiscoverResult() {
  return {{"resultType", "complete"},
          {"supportedVersions", {"2026-07-28"}},
          {"capabilities", {{"tools", json::Value::object()}}},
          {"_meta", {{"io.modelcontextprotocol/serverInfo", {{"name", "fake-modern"}, {"version", "1"}}}}}};
}

TEST(HttpTransportTest, ModernRequestsMirrorTheirBodyIntoHeadersAndKeepNoSession) {
  FakeHttpServer server([](const Message& in, httplib::Response& res) {
    if (in.method == "server/discover") {
      Json(res, MakeResult(in.id, DiscoverResult()), "sess-never-used");
    } else if (in.method == "tools/call") {
      Json(res, MakeResult(in.id, {{"resultType", "complete"}, {"content", json::Value::array()}}));
    }
  });
  auto client = Connect(server.url());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Discover().ok());
  json::Value tool = {{"name", "caf\u00e9"},
                      {"inputSchema", {{"type", "object"},
                                       {"properties", {{"region", {{"type", "string"}, {"x-mcp-header", "Region"}}},
                                                       {"empty", {{"type", "string"}, {"x-mcp-header", "Empty"}}}}}}}};
  json::Value arguments = {{"region", "us-west1"}, {"empty", ""}};
  ASSERT_TRUE(client->CallTool("caf\u00e9", arguments, milliseconds(0), &tool).ok());
  client->Close();
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 2u);  // no GET stream, no DELETE
  for (const auto& request : seen) {
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(Header(request.headers, "MCP-Protocol-Version"), "2026-07-28");
    EXPECT_EQ(Header(request.headers, "Mcp-Method"), request.rpc_method);
    EXPECT_EQ(Header(request.headers, "Mcp-Session-Id"), "");
  }
  EXPECT_EQ(Header(seen[1].headers, "Mcp-Name"), "=?base64?Y2Fmw6k=?=");
  EXPECT_EQ(Header(seen[1].headers, "Mcp-Param-Region"), "us-west1");
  // (An empty value is sent as "Mcp-Param-Empty:" too, but cpp-httplib's parser drops empty
  // fields; the conformance scenario http-custom-headers checks it with Node's parser.)
}

TEST(HttpTransportTest, AModernErrorInA400BodyIsTheRequestsAnswer) {
  FakeHttpServer server([](const Message& in, httplib::Response& res) {
    res.status = 400;
    res.set_content(SerializeMessage(MakeError(nullptr, -32022, "Unsupported protocol version",
                                               {{"supported", {"2099-01-01"}}, {"requested", "2026-07-28"}})),
                    "application/json");
    (void)in;
  });
  auto client = Connect(server.url());
  ASSERT_NE(client, nullptr);
  auto init = client->Discover();
  ASSERT_FALSE(init.ok());
  EXPECT_EQ(init.error().code, "server.protocol_version_mismatch");
  EXPECT_EQ(init.error().details["supported"], json::Value({"2099-01-01"}));
}

TEST(HttpTransportTest, NotificationAnsweredWithA200BodyIsAccepted) {
  FakeHttpServer server([](const Message& in, httplib::Response& res) {
    if (in.method == "initialize") {
      Json(res, InitResult(in.id));
    } else {
      res.set_content(R"({"jsonrpc":"2.0","result":{}})", "application/json");
    }
  });
  auto client = Connect(server.url());
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->Initialize().ok());
}

TEST(HttpTransportTest, ResumesAClosedStreamWithLastEventId) {
  FakeHttpServer server([](const Message& in, httplib::Response& res) {
    if (in.method == "initialize") {
      Json(res, InitResult(in.id), "s");
    } else if (in.method == "tools/list") {
      Stream(res, Sse("", "ev-7", 20));  // priming only, then the stream ends
    } else {
      res.status = 202;
    }
  });
  server.on_get = [](const httplib::Request& req, httplib::Response& res) {
    if (Header(req.headers, "Last-Event-ID") != "ev-7") {
      res.status = 405;
      return;
    }
    Stream(res, Sse(R"({"jsonrpc":"2.0","id":2,"result":{"tools":[]}})", "ev-8"));
  };
  auto client = Connect(server.url());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Initialize().ok());
  auto listed = client->ListAllTools();
  ASSERT_TRUE(listed.ok()) << listed.error().Describe();
  EXPECT_EQ(listed->pages.size(), 1u);
}

TEST(HttpTransportTest, StreamEndingWithoutResponseOrIdFailsTheRequest) {
  FakeHttpServer server([](const Message& in, httplib::Response& res) {
    if (in.method == "initialize") {
      Json(res, InitResult(in.id));
    } else if (in.method == "tools/call") {
      Stream(res, ": nothing here\n\n");
    } else {
      res.status = 202;
    }
  });
  auto client = Connect(server.url());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Initialize().ok());
  auto call = client->CallTool("t", json::Value::object());
  ASSERT_FALSE(call.ok());
  EXPECT_EQ(call.error().code, "mcp.stream_ended");
}

TEST(HttpTransportTest, EndedSessionIsSessionExpired) {
  struct Answer {
    int status;
    std::string body;
    std::string cause;
  };
  const std::vector<Answer> answers = {
      {404, "", "mcp.session_expired"},
      {400, R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"No valid session ID provided"},"id":null})",
       "mcp.session_expired"},
  };
  for (const Answer& answer : answers) {
    std::atomic<bool> ended{false};
    FakeHttpServer server([&](const Message& in, httplib::Response& res) {
      if (in.method == "initialize") {
        Json(res, InitResult(in.id), "sess-9");
      } else if (ended) {
        res.status = answer.status;
        res.set_content(answer.body, "application/json");
      } else {
        res.status = 202;
      }
    });
    auto client = Connect(server.url());
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->Initialize().ok());
    ended = true;
    auto listed = client->ListAllTools();
    ASSERT_FALSE(listed.ok());
    EXPECT_EQ(listed.error().code, "mcp.disconnected") << answer.status;
    EXPECT_EQ(listed.error().details["cause"], answer.cause) << answer.status;
  }
}

TEST(HttpTransportTest, OtherBadRequestIsAnHttpStatus) {
  FakeHttpServer server([](const Message& in, httplib::Response& res) {
    if (in.method == "initialize") {
      Json(res, InitResult(in.id), "sess-3");
    } else if (in.method == "tools/list") {
      res.status = 400;
      res.set_content("Bad Request: unsupported protocol version", "text/plain");
    } else {
      res.status = 202;
    }
  });
  auto client = Connect(server.url());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Initialize().ok());
  auto listed = client->ListAllTools();
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().code, "mcp.http_status");
  EXPECT_EQ(listed.error().details["status"], 400);
  EXPECT_TRUE(client->connection().connected());
}

TEST(HttpTransportTest, NotFoundWithoutSessionIsAnHttpStatus) {
  FakeHttpServer server([](const Message&, httplib::Response& res) { res.status = 404; });
  auto client = Connect(server.url());
  ASSERT_NE(client, nullptr);
  auto init = client->Initialize();
  ASSERT_FALSE(init.ok());
  EXPECT_EQ(init.error().code, "server.connect_failed");
  EXPECT_EQ(init.error().details["cause"], "mcp.http_status");
  EXPECT_EQ(init.error().details["status"], 404);
}

TEST(HttpTransportTest, RedirectsAreNeverFollowedSoConfiguredHeadersStayWithTheOrigin) {
  // The redirect target would answer properly; it must never be asked anything.
  FakeHttpServer target([](const Message& in, httplib::Response& res) { Json(res, InitResult(in.id)); });
  const std::string port = target.url().substr(std::string("http://127.0.0.1:").size());
  const std::vector<std::string> elsewhere = {target.url(),                    // another port
                                              "http://localhost:" + port};     // another host
  for (const std::string& location : elsewhere) {
    for (int status : {301, 302, 303, 307, 308}) {
      SCOPED_TRACE(location + " " + std::to_string(status));
      FakeHttpServer origin([&](const Message&, httplib::Response& res) {
        res.status = status;
        res.set_header("Location", location);
      });
      ServerConfig config = Config(origin.url());
      config.headers.emplace_back("X-Api-Key", "k3y");
      ClientOptions options;
      options.http_notification_stream = false;
      options.request_timeout = milliseconds(20'000);
      auto client = Client::Connect(config, options);
      ASSERT_TRUE(client.ok());
      auto init = (*client)->Initialize();
      ASSERT_FALSE(init.ok());
      EXPECT_EQ(init.error().details["cause"], "mcp.http_status");
      EXPECT_EQ(init.error().details["status"], status);
      (*client)->Close();
      ASSERT_EQ(origin.seen().size(), 1u);
      EXPECT_EQ(Header(origin.seen()[0].headers, "X-Api-Key"), "k3y");  // the origin got them
    }
  }
  EXPECT_TRUE(target.seen().empty()) << "a redirect was followed";
}

TEST(HttpTransportTest, OversizedBodiesFailTheConnection) {
  for (bool sse : {false, true}) {
    FakeHttpServer server([sse](const Message& in, httplib::Response& res) {
      if (in.method == "initialize") {
        Message big = MakeResult(in.id, {{"protocolVersion", std::string(8192, 'v')}});
        if (sse) {
          Stream(res, Sse(SerializeMessage(big)));
        } else {
          Json(res, big);
        }
      }
    });
    auto client = Connect(server.url(), false, 4096);
    ASSERT_NE(client, nullptr);
    auto init = client->Initialize();
    ASSERT_FALSE(init.ok());
    EXPECT_EQ(init.error().details["cause"], "mcp.disconnected") << sse;
  }
}

TEST(HttpTransportTest, NotificationStreamDeliversServerNotificationsAndToleratesRefusal) {
  FakeHttpServer server([](const Message& in, httplib::Response& res) {
    if (in.method == "initialize") {
      Json(res, InitResult(in.id), "s2");
    } else {
      res.status = 202;
    }
  });
  std::atomic<int> gets{0};
  server.on_get = [&](const httplib::Request&, httplib::Response& res) {
    if (gets++ > 0) {
      res.status = 405;  // one stream, then no more: tolerated
      return;
    }
    Stream(res, Sse("", "g0", 10) +
                    Sse(SerializeMessage(MakeNotification("notifications/tools/list_changed")),
                        "g1") +
                    Sse(SerializeMessage(MakeRequest("r1", "roots/list")), "g2"));
  };
  auto client = Connect(server.url(), /*notification_stream=*/true);
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Initialize().ok());
  Connection& connection = client->connection();
  for (int i = 0; i < 200 && connection.EventsSince(0).size() < 2; ++i) {
    connection.WaitForEventAfter(connection.LastSequence(), milliseconds(50));
  }
  auto events = connection.EventsSince(0);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].method, "notifications/tools/list_changed");
  EXPECT_EQ(events[1].kind, EventKind::kServerRequest);
  EXPECT_EQ(events[1].method, "roots/list");
  // The refusal of roots/list is POSTed back (a response: no JSON-RPC method).
  auto refused = [&server] {
    for (const auto& seen : server.seen()) {
      if (seen.method == "POST" && seen.rpc_method.empty()) return true;
    }
    return false;
  };
  for (int i = 0; i < 200 && !refused(); ++i) std::this_thread::sleep_for(milliseconds(50));
  EXPECT_TRUE(refused());
  client->Close();
}

TEST(HttpTransportTest, ConnectionRefusedFailsInitialize) {
  const int port = udon::testing::FreeLoopbackPort();  // nothing listens there
  auto client = Connect("http://127.0.0.1:" + std::to_string(port) + "/mcp");
  ASSERT_NE(client, nullptr);
  auto init = client->Initialize();
  ASSERT_FALSE(init.ok());
  EXPECT_EQ(init.error().code, "server.connect_failed");
}

// A 401 or 403 refuses the credential before anything ran: its challenge's error and scope
// reach the caller (never the header itself), and a 403 insufficient_scope becomes the
// refusal that names the login with that scope.
TEST(HttpTransportTest, ARefusedCredentialCarriesItsChallengeAndNamesTheLogin) {
  for (int status : {401, 403}) {
    SCOPED_TRACE(status);
    FakeHttpServer server([&](const Message&, httplib::Response& res) {
      res.status = status;
      res.set_header("WWW-Authenticate", status == 401 ? R"(Bearer error="invalid_token", scope="mcp:tools")"
                                                       : R"(Bearer error="insufficient_scope", scope="mcp:tools mcp:admin")");
      res.set_content(R"({"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"no"}})", "application/json");
    });
    ClientOptions options;
    options.http_notification_stream = false;
    auto client = Client::Connect(Config(server.url()), options);
    ASSERT_TRUE(client.ok());
    auto init = (*client)->Initialize();
    ASSERT_FALSE(init.ok());
    EXPECT_EQ(RefusedCredentialStatus(init.error()), status);
    EXPECT_EQ(init.error().details["authError"], status == 401 ? "invalid_token" : "insufficient_scope");
    const Error refused = RefusedCredentialError(init.error(), "remote");
    EXPECT_EQ(refused.code, status == 401 ? "auth.token_rejected" : "auth.scope_required");
    EXPECT_EQ(refused.details["command"], status == 401 ? "udon-mcp login remote"
                                                        : "udon-mcp login remote --scope 'mcp:tools mcp:admin'");
    (*client)->Close();
  }
}

// A hostile server's scope must not write the command the person is told to run.
TEST(HttpTransportTest, AScopeWithAQuoteOrShellCharactersIsNeverPutIntoTheLoginCommand) {
  for (const char* scope : {"x' ; rm -rf ~ #", "a`id`", "a$(id)", "a\nb"}) {
    Error refused = udon::MakeError("mcp.http_status", "403");
    refused.details["status"] = 403;
    refused.details["authError"] = "insufficient_scope";
    refused.details["scope"] = scope;
    const Error error = RefusedCredentialError(refused, "remote");
    EXPECT_EQ(error.code, "auth.scope_required");
    EXPECT_EQ(error.details["command"], "udon-mcp login remote") << scope;
    EXPECT_EQ(error.message.find(scope), std::string::npos) << error.message;
    EXPECT_FALSE(error.details.contains("scope"));
  }
  EXPECT_EQ(LoginCommand("remote", "mcp:tools mcp:admin"), "udon-mcp login remote --scope 'mcp:tools mcp:admin'");
}


// Issue 41: a request its caller waits for runs its HTTP exchange on the caller's thread.
// A Connection over an HttpTransport, without the handshake (the fake server needs none).
struct CallerExchange {
  explicit CallerExchange(const std::string& url)
      : connection(std::make_unique<HttpTransport>(Config(url), HttpOptions{})) {
    EXPECT_TRUE(connection.Start().ok());
  }
  Connection connection;
};

std::size_t ThreadCount() { return ThreadIds().size(); }

// A stream that sends `first` and then holds the request open until the client leaves it,
// or `bound` passes (then *expired): what a hanging server does.
void HangingStream(httplib::Response& res, std::string first, std::shared_ptr<std::atomic<bool>> departed,
                   std::shared_ptr<std::atomic<bool>> expired, milliseconds bound = milliseconds(30'000)) {
  res.set_chunked_content_provider("text/event-stream", [=](std::size_t, httplib::DataSink& sink) {
    sink.write(first.data(), first.size());
    const auto until = std::chrono::steady_clock::now() + bound;
    while (sink.is_writable() && std::chrono::steady_clock::now() < until) {
      sink.write(": keep-alive\n\n", 14);
      std::this_thread::sleep_for(milliseconds(5));
    }
    *departed = !sink.is_writable();
    *expired = !*departed;
    sink.done();
    return true;
  });
}

// The notification ahead of the answer is delivered before it, on the caller's own thread
// (no hand-off to a worker and back), and no thread is started for any exchange.
TEST(HttpTransportTest, AWaitedRequestRunsOnItsCallersThreadWithItsNotificationsInOrder) {
  FakeHttpServer server([](const Message& in, httplib::Response& res) {
    const Message progress = MakeNotification("notifications/progress", {{"progressToken", 1}, {"progress", 1}});
    // Of known length, not chunked: the stream ends with its answer, so no drain is handed
    // to a worker (a chunked end read after the answer would start one, by timing).
    res.set_content(Sse(SerializeMessage(progress), "e1") + Sse(SerializeMessage(MakeResult(in.id, ListResult())), "e2"),
                    "text/event-stream");
  });
  httplib::Client probe("127.0.0.1", std::stoi(server.url().substr(17, 5)));
  ASSERT_TRUE(probe.Get("/mcp"));  // the server's threads are all up
  const std::size_t threads_before = ThreadCount();
  CallerExchange exchange(server.url());
  std::mutex mutex;
  std::set<std::thread::id> delivered_on;
  exchange.connection.AddEventObserver([&](const Event&) {
    std::lock_guard lock(mutex);
    delivered_on.insert(std::this_thread::get_id());
  });
  for (int i = 0; i < 5; ++i) {
    auto response = exchange.connection.Request("tools/list", json::Value::object(), milliseconds(20'000));
    ASSERT_TRUE(response.ok()) << response.error().Describe();
    EXPECT_EQ(response->sequence_at_response, response->sequence_at_send + 1) << "the notification came first";
  }
  EXPECT_EQ(ThreadCount(), threads_before) << "a thread was started for an exchange";
  std::lock_guard lock(mutex);
  EXPECT_EQ(delivered_on, std::set<std::thread::id>{std::this_thread::get_id()});
}

// A hanging server: the caller's deadline ends the transfer (the server sees it leave), the
// cause is mcp.timeout as before, and the connection serves the next request.
TEST(HttpTransportTest, AHangingAnswerEndsAtTheCallersDeadlineAndTheConnectionStaysUsable) {
  auto departed = std::make_shared<std::atomic<bool>>(false);
  auto expired = std::make_shared<std::atomic<bool>>(false);
  std::atomic<int> calls{0};
  std::atomic<int> cancelled{0};
  FakeHttpServer server([&](const Message& in, httplib::Response& res) {
    if (in.method == "notifications/cancelled") {
      ++cancelled;
      res.status = 202;
    } else if (calls++ == 0) {
      HangingStream(res, Sse("", "p0"), departed, expired);
    } else {
      Json(res, MakeResult(in.id, ListResult()));
    }
  });
  CallerExchange exchange(server.url());
  auto hung = exchange.connection.Request("tools/list", json::Value::object(), milliseconds(300));
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.error().code, "mcp.timeout");
  EXPECT_EQ(cancelled.load(), 1);
  auto next = exchange.connection.Request("tools/list", json::Value::object(), milliseconds(20'000));
  EXPECT_TRUE(next.ok()) << next.error().Describe();
  for (int i = 0; i < 2000 && !*departed && !*expired; ++i) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_TRUE(*departed) << "the hanging transfer was not ended";
}

// Close from another thread ends a caller's transfer at once: the caller gets mcp.closed
// long before its own deadline, and the server sees the client leave.
TEST(HttpTransportTest, CloseFromAnotherThreadEndsACallersTransfer) {
  auto departed = std::make_shared<std::atomic<bool>>(false);
  auto expired = std::make_shared<std::atomic<bool>>(false);
  std::atomic<bool> streaming{false};
  FakeHttpServer server([&](const Message&, httplib::Response& res) {
    streaming = true;
    HangingStream(res, Sse("", "p0"), departed, expired);
  });
  CallerExchange exchange(server.url());
  std::optional<Result<Response>> result;
  std::thread caller([&] {
    result = exchange.connection.Request("tools/list", json::Value::object(), milliseconds(60'000));
  });
  for (int i = 0; i < 4000 && !streaming; ++i) std::this_thread::sleep_for(milliseconds(5));
  exchange.connection.Close();
  caller.join();
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(result->ok());
  EXPECT_EQ(result->error().code, "mcp.closed");
  for (int i = 0; i < 2000 && !*departed && !*expired; ++i) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_TRUE(*departed);
  EXPECT_FALSE(*expired);
}

// The connection failing (another request finds the session ended) ends a caller's
// transfer at once with mcp.disconnected, not at its deadline.
TEST(HttpTransportTest, TheConnectionFailingEndsACallersTransfer) {
  auto departed = std::make_shared<std::atomic<bool>>(false);
  auto expired = std::make_shared<std::atomic<bool>>(false);
  std::atomic<bool> streaming{false};
  FakeHttpServer server([&](const Message& in, httplib::Response& res) {
    if (in.method == "initialize") {
      Json(res, InitResult(in.id), "sess-1");
    } else if (in.method == "tools/call") {
      streaming = true;
      HangingStream(res, Sse("", "p0"), departed, expired, milliseconds(15'000));
    } else {
      res.status = 404;  // the session is gone
    }
  });
  CallerExchange exchange(server.url());
  ASSERT_TRUE(exchange.connection.Request("initialize", json::Value::object()).ok());
  std::optional<Result<Response>> result;
  std::thread caller([&] {
    result = exchange.connection.Request("tools/call", json::Value::object(), milliseconds(60'000));
  });
  for (int i = 0; i < 4000 && !streaming; ++i) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_FALSE(exchange.connection.Request("tools/list", json::Value::object()).ok());
  caller.join();
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(result->ok());
  EXPECT_EQ(result->error().code, "mcp.disconnected");
  EXPECT_FALSE(*expired) << "the caller's transfer ran on after the connection failed";
  exchange.connection.Close();
}

// A server's ping inside the answer's stream is answered, and the answer arrives while
// this server still holds the reply's POST: the reply is posted by a worker, never on the
// caller's thread (nor on the thread reading the stream), which it would have stalled
// until the server gave up waiting for the call to end.
TEST(HttpTransportTest, APingInsideTheAnswerIsAnsweredOffTheCallersThread) {
  std::mutex mutex;
  std::condition_variable changed;
  bool replied = false;
  bool call_over = false;
  bool reply_held_to_its_bound = false;
  FakeHttpServer server([&](const Message& in, httplib::Response& res) {
    if (in.IsResponse()) {  // the reply to the ping: taken once the call is over
      std::unique_lock lock(mutex);
      replied = true;
      changed.notify_all();
      reply_held_to_its_bound = !changed.wait_for(lock, std::chrono::seconds(5), [&] { return call_over; });
      res.status = 202;
      return;
    }
    const json::Value id = in.id;
    res.set_chunked_content_provider("text/event-stream", [&, id](std::size_t, httplib::DataSink& sink) {
      const std::string ping = Sse(SerializeMessage(MakeRequest(7, "ping", nullptr)), "e1");
      sink.write(ping.data(), ping.size());
      {
        std::unique_lock lock(mutex);
        changed.wait_for(lock, std::chrono::seconds(20), [&] { return replied; });
      }
      const std::string answer = Sse(SerializeMessage(MakeResult(id, ListResult())), "e2");
      sink.write(answer.data(), answer.size());
      sink.done();
      return true;
    });
  });
  CallerExchange exchange(server.url());
  auto response = exchange.connection.Request("tools/list", json::Value::object(), milliseconds(20'000));
  {
    std::lock_guard lock(mutex);
    call_over = true;
    changed.notify_all();
  }
  ASSERT_TRUE(response.ok()) << response.error().Describe();
  exchange.connection.Close();  // the worker posting the reply is done
  EXPECT_FALSE(reply_held_to_its_bound) << "the reply stalled the call";
  const auto events = exchange.connection.EventsSince(response->sequence_at_send);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().kind, EventKind::kPing);
  EXPECT_LE(events.front().sequence, response->sequence_at_response);
}

}  // namespace
}  // namespace udon::mcp
