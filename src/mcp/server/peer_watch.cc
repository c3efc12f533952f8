#include "mcp/server/peer_watch.h"

#include <dirent.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "mcp/server/kept_connections.h"

namespace udon::mcp {
namespace {

constexpr std::uint64_t kWakeId = 0;

bool IsConnection(int fd, const std::string& local_addr, int local_port, const std::string& remote_addr,
                  int remote_port) {
  std::string host;
  int port = -1;
  return SocketAddress(fd, false, host, port) && port == local_port && host == local_addr &&
         SocketAddress(fd, true, host, port) && port == remote_port && host == remote_addr;
}

}  // namespace

int FindConnectionSocket(const std::string& local_addr, int local_port, const std::string& remote_addr,
                         int remote_port) {
  // A keep-alive connection's requests are handled by one thread: its socket is found once.
  thread_local int last = -1;
  if (last >= 0 && IsConnection(last, local_addr, local_port, remote_addr, remote_port)) return last;
  last = -1;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  const int own = dirfd(dir);
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    if (IsConnection(static_cast<int>(fd), local_addr, local_port, remote_addr, remote_port)) {
      last = static_cast<int>(fd);
      break;
    }
  }
  closedir(dir);
  return last;
}

PeerWatch::Ticket::~Ticket() { watch_->Forget(id_); }

PeerWatch::PeerWatch() {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_ < 0 || wake_ < 0) return;
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kWakeId;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &event) != 0) return;
  thread_ = std::thread([this] { Run(); });
}

PeerWatch::~PeerWatch() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = write(wake_, &one, sizeof(one));
    thread_.join();
  }
  if (wake_ >= 0) close(wake_);
  if (epoll_ >= 0) close(epoll_);
}

std::unique_ptr<PeerWatch::Ticket> PeerWatch::Watch(int socket, std::function<void()> departed) {
  if (socket < 0 || !thread_.joinable()) return nullptr;
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  epoll_event event{};
  // One-shot: a departure is reported once (EPOLLRDHUP stays set, level-triggered).
  event.events = EPOLLRDHUP | EPOLLONESHOT;
  event.data.u64 = id;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, socket, &event) != 0) return nullptr;
  entries_[id] = Entry{socket, std::move(departed)};
  return std::make_unique<Ticket>(this, id);
}

void PeerWatch::Forget(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  // Before the socket is closed: a closed and reused descriptor must not stay registered.
  epoll_ctl(epoll_, EPOLL_CTL_DEL, it->second.socket, nullptr);
  entries_.erase(it);
}

std::uint64_t PeerWatch::departures() const {
  std::lock_guard lock(mutex_);
  return departures_;
}

void PeerWatch::Run() {
  epoll_event events[64];
  for (;;) {
    const int count = epoll_wait(epoll_, events, 64, -1);
    if (count < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < count; ++i) {
      // epoll_event is packed on x86-64: copy the id out, never bind a reference to it.
      const std::uint64_t id = events[i].data.u64;
      if (id == kWakeId) return;
      std::function<void()> departed;
      {
        std::lock_guard lock(mutex_);
        auto it = entries_.find(id);
        if (it == entries_.end() || !it->second.departed) continue;  // forgotten meanwhile
        departed = std::move(it->second.departed);
        it->second.departed = nullptr;  // once; the entry stays until its ticket forgets it
        ++departures_;
      }
      if (departed) departed();
    }
  }
}

}  // namespace udon::mcp
