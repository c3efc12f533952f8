#include "mcp/client/child_exit.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace udon::mcp {
namespace {

using std::chrono::milliseconds;

// Each test runs with the pidfd (where the kernel has it) and with the watcher thread.
class ChildExitTest : public ::testing::TestWithParam<ChildExitWaiter::Mode> {};

pid_t SpawnExiting(int status) {
  const pid_t pid = fork();
  if (pid == 0) _exit(status);
  return pid;
}

pid_t SpawnIgnoringSigterm() {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGTERM, SIG_IGN);
    (void)!write(ready[1], "x", 1);
    for (;;) pause();
  }
  char c;
  // Only once the disposition is in place may the test send SIGTERM.
  (void)!read(ready[0], &c, 1);
  close(ready[0]);
  close(ready[1]);
  return pid;
}

TEST_P(ChildExitTest, AChildThatExitsIsSeenWithoutWaitingTheTimeoutAndLeftForTheOwnerToReap) {
  const pid_t pid = SpawnExiting(7);
  ASSERT_GT(pid, 0);
  {
    ChildExitWaiter waiter(pid, GetParam());
    // A wait that lasted the timeout would stall the suite for ten minutes.
    EXPECT_TRUE(waiter.WaitFor(std::chrono::minutes(10)));
    EXPECT_TRUE(waiter.WaitFor(milliseconds(0)));  // stays exited
  }
  // Not reaped by the waiter: the owner collects the exit status.
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, WNOHANG), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

TEST_P(ChildExitTest, AChildIgnoringSigtermIsStillRunningAtTheBoundAndSigkillEndsTheWait) {
  const pid_t pid = SpawnIgnoringSigterm();
  ASSERT_GT(pid, 0);
  ChildExitWaiter waiter(pid, GetParam());
  EXPECT_FALSE(waiter.WaitFor(milliseconds(0)));
  EXPECT_FALSE(waiter.WaitFor(milliseconds(50)));
  kill(pid, SIGTERM);
  EXPECT_FALSE(waiter.WaitFor(milliseconds(50)));
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), 0);  // still running
  kill(pid, SIGKILL);
  EXPECT_TRUE(waiter.WaitFor(std::chrono::minutes(10)));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);  // no child left
  EXPECT_EQ(errno, ECHILD);
}

TEST(ChildExitWaiterTest, UsesAPidfdOnThisKernelAndTheThreadWhenAskedTo) {
  const pid_t pid = SpawnExiting(0);
  ASSERT_GT(pid, 0);
  {
    ChildExitWaiter pidfd(pid);
    ChildExitWaiter thread(pid, ChildExitWaiter::Mode::kThread);
    // Linux >= 5.3 is what the project runs on; the fallback is for older kernels.
    EXPECT_TRUE(pidfd.uses_pidfd());
    EXPECT_FALSE(thread.uses_pidfd());
    EXPECT_TRUE(pidfd.WaitFor(std::chrono::minutes(10)));
    EXPECT_TRUE(thread.WaitFor(std::chrono::minutes(10)));
  }
  EXPECT_EQ(waitpid(pid, nullptr, 0), pid);
}

INSTANTIATE_TEST_SUITE_P(Modes, ChildExitTest,
                         ::testing::Values(ChildExitWaiter::Mode::kAuto, ChildExitWaiter::Mode::kThread));

}  // namespace
}  // namespace udon::mcp
