#include "state_pg/tls.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "base/ascii.h"

namespace udon::state_pg {
namespace {

// An empty entry is libpq's default, the Unix socket directory (for hostaddr: none).
bool EveryEntryLocal(const std::string& list) {
  for (const std::string& entry : SplitConninfoList(list)) {
    if (!entry.empty() && !IsLocalHost(entry)) return false;
  }
  return true;
}

}  // namespace

bool IsLocalHost(std::string_view host) {
  if (!host.empty() && (host.front() == '/' || host.front() == '@')) return true;
  if (base::AsciiLower(host) == "localhost") return true;
  const std::string text(host);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, text.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

StoreTls DecideStoreTls(const Conninfo& options, const char* (*getenv)(const char*)) {
  const bool local = ConninfoOrEnvironment(options, "service", "PGSERVICE", getenv).empty() &&
                     EveryEntryLocal(ConninfoOrEnvironment(options, "host", "PGHOST", getenv)) &&
                     EveryEntryLocal(ConninfoOrEnvironment(options, "hostaddr", "PGHOSTADDR", getenv));
  StoreTls tls;
  if (local) return tls;
  tls.default_sslmode = kRemoteSslmode;
  // Any other value is not an sslmode: libpq refuses to connect with it.
  static const char* const kWeaker[] = {"disable", "allow", "prefer", "require", "verify-ca"};
  const std::string explicit_mode = ConninfoValue(options, "sslmode");
  for (const char* weaker : kWeaker) {
    if (explicit_mode == weaker) tls.weakened = explicit_mode;
  }
  return tls;
}

std::string WeakTlsWarning(const std::string& sslmode) {
  return "udon-mcp: warning: the state database is reached with sslmode=" + sslmode +
         " from its URI, which does not verify the server's certificate and host name: an impostor can answer "
         "for it (the default for a host that is not local is verify-full, contract 7.14)\n";
}

}  // namespace udon::state_pg
