#include "state_pg/internal/connect.h"

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace udon::state_pg::internal {
namespace {

using Clock = std::chrono::steady_clock;

// The connect_timeout libpq resolved from the parameters and the URI, in seconds; 0: none.
int ConnectTimeoutSeconds(PGconn* conn) {
  int seconds = 0;
  PQconninfoOption* options = PQconninfo(conn);
  for (PQconninfoOption* option = options; option != nullptr && option->keyword != nullptr; ++option) {
    if (std::strcmp(option->keyword, "connect_timeout") == 0 && option->val != nullptr) {
      seconds = std::atoi(option->val);
    }
  }
  PQconninfoFree(options);
  // libpq's own rule: a timeout below 2 s is taken as 2 s.
  return seconds <= 0 ? 0 : (seconds < 2 ? 2 : seconds);
}

int MillisecondsLeft(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

}  // namespace

PGconn* ConnectUnlessCancelled(const char* const* keywords, const char* const* values, int cancel_fd) {
  PGconn* conn = PQconnectStartParams(keywords, values, 1);
  if (conn == nullptr || PQstatus(conn) == CONNECTION_BAD) return conn;
  const int timeout = ConnectTimeoutSeconds(conn);
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(timeout);
  // libpq's protocol: wait for the socket to be writable first, then as PQconnectPoll says.
  PostgresPollingStatusType status = PGRES_POLLING_WRITING;
  while (status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED) {
    pollfd fds[2] = {{PQsocket(conn), static_cast<short>(status == PGRES_POLLING_READING ? POLLIN : POLLOUT), 0},
                     {cancel_fd, POLLIN, 0}};
    const int ready = poll(fds, 2, timeout == 0 ? -1 : MillisecondsLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0 || (fds[1].revents & POLLIN) != 0) {
      PQfinish(conn);
      return nullptr;
    }
    status = PQconnectPoll(conn);
  }
  return conn;
}

}  // namespace udon::state_pg::internal
