// One question to the issuer per subject at a time (the JWK Set; one token's introspection):
// the first request that needs an answer asks, and requests that need the same answer
// meanwhile wait for it, for a bounded time, and share it instead of asking again. The
// owner's mutex guards a SingleFlight; every member is called with `lock` held on it, and
// the issuer is asked with it released.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace udon::resource_auth {

template <typename Answer>
class SingleFlight {
 public:
  bool InFlight(const std::string& subject) const { return flights_.contains(subject); }

  // Asks, `ask()` running with `lock` released; `subject` must not be in flight. The lock
  // is held again on return, and since it stays held until the caller lets it go, what the
  // caller records after Lead (a cache entry, the new keys) is there before any waiter runs.
  template <typename Ask>
  Answer Lead(std::unique_lock<std::mutex>& lock, const std::string& subject, Ask&& ask) {
    auto flight = std::make_shared<Flight>();
    flights_.emplace(subject, flight);
    lock.unlock();
    Answer answer = ask();
    lock.lock();
    flights_.erase(subject);
    flight->answer = answer;
    flight->landed.notify_all();
    return answer;
  }

  // The answer of the question in flight for `subject`; nullopt when none is in flight,
  // or when it is still in flight after `wait`.
  std::optional<Answer> Join(std::unique_lock<std::mutex>& lock, const std::string& subject,
                             std::chrono::seconds wait) {
    auto it = flights_.find(subject);
    if (it == flights_.end()) return std::nullopt;
    std::shared_ptr<Flight> flight = it->second;  // Lead drops it from flights_ when it lands
    ++waiting_;
    flight->landed.wait_for(lock, wait, [&] { return flight->answer.has_value(); });
    --waiting_;
    return flight->answer;
  }

  // How many requests wait in Join.
  std::size_t waiting() const { return waiting_; }

 private:
  struct Flight {
    std::condition_variable landed;
    std::optional<Answer> answer;
  };
  std::map<std::string, std::shared_ptr<Flight>> flights_;
  std::size_t waiting_ = 0;
};

}  // namespace udon::resource_auth
