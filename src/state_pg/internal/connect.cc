#include "state_pg/internal/connect.h"

#include <arpa/inet.h>
#include <poll.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gate/state_store.h"
#include "state_pg/internal/resolve.h"
#include "state_pg/uri.h"

namespace udon::state_pg::internal {
namespace {

// The options the parameters give libpq, as libpq reads them: empty values are unset,
// later ones override earlier ones, and the first dbname that is a connection string is
// expanded in its place (expand_dbname).
Conninfo GivenOptions(const char* const* keywords, const char* const* values) {
  std::map<std::string, std::string> options;
  bool expanded = false;
  for (int i = 0; keywords[i] != nullptr; ++i) {
    const std::string value = values[i] != nullptr ? values[i] : "";
    if (value.empty()) continue;
    const bool conninfo = value.find('=') != std::string::npos || gate::IsPostgresUrl(value);
    if (std::string(keywords[i]) == "dbname" && !expanded && conninfo) {
      expanded = true;
      if (auto parsed = ParseConninfo(value); parsed.ok()) {
        for (const auto& [key, setting] : *parsed) options[key] = setting;
      }
      continue;
    }
    options[keywords[i]] = value;
  }
  return Conninfo(options.begin(), options.end());
}

std::string Effective(const Conninfo& options, const char* keyword, const char* variable) {
  return ConninfoOrEnvironment(options, keyword, variable,
                               [](const char* name) -> const char* { return std::getenv(name); });
}

// The whole attempt's deadline: connect_timeout (libpq's own rule: below 2 s is 2 s; 0 or
// none: forever) and `bound`, whichever ends first.
std::optional<Clock::time_point> Deadline(const Conninfo& options, std::chrono::milliseconds bound) {
  const int seconds = std::atoi(Effective(options, "connect_timeout", "PGCONNECT_TIMEOUT").c_str());
  std::chrono::milliseconds limit = seconds <= 0 ? bound : std::chrono::seconds(seconds < 2 ? 2 : seconds);
  if (bound.count() > 0 && bound < limit) limit = bound;
  if (limit.count() <= 0) return std::nullopt;
  return Clock::now() + limit;
}

bool IsName(const std::string& host) {
  if (host.empty() || host.front() == '/' || host.front() == '@') return false;  // a socket, libpq's default
  unsigned char address[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), address) != 1 && inet_pton(AF_INET6, host.c_str(), address) != 1;
}

// The host, hostaddr and port lists that leave libpq nothing to look up: each name once per
// address it has, with that address as its hostaddr (a name without one is left out).
// nullopt: nothing to pin (no name; a hostaddr or a service already decides the
// addresses), or nothing left to connect to (`unreachable`: cancelled, past the deadline,
// or no name resolved).
struct Pinned {
  std::string host, hostaddr, port;
};
std::optional<Pinned> PinHosts(const Conninfo& options, int cancel_fd, std::optional<Clock::time_point> deadline,
                               bool& unreachable) {
  unreachable = false;
  if (!Effective(options, "hostaddr", "PGHOSTADDR").empty() || !Effective(options, "service", "PGSERVICE").empty()) {
    return std::nullopt;
  }
  const std::vector<std::string> hosts = SplitConninfoList(Effective(options, "host", "PGHOST"));
  const std::string port_list = Effective(options, "port", "PGPORT");
  const std::vector<std::string> ports = SplitConninfoList(port_list);
  std::vector<std::string> names;
  for (const std::string& host : hosts) {
    if (IsName(host)) names.push_back(host);
  }
  // A port list that does not match the hosts is libpq's error, found before any lookup.
  if (names.empty() || (ports.size() > 1 && ports.size() != hosts.size())) return std::nullopt;
  auto found = ResolveUnlessCancelled(names, cancel_fd, deadline);
  Pinned pinned;
  std::size_t next_name = 0, entries = 0;
  for (std::size_t i = 0; found && i < hosts.size(); ++i) {
    std::vector<std::string> addresses = {""};  // a socket or an address: libpq's as it is
    if (IsName(hosts[i])) addresses = (*found)[next_name++];
    for (const std::string& address : addresses) {
      const std::string separator = entries++ == 0 ? "" : ",";
      pinned.host += separator + hosts[i];
      pinned.hostaddr += separator + address;
      if (ports.size() > 1) pinned.port += separator + ports[i];
    }
  }
  if (entries == 0) {
    unreachable = true;
    return std::nullopt;
  }
  if (ports.size() <= 1) pinned.port = port_list;
  return pinned;
}

// libpq's protocol: wait for the socket to be writable first, then as PQconnectPoll says.
PGconn* PollUntilConnected(PGconn* conn, int cancel_fd, std::optional<Clock::time_point> deadline) {
  PostgresPollingStatusType status = PGRES_POLLING_WRITING;
  while (status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED) {
    pollfd fds[2] = {{PQsocket(conn), static_cast<short>(status == PGRES_POLLING_READING ? POLLIN : POLLOUT), 0},
                     {cancel_fd, POLLIN, 0}};
    const int ready = poll(fds, 2, PollMilliseconds(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0 || (fds[1].revents & POLLIN) != 0) {
      PQfinish(conn);
      return nullptr;
    }
    status = PQconnectPoll(conn);
  }
  return conn;
}

}  // namespace

PGconn* ConnectUnlessCancelled(const char* const* keywords, const char* const* values, int cancel_fd,
                               std::chrono::milliseconds bound) {
  const Conninfo options = GivenOptions(keywords, values);
  const std::optional<Clock::time_point> deadline = Deadline(options, bound);
  bool unreachable = false;
  const std::optional<Pinned> pinned = PinHosts(options, cancel_fd, deadline, unreachable);
  if (unreachable) return nullptr;
  std::vector<const char*> keys, settings;
  for (int i = 0; keywords[i] != nullptr; ++i) {
    keys.push_back(keywords[i]);
    settings.push_back(values[i]);
  }
  // After the expanded dbname: these override the URI's own lists.
  if (pinned) {
    keys.insert(keys.end(), {"host", "hostaddr", "port"});
    settings.insert(settings.end(), {pinned->host.c_str(), pinned->hostaddr.c_str(), pinned->port.c_str()});
  }
  keys.push_back(nullptr);
  settings.push_back(nullptr);
  PGconn* conn = PQconnectStartParams(keys.data(), settings.data(), 1);
  if (conn == nullptr || PQstatus(conn) == CONNECTION_BAD) return conn;
  return PollUntilConnected(conn, cancel_fd, deadline);
}

}  // namespace udon::state_pg::internal
