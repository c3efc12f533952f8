#include "mcp/client/child_exit.h"

#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace udon::mcp {

namespace {

// The raw system call: glibc 2.36's <sys/pidfd.h> lacks C linkage for C++, and older
// glibc has no wrapper at all. ENOSYS (kernel < 5.3) selects the watcher thread.
int OpenPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));  // close-on-exec by definition
#else
  (void)pid;
  return -1;
#endif
}

}  // namespace

ChildExitWaiter::ChildExitWaiter(pid_t pid, Mode mode) : pid_(pid) {
  if (mode == Mode::kAuto) pidfd_ = OpenPidfd(pid);
  if (pidfd_ < 0) watcher_ = std::thread([this] { Watch(); });
}

ChildExitWaiter::~ChildExitWaiter() {
  if (watcher_.joinable()) watcher_.join();
  if (pidfd_ >= 0) close(pidfd_);
}

void ChildExitWaiter::Watch() {
  siginfo_t info{};
  // WNOWAIT: the owner reaps. Any failure (ECHILD: not our child, or already reaped) ends
  // the watch as an exit, so no owner waits on a child that cannot be watched.
  while (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  {
    std::lock_guard lock(mutex_);
    exited_ = true;
  }
  exited_cv_.notify_all();
}

bool ChildExitWaiter::WaitFor(std::chrono::milliseconds timeout) {
  if (pidfd_ < 0) {
    std::unique_lock lock(mutex_);
    return exited_cv_.wait_for(lock, timeout, [this] { return exited_; });
  }
  // The pidfd becomes readable when the child exits; poll's timeout is the bound, resumed
  // with what is left after a signal interrupts it.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd pfd{pidfd_, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (ready > 0) return true;
    if (ready == 0) return false;
    if (errno != EINTR) return true;  // cannot be watched: treated as exited (see header)
  }
}

}  // namespace udon::mcp
