#include "state_pg/internal/resolve.h"

#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace udon::state_pg::internal {
namespace {

// Shared by the lookup's thread and its owner: whichever lets go last frees it, so an
// owner that stopped waiting leaves nothing behind and no descriptor that could be reused.
struct Lookup {
  explicit Lookup(std::vector<std::string> wanted) : names(std::move(wanted)), done_fd(eventfd(0, EFD_CLOEXEC)) {}
  ~Lookup() {
    if (done_fd >= 0) close(done_fd);
  }
  Lookup(const Lookup&) = delete;
  Lookup& operator=(const Lookup&) = delete;

  const std::vector<std::string> names;
  const int done_fd;  // readable once `found` is complete
  std::mutex mutex;
  std::vector<std::vector<std::string>> found;
};

std::vector<std::string> AddressesOf(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  std::vector<std::string> addresses;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &list) != 0) return addresses;
  for (const addrinfo* entry = list; entry != nullptr; entry = entry->ai_next) {
    char text[NI_MAXHOST];
    if (getnameinfo(entry->ai_addr, entry->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0) {
      addresses.emplace_back(text);
    }
  }
  freeaddrinfo(list);
  return addresses;
}

void RunLookup(const std::shared_ptr<Lookup>& lookup) {
  std::vector<std::vector<std::string>> found;
  for (const std::string& name : lookup->names) found.push_back(AddressesOf(name));
  std::lock_guard<std::mutex> guard(lookup->mutex);
  lookup->found = std::move(found);
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = write(lookup->done_fd, &one, sizeof one);
}

}  // namespace

int PollMilliseconds(std::optional<Clock::time_point> deadline) {
  if (!deadline) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, std::numeric_limits<int>::max()));
}

std::optional<std::vector<std::vector<std::string>>> ResolveUnlessCancelled(
    const std::vector<std::string>& names, int cancel_fd, std::optional<Clock::time_point> deadline) {
  auto lookup = std::make_shared<Lookup>(names);
  if (lookup->done_fd < 0) return std::nullopt;
  try {
    std::thread([lookup] { RunLookup(lookup); }).detach();
  } catch (const std::system_error&) {
    return std::nullopt;  // no thread to be had: the attempt fails, as an unreachable store
  }
  for (;;) {
    pollfd fds[2] = {{lookup->done_fd, POLLIN, 0}, {cancel_fd, POLLIN, 0}};
    const int ready = poll(fds, 2, PollMilliseconds(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0 || (fds[1].revents & POLLIN) != 0 || (fds[0].revents & POLLIN) == 0) return std::nullopt;
    std::lock_guard<std::mutex> guard(lookup->mutex);
    return std::move(lookup->found);
  }
}

}  // namespace udon::state_pg::internal
