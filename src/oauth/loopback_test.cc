#include "oauth/loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

namespace udon::oauth {
namespace {

// Connects to 127.0.0.1:port, sends `request`, and returns the answer (empty when refused).
std::string Send(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    (void)!::write(fd, request.data(), request.size());
    char buffer[512];
    for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) > 0;) answer.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return answer;
}

TEST(LoopbackListenerTest, TakesOneRequestThenIsClosed) {
  Result<LoopbackListener> listener = LoopbackListener::Open(0);
  ASSERT_TRUE(listener.ok());
  const int port = listener->port();
  EXPECT_EQ(listener->RedirectUri(), "http://127.0.0.1:" + std::to_string(port) + "/callback");
  std::string answer;
  std::thread browser([&] { answer = Send(port, "GET /callback?code=c&state=s HTTP/1.1\r\nHost: x\r\n\r\n"); });
  Result<std::string> target = listener->AcceptOne(std::chrono::steady_clock::now() + std::chrono::seconds(30));
  browser.join();
  ASSERT_TRUE(target.ok()) << target.error().Describe();
  EXPECT_EQ(*target, "/callback?code=c&state=s");
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK", 0), 0u);
  // A second delivery (a forged redirect racing the real one) finds nobody listening.
  EXPECT_EQ(Send(port, "GET /callback?code=forged&state=s HTTP/1.1\r\n\r\n"), "");
}

TEST(LoopbackListenerTest, RefusesWhatIsNotAGetAndEndsAtTheDeadline) {
  Result<LoopbackListener> listener = LoopbackListener::Open(0);
  ASSERT_TRUE(listener.ok());
  std::thread sender([port = listener->port()] { Send(port, "POST /callback HTTP/1.1\r\n\r\n"); });
  Result<std::string> target = listener->AcceptOne(std::chrono::steady_clock::now() + std::chrono::seconds(30));
  sender.join();
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.error().code, "auth.redirect_invalid");

  Result<LoopbackListener> idle = LoopbackListener::Open(0);
  ASSERT_TRUE(idle.ok());
  Result<std::string> none = idle->AcceptOne(std::chrono::steady_clock::now());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, "auth.login_timeout");
}

TEST(LoopbackListenerTest, ATakenPortIsAClearError) {
  Result<LoopbackListener> first = LoopbackListener::Open(0);
  ASSERT_TRUE(first.ok());
  Result<LoopbackListener> second = LoopbackListener::Open(first->port());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, "auth.listen_failed");
  EXPECT_EQ(second.error().details["port"], first->port());
}

}  // namespace
}  // namespace udon::oauth
