#include "mcp/server/kept_connections.h"

#include <netdb.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace udon::mcp {
namespace {

// The epoll data of the wake-up eventfd: never a socket descriptor.
constexpr int kWakeSocket = -1;
thread_local int serving_socket = -1;
thread_local ConnectionStream* serving_stream = nullptr;
thread_local bool close_after_response = false;

// poll() for one event, restarted after a signal; true when it came within `timeout`.
bool PollFor(int socket, short events, std::chrono::microseconds timeout) {
  pollfd fd{socket, events, 0};
  const int ms = static_cast<int>((timeout.count() + 999) / 1000);
  for (;;) {
    const int ready = ::poll(&fd, 1, ms);
    if (ready >= 0) return ready > 0;
    if (errno != EINTR) return false;
  }
}

void CloseSocket(int socket) {
  ::shutdown(socket, SHUT_RDWR);
  ::close(socket);
}

// Sent at once when the socket has room (the common case: no poll before each write);
// else waited for, up to the write timeout. Returns the bytes sent, or -1.
ssize_t SendSome(int socket, const char* ptr, size_t size, std::chrono::microseconds timeout) {
  for (;;) {
    const ssize_t sent = ::send(socket, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent >= 0) return sent;
    if (errno == EINTR) continue;
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || !PollFor(socket, POLLOUT, timeout)) return -1;
  }
}

}  // namespace

bool SocketAddress(int socket, bool peer, std::string& host, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  auto* raw = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? getpeername(socket, raw, &length) : getsockname(socket, raw, &length)) != 0 ||
      (address.ss_family != AF_INET && address.ss_family != AF_INET6)) {
    return false;
  }
  char name[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (getnameinfo(raw, length, name, sizeof(name), service, sizeof(service), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return false;
  }
  host = name;
  port = std::atoi(service);
  return true;
}

bool ConnectionStream::is_readable() const {
  return buffered_ > 0 || (Release() && PollFor(socket_, POLLIN, read_timeout_));
}

// As httplib's own stream: writable, and the peer has not closed its end meanwhile.
bool ConnectionStream::is_writable() const {
  if (!PollFor(socket_, POLLOUT, write_timeout_)) return false;
  pollfd fd{socket_, POLLIN, 0};
  if (::poll(&fd, 1, 0) <= 0) return true;
  char byte;
  return ::recv(socket_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (buffered_ == 0) {
    if (!Release() || !PollFor(socket_, POLLIN, read_timeout_)) return -1;
    ssize_t got;
    do {
      got = ::recv(socket_, buffer_, sizeof(buffer_), 0);
    } while (got < 0 && errno == EINTR);
    if (got <= 0) return got;
    buffered_ = static_cast<std::size_t>(got);
    offset_ = 0;
  }
  const std::size_t n = std::min(size, buffered_);
  std::memcpy(ptr, buffer_ + offset_, n);
  offset_ += n;
  buffered_ -= n;
  return static_cast<ssize_t>(n);
}

// Held (see the header), else sent together with what was held, in one send when it fits.
ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  if (hold_next_ || hold_all_) {
    hold_next_ = false;
    held_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  if (!held_.empty()) {
    held_.append(ptr, size);
    return Release() ? static_cast<ssize_t>(size) : -1;
  }
  return SendSome(socket_, ptr, size, write_timeout_);
}

bool ConnectionStream::Release() const {
  std::size_t sent = 0;
  while (sent < held_.size()) {
    const ssize_t n = SendSome(socket_, held_.data() + sent, held_.size() - sent, write_timeout_);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  const bool complete = sent == held_.size();
  held_.clear();
  return complete;
}

void ConnectionStream::BeginResponse() {
  hold_next_ = true;
  hold_all_ = false;
}

bool ConnectionStream::EndResponse() {
  hold_next_ = false;
  hold_all_ = false;
  return Release();
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  SocketAddress(socket_, true, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  SocketAddress(socket_, false, ip, port);
}

bool ConnectionStream::HasInput() const {
  pollfd fd{socket_, POLLIN, 0};
  return ::poll(&fd, 1, 0) > 0;
}

int ServingSocket() { return serving_socket; }

void CloseAfterResponse() { close_after_response = true; }

bool TakeCloseAfterResponse() { return std::exchange(close_after_response, false); }

ConnectionStream* ServingStream() { return serving_stream; }

ServingScope::ServingScope(int socket, ConnectionStream* stream)
    : previous_(serving_socket), previous_stream_(serving_stream) {
  serving_socket = socket;
  serving_stream = stream;
}

ServingScope::~ServingScope() {
  serving_socket = previous_;
  serving_stream = previous_stream_;
}

IdleConnections::IdleConnections(std::chrono::milliseconds idle_timeout, std::size_t capacity, Resume resume)
    : idle_timeout_(idle_timeout), capacity_(std::max<std::size_t>(capacity, 1)), resume_(std::move(resume)) {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_ < 0 || wake_ < 0) return;
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = kWakeSocket;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &event) != 0) return;
  thread_ = std::thread([this] { Run(); });
}

IdleConnections::~IdleConnections() {
  Close();
  if (wake_ >= 0) ::close(wake_);
  if (epoll_ >= 0) ::close(epoll_);
}

bool IdleConnections::Park(int socket, std::size_t remaining) {
  std::lock_guard lock(mutex_);
  if (closed_ || !thread_.joinable()) return false;
  if (entries_.size() >= capacity_) CloseParked(order_.begin()->second);  // the longest idle
  // One-shot: the socket is handed over once, then it is no longer watched here.
  epoll_event event{};
  event.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
  event.data.fd = socket;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, socket, &event) != 0) return false;
  const Clock::time_point deadline = Clock::now() + idle_timeout_;
  entries_[socket] = Entry{deadline, remaining};
  order_.emplace(deadline, socket);
  const std::uint64_t one = 1;
  if (order_.begin()->second == socket) {  // an earlier deadline than the thread waits for
    [[maybe_unused]] const ssize_t written = ::write(wake_, &one, sizeof(one));
  }
  return true;
}

