#include "gate/connection_pool.h"

#include <utility>

#include "catalog/catalog.h"

namespace udon::gate {
ConnectionPool::ConnectionPool(std::size_t max_idle_per_server)
    : ConnectionPool(max_idle_per_server, std::chrono::milliseconds(0), {}) {}

ConnectionPool::ConnectionPool(std::size_t max_idle_per_server, std::chrono::milliseconds idle_limit, IdleClock clock)
    : max_idle_per_server_(max_idle_per_server == 0 ? 1 : max_idle_per_server),
      idle_limit_(idle_limit),
      clock_(clock ? std::move(clock) : IdleClock([] { return std::chrono::steady_clock::now(); })) {}

std::shared_ptr<PooledConnection> ConnectionPool::Take(const std::string& server) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = idle_.find(server);
  if (it == idle_.end() || it->second.empty()) return nullptr;
  std::shared_ptr<PooledConnection> taken = std::move(it->second.back().connection);
  it->second.pop_back();
  if (it->second.empty()) idle_.erase(it);
  return taken;
}

std::shared_ptr<PooledConnection> ConnectionPool::Keep(const std::string& server,
                                                       std::shared_ptr<PooledConnection> connection) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto& slots = idle_[server];
  if (slots.size() >= max_idle_per_server_) return connection;
  slots.push_back({std::move(connection), clock_()});
  return nullptr;
}

std::vector<std::pair<std::string, std::shared_ptr<PooledConnection>>> ConnectionPool::TakeAll() {
  std::lock_guard<std::mutex> guard(mutex_);
  std::vector<std::pair<std::string, std::shared_ptr<PooledConnection>>> all;
  for (auto& [server, slots] : idle_) {
    for (auto& slot : slots) all.emplace_back(server, std::move(slot.connection));
  }
  idle_.clear();
  return all;
}

std::vector<std::pair<std::string, std::shared_ptr<PooledConnection>>> ConnectionPool::TakeExpired() {
  std::vector<std::pair<std::string, std::shared_ptr<PooledConnection>>> expired;
  if (idle_limit_.count() <= 0) return expired;
  std::lock_guard<std::mutex> guard(mutex_);
  const auto now = clock_();
  for (auto& [server, slots] : idle_) {
    // Oldest first; the newest stays whatever its age.
    std::size_t kept_from = 0;
    while (kept_from + 1 < slots.size() && now - slots[kept_from].since > idle_limit_) {
      expired.emplace_back(server, std::move(slots[kept_from].connection));
      ++kept_from;
    }
    slots.erase(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(kept_from));
  }
  return expired;
}

bool ListChangedSinceBinding(const PooledConnection& pooled) {
  if (!pooled.bound_since) return false;
  for (const auto& event : pooled.client->connection().EventsSince(*pooled.bound_since)) {
    if (catalog::IsListChanged(event)) return true;
  }
  return false;
}

// A kept connection serves the next call only while it speaks the manifest's version with
// its serverInfo, was bound for the same manifest, is alive, and can still see changes.
ReuseVerdict JudgeReuse(const PooledConnection& pooled, const ReuseExpectation& expected) {
  ReuseVerdict verdict;
  if (pooled.protocol_version != expected.protocol_version) verdict.refused = "protocol_version";
  if (verdict.refused.empty() && pooled.server_info_sha256 != expected.server_info_sha256) {
    verdict.refused = "server_info";
  }
  if (verdict.refused.empty() && pooled.manifest_sha256 != expected.manifest_sha256) verdict.refused = "other_manifest";
  mcp::Connection& connection = pooled.client->connection();
  if (verdict.refused.empty() && !connection.connected()) verdict.refused = "disconnected";
  for (const auto& event : connection.EventsSince(pooled.bound_since.value_or(0))) {
    if (catalog::IsListChanged(event)) verdict.list_changed = true;
    if (verdict.refused.empty() && event.kind == mcp::EventKind::kDisconnected) verdict.refused = "disconnected";
    if (verdict.refused.empty() && catalog::EndsSubscription(event, *pooled.client)) verdict.refused = "subscription_lost";
  }
  return verdict;
}

}  // namespace udon::gate
