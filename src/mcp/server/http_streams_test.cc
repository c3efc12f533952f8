// Open streams and the HTTP server's threads (issue #31): a stream that mostly waits must
// not hold a thread the next request needs.
#include <memory>
#include <string>
#include <vector>

#include "mcp/server/http_server_test_fixture.h"

namespace udon::mcp::http_test {
namespace {

class HttpStreamsTest : public HttpServerTest {
 protected:
  // The JSON-RPC answer of a legacy request within `session` (answered as SSE), else null.
  Value AnswerIn(const Message& message, const std::string& session) {
    auto result = Post(message, session);
    if (!result || result->status != 200) return nullptr;
    auto events = Events(result->body);
    return events.empty() ? Value() : events.back();
  }
  // Opens a legacy session's GET stream and waits for its priming event.
  std::unique_ptr<RawConnection> OpenGetStream(const std::string& session) {
    auto stream = std::make_unique<RawConnection>(port_);
    if (!stream->connected() || !stream->Send("GET", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}}) ||
        !stream->ReadUntil("retry:")) {
      return nullptr;
    }
    return stream;
  }
};

// At 64 SDK sessions serve stopped answering: each session's GET stream held one of the 64
// connection threads. With the defaults (as serve), 256 sessions hold their GET streams
// open and a newcomer, and every one of them, is still served.
TEST_F(HttpStreamsTest, TwoHundredFiftySixOpenGetStreamsLeaveEverySessionServed) {
  Start();
  constexpr int kSessions = 256;
  std::vector<std::string> sessions;
  std::vector<std::unique_ptr<RawConnection>> streams;
  for (int i = 0; i < kSessions; ++i) {
    sessions.push_back(Initialize());
    ASSERT_FALSE(sessions.back().empty()) << i;
    streams.push_back(OpenGetStream(sessions.back()));
    ASSERT_NE(streams.back(), nullptr) << i;
  }
  const std::string newcomer = Initialize();
  ASSERT_FALSE(newcomer.empty());
  const Value list = AnswerIn(MakeRequest(2, "tools/list"), newcomer);
  EXPECT_EQ(list["result"]["tools"][0]["name"], "t1");
  const Message call = MakeRequest(3, "tools/call", {{"name", "t2"}, {"arguments", Value::object()}});
  EXPECT_TRUE(AnswerIn(call, newcomer).contains("result"));
  for (int i = 0; i < kSessions; ++i) {
    EXPECT_TRUE(AnswerIn(call, sessions[i]).contains("result")) << i;
  }
}

// Streams beyond max_streams are refused (503) instead of holding a thread that counts.
TEST_F(HttpStreamsTest, GetStreamsBeyondTheLimitAre503AndRequestsStillServed) {
  HttpServerOptions options;
  options.threads = 2;
  options.max_streams = 3;
  Start(options);
  std::vector<std::unique_ptr<RawConnection>> streams;
  for (int i = 0; i < 3; ++i) {
    streams.push_back(OpenGetStream(Initialize()));
    ASSERT_NE(streams.back(), nullptr) << i;
  }
  const std::string session = Initialize();
  RawConnection refused(port_);
  ASSERT_TRUE(refused.Send("GET", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}}));
  ASSERT_TRUE(refused.ReadUntil("\r\n"));
  EXPECT_NE(refused.received().find(" 503 "), std::string::npos);
  EXPECT_EQ(StatusIn(session), 200);
}

// Listen streams are counted out of both pools' threads likewise.
TEST_F(HttpDepartureTest, ListenStreamsBeyondTheThreadsLeaveCallsServed) {
  HttpServerOptions options;
  options.threads = 2;
  options.max_streams = 8;
  server_->AddTool({{"name", "quick"}, {"description", "d"}, {"inputSchema", {{"type", "object"}}}},
                   [](const Value&, ToolContext&) { return ToolOutcome{{{"content", Value::array()}}, {}}; });
  Start(options);
  std::vector<std::unique_ptr<RawConnection>> streams;
  for (int i = 0; i < 8; ++i) {
    streams.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_TRUE(Listen(*streams.back(), "l" + std::to_string(i))) << i;
  }
  auto [status, body] = Answer(ModernHeaders("tools/call", "quick"),
                               MakeRequest(1, "tools/call", ModernParams({{"name", "quick"}})));
  EXPECT_EQ(status, 200);
  EXPECT_TRUE(body.contains("result"));
  RawConnection refused(port_);
  ASSERT_TRUE(refused.Send("POST", ModernHeaders("subscriptions/listen"), ListenBody("l9")));
  ASSERT_TRUE(refused.ReadUntil("\r\n"));
  EXPECT_NE(refused.received().find(" 503 "), std::string::npos);
}

}  // namespace
}  // namespace udon::mcp::http_test
