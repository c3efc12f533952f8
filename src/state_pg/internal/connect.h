// A libpq connection that its owner can abandon while it is being made.
#pragma once

#include <libpq-fe.h>

namespace udon::state_pg::internal {

// As PQconnectdbParams(keywords, values, 1), through libpq's non-blocking calls, and given
// up as soon as `cancel_fd` becomes readable (then nullptr). The parameters' (or the URI's)
// connect_timeout bounds the whole attempt, every host of a multi-host URI together; past
// it, nullptr. A failed attempt is returned as libpq returns it (PQstatus: CONNECTION_BAD).
PGconn* ConnectUnlessCancelled(const char* const* keywords, const char* const* values, int cancel_fd);

}  // namespace udon::state_pg::internal
