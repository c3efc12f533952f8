#include "oauth/loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string_view>

namespace udon::oauth {
namespace {

constexpr std::size_t kMaxRequestHead = 16 * 1024;
constexpr std::string_view kPageBody =
    "<!doctype html><title>udon-mcp</title><p>udon-mcp received the login. Return to the terminal.</p>";

std::string PageResponse() {
  return "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\n"
         "Connection: close\r\nContent-Length: " +
         std::to_string(kPageBody.size()) + "\r\n\r\n" + std::string(kPageBody);
}

int MillisecondsUntil(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 60'000));
}

Error TimedOut() {
  return MakeError("auth.login_timeout", "the login was not completed in the browser in time (--timeout); nothing was stored");
}

// Waits until fd is readable or the deadline passes; false at the deadline.
bool AwaitReadable(int fd, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const int wait = MillisecondsUntil(deadline);
    pollfd entry{fd, POLLIN, 0};
    const int ready = ::poll(&entry, 1, wait);
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
}

Result<std::string> ReadRequestTarget(int client, std::chrono::steady_clock::time_point deadline) {
  std::string head;
  char buffer[2048];
  while (head.find("\r\n\r\n") == std::string::npos) {
    if (head.size() > kMaxRequestHead) return MakeError("auth.redirect_invalid", "the redirect's request is too large");
    if (!AwaitReadable(client, deadline)) return TimedOut();
    const ssize_t got = ::read(client, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    head.append(buffer, static_cast<std::size_t>(got));
  }
  const std::size_t line_end = head.find("\r\n");
  const std::string_view line = std::string_view(head).substr(0, line_end);
  const std::size_t first = line.find(' ');
  const std::size_t last = line.rfind(' ');
  if (line_end == std::string::npos || line.substr(0, first) != "GET" || first == last ||
      line.substr(last + 1).rfind("HTTP/1.", 0) != 0) {
    return MakeError("auth.redirect_invalid", "the loopback listener received something that is not the browser's redirect");
  }
  return std::string(line.substr(first + 1, last - first - 1));
}

}  // namespace

Result<LoopbackListener> LoopbackListener::Open(int port) {
  Error failed = MakeError("auth.listen_failed", "cannot listen on 127.0.0.1 for the login's redirect");
  failed.details["port"] = port;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return failed;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 4) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    return failed;
  }
  return LoopbackListener(fd, ntohs(address.sin_port));
}

LoopbackListener::~LoopbackListener() { Close(); }

LoopbackListener& LoopbackListener::operator=(LoopbackListener&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = other.fd_;
    port_ = other.port_;
    other.fd_ = -1;
  }
  return *this;
}

void LoopbackListener::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string LoopbackListener::RedirectUri() const {
  return "http://127.0.0.1:" + std::to_string(port_) + kCallbackPath;
}

Result<std::string> LoopbackListener::AcceptOne(std::chrono::steady_clock::time_point deadline) {
  if (fd_ < 0 || !AwaitReadable(fd_, deadline)) {
    Close();
    return TimedOut();
  }
  const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  Close();  // exactly one request: nobody else gets to deliver a redirect
  if (client < 0) return MakeError("auth.redirect_invalid", "the loopback listener could not accept the redirect");
  Result<std::string> target = ReadRequestTarget(client, deadline);
  if (target.ok()) {
    const std::string response = PageResponse();
    std::string_view page = response;
    while (!page.empty()) {
      const ssize_t sent = ::send(client, page.data(), page.size(), MSG_NOSIGNAL);
      if (sent <= 0) break;
      page.remove_prefix(static_cast<std::size_t>(sent));
    }
  }
  ::close(client);
  return target;
}

}  // namespace udon::oauth
