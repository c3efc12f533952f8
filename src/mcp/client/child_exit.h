// Waiting for a child process to exit without reaping it, and without a sleep loop.
//
// - The child is watched through a pidfd (pidfd_open + poll, Linux >= 5.3): the wait ends
//   the moment the child exits, or at the timeout.
// - Where pidfd_open is unavailable (ENOSYS, older kernels; or kThread asked for), one
//   watcher thread blocks in waitid(WEXITED | WNOWAIT) and wakes the waiters through a
//   condition variable, whose timed wait is the bound. No SIGCHLD handler is involved.
// - Never reaps: the child stays a zombie until its owner reaps it, so a process-group
//   leader's id cannot be reused before the owner's final group kill.
// - WaitFor may be called from several threads at once.
// - Destruction with the thread watcher waits for the child to exit: the owner must make
//   sure it does (StdioTransport SIGKILLs the group before).
//
// No error codes: a child that cannot be watched (a pid that is not our child) counts as
// exited, so an owner's bounded shutdown moves on to reaping instead of waiting forever.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace udon::mcp {

class ChildExitWaiter {
 public:
  enum class Mode {
    kAuto,    // pidfd where the kernel has it, else the watcher thread
    kThread,  // always the watcher thread (for tests of the fallback)
  };

  explicit ChildExitWaiter(pid_t pid, Mode mode = Mode::kAuto);
  ~ChildExitWaiter();
  ChildExitWaiter(const ChildExitWaiter&) = delete;
  ChildExitWaiter& operator=(const ChildExitWaiter&) = delete;

  // True once the child has exited (it may be a zombie), false if it still runs after
  // `timeout`. A zero timeout only looks.
  bool WaitFor(std::chrono::milliseconds timeout);
  // Whether the pidfd path is in use (false: the watcher thread).
  bool uses_pidfd() const { return pidfd_ >= 0; }

 private:
  void Watch();

  pid_t pid_;
  int pidfd_ = -1;
  std::mutex mutex_;
  std::condition_variable exited_cv_;
  bool exited_ = false;  // guarded by mutex_ (watcher thread mode)
  std::thread watcher_;
};

}  // namespace udon::mcp
