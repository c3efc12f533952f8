// Keep-alive connections (mcp/server/kept_connections.h): reused by the clients hosts run,
// served again after they idled without holding a thread meanwhile, and closed when a body
// was left unread.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "mcp/server/http_server_test_fixture.h"
#include "mcp/server/kept_connections.h"

namespace udon::mcp::http_test {
namespace {

std::string ListBody(int id) { return SerializeMessage(MakeRequest(id, "tools/list", ModernParams())); }

// Node's fetch (undici, in every host built on the TypeScript SDK) subtracts 2 s from the
// server's Keep-Alive timeout hint and closes the connection after the response when
// nothing is left: with the former hint of 2 s, every call paid a new TCP connection.
TEST_F(HttpModernTest, TheKeepAliveHintOutlastsWhatNodesFetchSubtracts) {
  Start();
  RawConnection connection(port_);
  ASSERT_TRUE(connection.Send("POST", ModernHeaders("tools/list"), ListBody(1)));
  ASSERT_TRUE(connection.ReadUntil("\"id\":1"));
  const std::string& answer = connection.received();
  const auto hint = answer.find("Keep-Alive: timeout=");
  ASSERT_NE(hint, std::string::npos) << answer;
  EXPECT_GT(std::atoi(answer.c_str() + hint + 20), 2) << answer;
}

// One connection thread: an idle kept connection must not hold it, or the second client
// waits until the first one's keep-alive ends (and that connection is then gone).
TEST_F(HttpModernTest, AnIdleKeptConnectionHoldsNoThreadAndIsServedAgain) {
  HttpServerOptions options;
  options.threads = 1;
  Start(options);
  RawConnection first(port_);
  ASSERT_TRUE(first.Send("POST", ModernHeaders("tools/list"), ListBody(1)));
  ASSERT_TRUE(first.ReadUntil("\"id\":1"));
  RawConnection second(port_);
  ASSERT_TRUE(second.Send("POST", ModernHeaders("tools/list"), ListBody(2)));
  ASSERT_TRUE(second.ReadUntil("\"id\":2"));
  // The first connection was kept meanwhile: its next request is served on it.
  ASSERT_TRUE(first.Send("POST", ModernHeaders("tools/list"), ListBody(3)));
  EXPECT_TRUE(first.ReadUntil("\"id\":3")) << first.received();
  EXPECT_EQ(first.received().find("Connection: close"), std::string::npos);
}

// From the attacker's side: a refused request's body holds a second request. The body was
// never read, so the connection ends with the answer, whatever the body's size.
TEST_F(HttpDepartureTest, ARefusedBodyEndsItsConnection) {
  HttpServerOptions options;
  options.bearer_token = "s3cret-token-value";
  Start(options);
  std::string body;
  while (body.size() < 3000) body += "GET /smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  RawConnection connection(port_);
  ASSERT_TRUE(connection.Send("POST", ModernHeaders("tools/list"), body));
  connection.ReadUntil("HTTP/1.1 4");
  connection.ReadUntil("never sent");  // the rest, to the end of the stream
  EXPECT_NE(connection.received().find(" 401 "), std::string::npos);
  EXPECT_NE(connection.received().find("Connection: close"), std::string::npos) << connection.received();
  EXPECT_EQ(connection.received().find("HTTP/1.1", 1), std::string::npos) << connection.received();
}

// A legacy answer of one message: the priming event and the message in one chunk (one
// write, one wake-up of the client), the same bytes as before.
TEST_F(HttpServerTest, ThePrimingEventAndASingleAnswerShareOneChunk) {
  Start();
  const std::string session = Initialize();
  ASSERT_FALSE(session.empty());
  RawConnection connection(port_);
  httplib::Headers headers = Headers(session);
  headers.emplace("MCP-Protocol-Version", "2025-11-25");
  ASSERT_TRUE(connection.Send("POST", headers, SerializeMessage(MakeRequest(4, "tools/call", {{"name", "t2"}}))));
  ASSERT_TRUE(connection.ReadUntil("\r\n0\r\n\r\n"));
  const std::string& raw = connection.received();
  const std::string priming = "retry: 1000\ndata: \n\n";
  const auto at = raw.find(priming);
  ASSERT_NE(at, std::string::npos) << raw;
  EXPECT_EQ(raw.compare(at + priming.size(), 4, "id: "), 0) << raw;  // no chunk boundary between
}

// IdleConnections alone, on socket pairs.
class IdleConnectionsTest : public ::testing::Test {
 protected:
  struct Pair {
    int parked = -1;
    int peer = -1;
  };
  Pair MakePair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    peers_.push_back(fds[1]);
    return {fds[0], fds[1]};
  }
  // Whether the parked end was closed: the peer reads the end of the stream.
  static bool PeerSeesClose(int peer) {
    timeval timeout{60, 0};  // a read that never ends fails the test instead of hanging it
    setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    char byte;
    return ::recv(peer, &byte, 1, 0) == 0;
  }
  void TearDown() override {
    for (int fd : peers_) ::close(fd);
  }
  std::vector<int> peers_;
};

TEST_F(IdleConnectionsTest, AReadableSocketIsHandedBackWithItsBudget) {
  std::atomic<int> resumed_socket{-1};
  std::atomic<std::size_t> resumed_budget{0};
  IdleConnections idle(std::chrono::hours(1), 8, [&](int socket, std::size_t remaining) {
    resumed_budget = remaining;
    resumed_socket = socket;
  });
  const Pair pair = MakePair();
  ASSERT_TRUE(idle.Park(pair.parked, 41));
  EXPECT_EQ(idle.parked(), 1u);
  ASSERT_EQ(::send(pair.peer, "x", 1, MSG_NOSIGNAL), 1);
  ASSERT_TRUE(Eventually([&] { return resumed_socket.load() == pair.parked; }));
  EXPECT_EQ(resumed_budget.load(), 41u);
  EXPECT_EQ(idle.parked(), 0u);
  ::close(pair.parked);  // handed over: the resumer's to close
}

TEST_F(IdleConnectionsTest, BeyondCapacityTheLongestIdleIsClosed) {
  IdleConnections idle(std::chrono::hours(1), 1, [](int socket, std::size_t) { ::close(socket); });
  const Pair older = MakePair();
  const Pair newer = MakePair();
  ASSERT_TRUE(idle.Park(older.parked, 1));
  ASSERT_TRUE(idle.Park(newer.parked, 1));
  EXPECT_TRUE(PeerSeesClose(older.peer));
  EXPECT_EQ(idle.parked(), 1u);
}

TEST_F(IdleConnectionsTest, AnIdleSocketIsClosedAfterTheTimeout) {
  IdleConnections idle(std::chrono::milliseconds(1), 8, [](int socket, std::size_t) { ::close(socket); });
  const Pair pair = MakePair();
  ASSERT_TRUE(idle.Park(pair.parked, 1));
  EXPECT_TRUE(PeerSeesClose(pair.peer));
  EXPECT_TRUE(Eventually([&] { return idle.parked() == 0; }));
}

TEST_F(IdleConnectionsTest, CloseEndsEveryParkedSocketAndRefusesMore) {
  IdleConnections idle(std::chrono::hours(1), 8, [](int socket, std::size_t) { ::close(socket); });
  const Pair a = MakePair();
  const Pair b = MakePair();
  ASSERT_TRUE(idle.Park(a.parked, 1));
  ASSERT_TRUE(idle.Park(b.parked, 1));
  idle.Close();
  EXPECT_TRUE(PeerSeesClose(a.peer));
  EXPECT_TRUE(PeerSeesClose(b.peer));
  const Pair late = MakePair();
  EXPECT_FALSE(idle.Park(late.parked, 1));
  ::close(late.parked);
}

// ConnectionStream's gathered writes, on a socket pair: what the client could read when.
class ConnectionStreamTest : public IdleConnectionsTest {
 protected:
  static bool PeerHasBytes(int peer) {
    pollfd fd{peer, POLLIN, 0};
    return ::poll(&fd, 1, 0) > 0;
  }
  static std::string ReadAll(int peer) {
    std::string out;
    char buffer[256];
    while (PeerHasBytes(peer)) {
      const ssize_t got = ::recv(peer, buffer, sizeof(buffer), 0);
      if (got <= 0) break;
      out.append(buffer, static_cast<std::size_t>(got));
    }
    return out;
  }
  static ssize_t Write(ConnectionStream& stream, const std::string& text) {
    return stream.write(text.data(), text.size());
  }
};

// The header block waits for the body, so the client is woken once, not twice.
TEST_F(ConnectionStreamTest, AResponsesHeaderBlockLeavesWithWhatFollowsIt) {
  const Pair pair = MakePair();
  ConnectionStream stream(pair.parked, std::chrono::seconds(5), std::chrono::seconds(5));
  stream.BeginResponse();
  ASSERT_EQ(Write(stream, "HTTP/1.1 200 OK\r\n\r\n"), 19);
  EXPECT_FALSE(PeerHasBytes(pair.peer));
  ASSERT_EQ(Write(stream, "body"), 4);
  EXPECT_EQ(ReadAll(pair.peer), "HTTP/1.1 200 OK\r\n\r\nbody");
  // A stream's later writes go out as they come.
  ASSERT_EQ(Write(stream, "event"), 5);
  EXPECT_EQ(ReadAll(pair.peer), "event");
  EXPECT_TRUE(stream.EndResponse());
  ::close(pair.parked);
}

// An answer's last message, the chunked terminator and (here) the header block: one send
// when the response ends.
TEST_F(ConnectionStreamTest, HeldUntilTheResponseEndsEverythingLeavesTogether) {
  const Pair pair = MakePair();
  ConnectionStream stream(pair.parked, std::chrono::seconds(5), std::chrono::seconds(5));
  stream.BeginResponse();
  stream.HoldUntilResponseEnds();
  for (const char* piece : {"head|", "chunk|", "0\r\n", "\r\n"}) ASSERT_GT(Write(stream, piece), 0);
  EXPECT_FALSE(PeerHasBytes(pair.peer));
  EXPECT_TRUE(stream.EndResponse());
  EXPECT_EQ(ReadAll(pair.peer), "head|chunk|0\r\n\r\n");
  // The next response holds only its own header block again.
  stream.BeginResponse();
  ASSERT_GT(Write(stream, "head2|"), 0);
  ASSERT_GT(Write(stream, "body2"), 0);
  EXPECT_EQ(ReadAll(pair.peer), "head2|body2");
  ::close(pair.parked);
}

// A client that waits for "100 Continue" before it sends the body is never left waiting:
// what is held goes out before the stream reads.
TEST_F(ConnectionStreamTest, HeldBytesLeaveBeforeTheStreamWaitsForInput) {
  const Pair pair = MakePair();
  ConnectionStream stream(pair.parked, std::chrono::seconds(5), std::chrono::seconds(5));
  stream.BeginResponse();
  ASSERT_GT(Write(stream, "HTTP/1.1 100 Continue\r\n\r\n"), 0);
  ASSERT_EQ(::send(pair.peer, "x", 1, MSG_NOSIGNAL), 1);
  char byte = 0;
  ASSERT_EQ(stream.read(&byte, 1), 1);
  EXPECT_EQ(ReadAll(pair.peer), "HTTP/1.1 100 Continue\r\n\r\n");
  EXPECT_TRUE(stream.EndResponse());
  ::close(pair.parked);
}

}  // namespace
}  // namespace udon::mcp::http_test
