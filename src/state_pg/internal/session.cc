#include "state_pg/internal/session.h"

#include <unistd.h>

#include <cstring>
#include <utility>

#include "base/sha256.h"

#include "state_pg/internal/connect.h"
#include "state_pg/pg_store.h"

namespace udon::state_pg {

PGconn* ConnectSession(const std::string& uri, const StoreTls& tls, int cancel_fd, std::chrono::milliseconds bound) {
  const std::string keepalive = std::to_string(kKeepaliveIdleSeconds);
  const std::string interval = std::to_string(kKeepaliveIntervalSeconds);
  const std::string count = std::to_string(kKeepaliveCount);
  const std::string user_timeout = std::to_string(kKeepaliveBoundSeconds * 1000);
  // The server's side of the keepalive decides when a vanished runner's session (and its
  // locks) ends; the client's side when a runner notices a vanished server.
  const std::string server_options = "-c tcp_keepalives_idle=" + keepalive + " -c tcp_keepalives_interval=" +
                                     interval + " -c tcp_keepalives_count=" + count +
                                     " -c tcp_user_timeout=" + user_timeout + " -c synchronous_commit=on";
  std::vector<std::pair<const char*, const char*>> parameters = {
      {"connect_timeout", "10"},          {"application_name", "udon-mcp"},
      {"keepalives", "1"},                {"keepalives_idle", keepalive.c_str()},
      {"keepalives_interval", interval.c_str()}, {"keepalives_count", count.c_str()},
      {"tcp_user_timeout", user_timeout.c_str()}, {"options", server_options.c_str()}};
  if (!tls.default_sslmode.empty()) parameters.emplace_back("sslmode", tls.default_sslmode.c_str());
  // Last, expanded: the URI's own values override every one above.
  parameters.emplace_back("dbname", uri.c_str());
  std::vector<const char*> keys, values;
  for (const auto& [key, value] : parameters) {
    keys.push_back(key);
    values.push_back(value);
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  return internal::ConnectUnlessCancelled(keys.data(), values.data(), cancel_fd, bound);
}

std::string RunnerId() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown");
  return std::string(host) + ":" + std::to_string(getpid());
}

std::int64_t LabeledAdvisoryKey(std::string_view label, std::string_view text) {
  const auto digest = base::Sha256(std::string(label) + std::string(text));
  std::uint64_t key = 0;
  for (int i = 0; i < 8; ++i) key = (key << 8) | digest[static_cast<std::size_t>(i)];
  std::int64_t signed_key;
  std::memcpy(&signed_key, &key, sizeof key);
  return signed_key;
}

std::optional<bool> TryAdvisoryLock(Connection& connection, const std::string& key) {
  auto taken = connection.Run(kTryAdvisoryLock, {key});
  if (!taken) return std::nullopt;
  return std::strcmp(PQgetvalue(taken.get(), 0, 0), "t") == 0;
}

}  // namespace udon::state_pg
