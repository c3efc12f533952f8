// HTTP/1.1 keep-alive connections without a thread each while they are idle.
//
// cpp-httplib 0.11 serves a connection on one pool thread from accept to close: between two
// requests that thread polls the socket every 10 ms (and sleeps 1 ms after each quiet
// poll) until the keep-alive timeout. So every idle connection held a thread of the bounded
// pool and woke ~90 times a second, and clients that keep connections (every HTTP/1.1
// client: Node's fetch, libcurl, a host's SDK) could hold all of the pool's threads with
// idle connections. The server therefore advertised a short keep-alive (2 s), which Node's
// fetch (undici) reads as "do not reuse" (it subtracts 2 s from the hint), so each call
// paid a new TCP connection.
//
// Here a connection is served while requests come back to back; when none is waiting, its
// socket is parked with IdleConnections (one epoll thread for all of them) and its thread
// goes back to the pool. A parked socket that becomes readable (a request, or the peer's
// close) is handed to the pool again; one idle for the keep-alive timeout, or the longest
// idle one when `capacity` sockets are parked, is closed.
//
// No error codes: a socket that cannot be parked is closed, as httplib would close it.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace udon::mcp {

// A connected socket as httplib reads and writes it: buffered reads (httplib reads request
// lines a byte at a time), each read and write bounded by its timeout. It owns nothing:
// the socket stays open when it goes.
//
// Writes are gathered so that an answer leaves in one send (one segment, one wake-up of
// the client) where httplib writes it in pieces (header block, body or SSE chunk, the
// chunked terminator): a response's first write (its header block) is held and goes out
// with the next one; after HoldUntilResponseEnds() every write is held. Held bytes are
// sent before any read (a client waiting for "100 Continue" is never left waiting) and
// when the response ends (EndResponse). A stream's later writes are never held unasked.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(int socket, std::chrono::microseconds read_timeout, std::chrono::microseconds write_timeout)
      : socket_(socket), read_timeout_(read_timeout), write_timeout_(write_timeout) {}

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return socket_; }

  // Whether bytes beyond the last request were read ahead: a pipelined request, or the body
  // of a request answered without reading it (refused before routing). The two cannot be
  // told apart here, so the connection is closed rather than read on.
  bool ReadAhead() const { return buffered_ > 0; }
  // Whether the socket has another request's bytes already: then the connection is served on
  // without parking.
  bool HasInput() const;

  // A response begins: its first write is held (see above).
  void BeginResponse();
  // Sends what is held now, for a response whose next write is far off (the client reads
  // the header block meanwhile); false when the socket failed or timed out.
  bool SendHeld() { return Release(); }
  // Holds every later write of this response until it ends.
  void HoldUntilResponseEnds() { hold_all_ = true; }
  // Sends what is held; false when the socket failed or timed out.
  bool EndResponse();

 private:
  int socket_;
  std::chrono::microseconds read_timeout_;
  std::chrono::microseconds write_timeout_;
  bool Release() const;  // sends held_ (const: reads are const in httplib's Stream)

  char buffer_[4096];
  std::size_t buffered_ = 0;  // bytes in buffer_ from offset_
  std::size_t offset_ = 0;
  mutable std::string held_;  // written, not yet sent
  bool hold_next_ = false;    // the response's first write is still to come
  bool hold_all_ = false;     // HoldUntilResponseEnds
};

// A TCP socket's own (peer: false) or peer's numeric host and port, as httplib prints them
// (getnameinfo NI_NUMERICHOST); false for a socket that is not TCP over IP.
bool SocketAddress(int socket, bool peer, std::string& host, int& port);

// The socket of the connection whose request this thread is serving; -1 when none (a
// handler's thread outside ServeConnections, or a test).
int ServingSocket();

// The stream of the connection whose response this thread is writing (ServingScope);
// null outside ServeConnections.
ConnectionStream* ServingStream();

// Asks that the connection this thread serves be closed once the current response is
// written (a request answered before its body was read: the body's bytes must never be read
// as the next request). Taken (and reset) by the connection's loop.
void CloseAfterResponse();
bool TakeCloseAfterResponse();

class ServingScope {
 public:
  ServingScope(int socket, ConnectionStream* stream);
  ~ServingScope();
  ServingScope(const ServingScope&) = delete;
  ServingScope& operator=(const ServingScope&) = delete;

 private:
  int previous_;
  ConnectionStream* previous_stream_;
};

class IdleConnections {
 public:
  // `resume(socket, remaining)` runs on the epoll thread when a parked socket is readable;
  // it takes the socket over (it may block: parked sockets then wait, as the listener's
  // accepts wait for a full pool).
  using Resume = std::function<void(int socket, std::size_t remaining)>;
  IdleConnections(std::chrono::milliseconds idle_timeout, std::size_t capacity, Resume resume);
  ~IdleConnections();  // Close()
  IdleConnections(const IdleConnections&) = delete;
  IdleConnections& operator=(const IdleConnections&) = delete;

  // Takes `socket` over until it is readable or closed here; `remaining` is its keep-alive
  // budget, handed back to resume. False (the caller keeps and closes the socket) when
  // closed or the epoll thread could not start.
  bool Park(int socket, std::size_t remaining);
  // Stops the epoll thread and closes every parked socket; later Parks are refused.
  void Close();

  std::size_t parked() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    Clock::time_point deadline;
    std::size_t remaining = 0;
  };
  void Run();
  void Expire(Clock::time_point now);
  void CloseParked(int socket);  // under mutex_
  int WaitMilliseconds() const;  // under mutex_

  const std::chrono::milliseconds idle_timeout_;
  const std::size_t capacity_;
  const Resume resume_;
  int epoll_ = -1;
  int wake_ = -1;  // eventfd: ends Run
  mutable std::mutex mutex_;
  bool closed_ = false;
  std::map<int, Entry> entries_;                       // by socket
  std::set<std::pair<Clock::time_point, int>> order_;  // (deadline, socket), oldest first
  std::thread thread_;
};

}  // namespace udon::mcp