void IdleConnections::Close() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
  }
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(wake_, &one, sizeof(one));
    thread_.join();
  }
  std::lock_guard lock(mutex_);
  while (!entries_.empty()) CloseParked(entries_.begin()->first);
}

std::size_t IdleConnections::parked() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

void IdleConnections::CloseParked(int socket) {
  auto it = entries_.find(socket);
  if (it == entries_.end()) return;
  // Before the socket is closed: a closed and reused descriptor must not stay registered.
  epoll_ctl(epoll_, EPOLL_CTL_DEL, socket, nullptr);
  order_.erase({it->second.deadline, socket});
  entries_.erase(it);
  CloseSocket(socket);
}

int IdleConnections::WaitMilliseconds() const {
  if (order_.empty()) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(order_.begin()->first - Clock::now());
  return static_cast<int>(std::max<long long>(left.count(), 0));
}

void IdleConnections::Expire(Clock::time_point now) {
  while (!order_.empty() && order_.begin()->first <= now) CloseParked(order_.begin()->second);
}

void IdleConnections::Run() {
  epoll_event events[64];
  for (;;) {
    int wait;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      Expire(Clock::now());
      wait = WaitMilliseconds();
    }
    const int count = epoll_wait(epoll_, events, 64, wait);
    if (count < 0 && errno != EINTR) return;
    for (int i = 0; i < count; ++i) {
      // epoll_event is packed on x86-64: copy the descriptor out, never bind a reference.
      const int socket = events[i].data.fd;
      if (socket == kWakeSocket) {
        std::uint64_t value;
        [[maybe_unused]] const ssize_t got = ::read(wake_, &value, sizeof(value));
        continue;
      }
      std::size_t remaining = 0;
      {
        std::lock_guard lock(mutex_);
        auto it = entries_.find(socket);
        if (closed_ || it == entries_.end()) continue;  // closed meanwhile
        remaining = it->second.remaining;
        epoll_ctl(epoll_, EPOLL_CTL_DEL, socket, nullptr);
        order_.erase({it->second.deadline, socket});
        entries_.erase(it);
      }
      resume_(socket, remaining);
    }
  }
}

}  // namespace udon::mcp
