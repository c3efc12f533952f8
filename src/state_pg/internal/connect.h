// A libpq connection that its owner can abandon while it is being made.
#pragma once

#include <libpq-fe.h>

#include <chrono>

namespace udon::state_pg::internal {

// As PQconnectdbParams(keywords, values, 1), through libpq's non-blocking calls, and given
// up as soon as `cancel_fd` (-1: none) becomes readable (then nullptr). The parameters'
// (or the URI's) connect_timeout bounds the whole attempt, every host of a multi-host URI
// together, and `bound` (0: none) bounds it as well, also when connect_timeout is 0
// (libpq: wait forever); past either, nullptr. Host names are looked up before libpq
// starts, within the same bounds (resolve.h), and given to libpq as `hostaddr` next to
// their names, which TLS verifies and ~/.pgpass matches as before. A failed attempt is
// returned as libpq returns it (PQstatus: CONNECTION_BAD), or nullptr.
PGconn* ConnectUnlessCancelled(const char* const* keywords, const char* const* values, int cancel_fd,
                               std::chrono::milliseconds bound);

}  // namespace udon::state_pg::internal
