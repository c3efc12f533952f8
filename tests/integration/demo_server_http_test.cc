// The demo server over Streamable HTTP as a real process: faults whose effect depends on
// the transport (streams, sessions, process death).
#include <httplib.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "demo_http.h"
#include "line_client.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

TEST(DemoServerHttp, BindsLoopbackAndAnswersLocalhost) {
  HttpDemoServer server;
  ASSERT_GT(server.port(), 0) << server.process().Output();
  RawHttpPeer peer(server.port());
  Json init = peer.Initialize();
  EXPECT_EQ(init["result"]["serverInfo"]["name"], "udon-mcp-demo-server");
  EXPECT_FALSE(peer.session().empty());
  auto list = peer.Post(Request(1, "tools/list"));
  EXPECT_EQ(list.status, 200);
  ASSERT_EQ(list.messages.size(), 1u);
  EXPECT_EQ(list.messages[0]["result"]["tools"].size(), 7u);
}

TEST(DemoServerHttp, ListChangedAfterListTravelsOnTheGetStream) {
  HttpDemoServer server({"--fault", "list-changed-after-list"});
  ASSERT_GT(server.port(), 0);
  RawHttpPeer peer(server.port());
  peer.Initialize();
  std::mutex mutex;
  std::condition_variable cv;
  std::string received;
  httplib::Client stream("127.0.0.1", server.port());
  httplib::Headers headers = {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", peer.session()}};
  std::thread reader([&] {
    stream.Get("/mcp", headers, [&](const char* data, size_t size) {
      std::lock_guard lock(mutex);
      received.append(data, size);
      cv.notify_all();
      return received.find("list_changed") == std::string::npos;
    });
  });
  {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return !received.empty(); });
  }
  auto list = peer.Post(Request(1, "tools/list"));
  EXPECT_EQ(list.messages.size(), 1u);  // the POST stream carries only the answer
  reader.join();
  auto messages = SseMessages(received);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0]["method"], "notifications/tools/list_changed");
}

TEST(DemoServerHttp, AfterFirstListFaultsReachLaterSessions) {
  HttpDemoServer server({"--fault", "server-version@after-first-list=9",
                         "--fault", "description@after-first-list"});
  ASSERT_GT(server.port(), 0);
  RawHttpPeer capture(server.port());
  EXPECT_EQ(capture.Initialize()["result"]["serverInfo"]["version"], "0.1.0");
  Json before = capture.Post(Request(1, "tools/list")).messages.at(0)["result"]["tools"][0];
  RawHttpPeer verify(server.port());
  EXPECT_EQ(verify.Initialize()["result"]["serverInfo"]["version"], "9");
  Json after = verify.Post(Request(1, "tools/list")).messages.at(0)["result"]["tools"][0];
  EXPECT_NE(before["description"], after["description"]);
}

TEST(DemoServerHttp, ServerRequestDuringCallPrecedesTheAnswerOnThePostStream) {
  HttpDemoServer server({"--fault", "sampling-during-call"});
  ASSERT_GT(server.port(), 0);
  RawHttpPeer peer(server.port());
  peer.Initialize();
  auto answer = peer.Post(ToolCallRequest(1, "analyze_text", {{"text", "x"}}));
  ASSERT_EQ(answer.messages.size(), 2u);
  EXPECT_EQ(answer.messages[0]["method"], "sampling/createMessage");
  EXPECT_EQ(answer.messages[1]["id"], 1);
  auto reply = peer.Post({{"jsonrpc", "2.0"}, {"id", answer.messages[0]["id"]},
                          {"error", {{"code", -32601}, {"message", "no"}}}});
  EXPECT_EQ(reply.status, 202);
}

TEST(DemoServerHttp, CrashDuringCallDropsTheConnectionAfterLogging) {
  TempDir dir;
  HttpDemoServer server({"--fault", "crash-during-call", "--log-requests", dir.File("log")});
  ASSERT_GT(server.port(), 0);
  RawHttpPeer peer(server.port());
  peer.Initialize();
  auto answer = peer.Post(ToolCallRequest(1, "analyze_text", {{"text", "x"}}));
  EXPECT_TRUE(answer.messages.empty() || answer.messages.back().value("id", Json()) != 1);
  EXPECT_NE(dir.Read("log").find(R"({"method":"tools/call","tool":"analyze_text"})"),
            std::string::npos);
  server.process().Stop();
}

TEST(DemoServerHttp, JsonResponseModeAnswersWithJson) {
  HttpDemoServer server({"--response-mode", "json", "--page-size", "3"});
  ASSERT_GT(server.port(), 0);
  RawHttpPeer peer(server.port());
  peer.Initialize();
  auto list = peer.Post(Request(1, "tools/list"));
  ASSERT_EQ(list.messages.size(), 1u);
  EXPECT_EQ(list.messages[0]["result"]["tools"].size(), 3u);
  EXPECT_TRUE(list.messages[0]["result"].contains("nextCursor"));
}

}  // namespace
}  // namespace udon::testing
