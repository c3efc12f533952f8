// Learning at once that the client of an HTTP connection has gone, for responses that wait
// on something other than their socket (a listen stream, a GET stream, a running tool call).
//
// cpp-httplib 0.11 notices a departed client only when a write fails, which for a quiet
// stream is the next keep-alive, and until then a worker thread stays parked on it. One
// epoll thread watches the sockets of such responses for the peer's FIN or reset
// (EPOLLRDHUP, EPOLLHUP, EPOLLERR; never EPOLLIN, so a request the client pipelines is not
// mistaken for a departure) and calls the response's `departed` at once.
//
// No error codes: a socket that cannot be watched (epoll unavailable, the socket not found)
// is simply not watched, and its response falls back to noticing at its next write.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace udon::mcp {

// The descriptor of this process's TCP socket whose local and peer addresses are these
// (numeric hosts as getnameinfo(NI_NUMERICHOST) prints them); -1 if none. httplib hands a
// handler the connection's addresses but not its socket. The answer for the calling thread's
// last connection is remembered and checked again before it is reused.
int FindConnectionSocket(const std::string& local_addr, int local_port, const std::string& remote_addr,
                         int remote_port);

class PeerWatch {
 public:
  // Ends the watch when destroyed: after that `departed` is not called any more (unless it
  // was already running).
  class Ticket {
   public:
    Ticket(PeerWatch* watch, std::uint64_t id) : watch_(watch), id_(id) {}
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

   private:
    PeerWatch* watch_;
    std::uint64_t id_;
  };

  PeerWatch();
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  // Calls `departed` once, on the watch thread, when the peer of `socket` closes or resets
  // the connection. The ticket must be destroyed before the socket is closed. nullptr when
  // the socket cannot be watched.
  std::unique_ptr<Ticket> Watch(int socket, std::function<void()> departed);

  // How many departures were seen (a seam for tests).
  std::uint64_t departures() const;

 private:
  struct Entry {
    int socket = -1;
    std::function<void()> departed;
  };
  void Forget(std::uint64_t id);
  void Run();

  int epoll_ = -1;
  int wake_ = -1;  // eventfd: ends Run
  mutable std::mutex mutex_;
  std::map<std::uint64_t, Entry> entries_;
  std::uint64_t next_id_ = 1;
  std::uint64_t departures_ = 0;
  std::thread thread_;
};

}  // namespace udon::mcp
