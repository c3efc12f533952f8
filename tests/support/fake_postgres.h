// An impostor PostgreSQL server for the shared store's TLS tests (issue 29): on loopback
// TCP, on a port of its own, it declines TLS ('N' to SSLRequest and GSSENCRequest), asks
// for the password in the clear (AuthenticationCleartextPassword) and records whatever it
// receives; then it answers like a database that knows of no invalidations (schema version
// 1, no rows, every advisory lock free), so a client that talks to it goes on to dispatch.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace udon::testing {

class FakePostgres {
 public:
  FakePostgres();  // listening when port() > 0
  ~FakePostgres();
  FakePostgres(const FakePostgres&) = delete;
  FakePostgres& operator=(const FakePostgres&) = delete;

  int port() const { return port_; }
  // Every password message received, in order.
  std::vector<std::string> passwords() const;
  // Connections whose client asked for TLS first (an SSLRequest).
  int tls_requests() const { return tls_requests_.load(); }
  // Sessions that went on past authentication (queries were answered).
  int sessions() const { return sessions_.load(); }

 private:
  void Accept();
  void Serve(int fd);
  bool Startup(int fd);
  void Answer(int fd);

  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> tls_requests_{0};
  std::atomic<int> sessions_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> passwords_;
  std::vector<int> clients_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace udon::testing
