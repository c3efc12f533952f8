// Whether the shared store's server must prove who it is (issue 29, contract 7.14). libpq's
// own default (sslmode=prefer) lets an impostor decline TLS and ask for the password in
// the clear; a store reached over a network therefore defaults to sslmode=verify-full.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "state_pg/uri.h"

namespace udon::state_pg {

// The default a store is given for verifying its server over a network.
inline constexpr const char* kRemoteSslmode = "verify-full";

struct StoreTls {
  // Passed to libpq ahead of the URI's own parameters (the URI's sslmode wins); empty: a
  // local store keeps libpq's default.
  std::string default_sslmode;
  // The URI's own sslmode when it is weaker than verify-full for a store that is not local:
  // honoured, warned about once per process, and named in evidence (storeTls).
  std::optional<std::string> weakened;
};

// Whether a host (one entry of `host` or `hostaddr`) is on this machine: a Unix socket
// directory (a path, or libpq's abstract "@name"), `localhost`, 127.0.0.0/8 or ::1.
bool IsLocalHost(std::string_view host);

// The TLS rule for a parsed connection string. Local only when every host and hostaddr
// entry is local and no service file is named (its host is not known here); the URI's
// host and hostaddr, else $PGHOST and $PGHOSTADDR, as libpq takes them.
StoreTls DecideStoreTls(const Conninfo& options, const char* (*getenv)(const char*));

// The one line said on stderr, once per process, for a weakened store.
std::string WeakTlsWarning(const std::string& sslmode);

}  // namespace udon::state_pg
