// Libraries loaded on first use rather than at process start (issue 31): libcurl (HTTP
// servers) and libpq (the PostgreSQL store) and what they pull in are most of udon-mcp's
// dynamic linking, and a stdio call with the state directory needs neither. Their
// functions are defined by forwarders (mcp/client/internal/libcurl.cc,
// state_pg/internal/libpq.cc) that look the real ones up here.
#pragma once

namespace udon::base {

// The address of `symbol` in `library` (a soname such as "libpq.so.5"), loaded on the
// first request (RTLD_LOCAL: its symbols never interpose on others). A library or symbol
// that is missing ends the process with the dynamic loader's own exit status, 127, and a
// message naming it, as a library missing at start did. Thread-safe.
void* RequiredSymbol(const char* library, const char* symbol);

}  // namespace udon::base

// The real `name` (a function declared by the library's header) of `library`, looked up
// once per forwarder: UDON_LIBRARY_FUNCTION("libpq.so.5", PQfinish)(conn).
#define UDON_LIBRARY_FUNCTION(library, name)                                                             \
  (*[] {                                                                                                 \
    static const auto real = reinterpret_cast<decltype(&::name)>(::udon::base::RequiredSymbol(library, #name)); \
    return real;                                                                                         \
  }())
