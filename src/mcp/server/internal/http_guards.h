// Private to the Streamable HTTP server's sources: the guards in front of every request
// (contract 7.17): the bearer token, requests in flight per client, allowed origins.
#ifndef UDON_MCP_SERVER_INTERNAL_HTTP_GUARDS_H_
#define UDON_MCP_SERVER_INTERNAL_HTTP_GUARDS_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace udon::mcp {

// Whether `authorization` is "Bearer <token>" with the expected token. Both sides are hashed
// first, so the comparison runs over equal lengths in constant time whatever was sent.
bool HasBearerToken(const std::string& authorization, const std::array<std::uint8_t, 32>& expected);

// Requests in flight per client; a slot is held until its response has been written.
class InFlightLimit {
 public:
  explicit InFlightLimit(std::size_t limit) : limit_(limit) {}
  // Held while a request is in flight; its destruction frees the client's slot.
  class Slot {
   public:
    Slot(InFlightLimit& limit, std::string client) : limit_(limit), client_(std::move(client)) {}
    ~Slot() { limit_.Release(client_); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    InFlightLimit& limit_;
    std::string client_;
  };
  // A slot for `client`, or nullptr when it has `limit` requests in flight already.
  std::shared_ptr<Slot> Acquire(const std::string& client) {
    std::lock_guard lock(mutex_);
    std::size_t& count = counts_[client];
    if (count >= limit_) return nullptr;
    ++count;
    return std::make_shared<Slot>(*this, client);
  }

 private:
  void Release(const std::string& client) {
    std::lock_guard lock(mutex_);
    auto it = counts_.find(client);
    if (it != counts_.end() && --it->second == 0) counts_.erase(it);
  }
  const std::size_t limit_;
  std::mutex mutex_;
  std::map<std::string, std::size_t> counts_;
};

// Whether `name` is one of `names` (case-insensitively).
bool IsNamed(std::string_view name, const std::vector<std::string>& names);

// An http(s) origin whose host is one of `names`.
bool IsNamedOrigin(const std::string& origin, const std::vector<std::string>& names);

}  // namespace udon::mcp

#endif  // UDON_MCP_SERVER_INTERNAL_HTTP_GUARDS_H_
