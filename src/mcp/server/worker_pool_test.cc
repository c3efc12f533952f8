#include "mcp/server/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace udon::mcp {
namespace {

// Jobs that wait until released.
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  int waiting = 0;
  void Wait() {
    std::unique_lock lock(mutex);
    ++waiting;
    cv.notify_all();
    cv.wait(lock, [this] { return open; });
  }
  void AwaitWaiting(int count) {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return waiting >= count; });
  }
  void Open() {
    std::lock_guard lock(mutex);
    open = true;
    cv.notify_all();
  }
};

TEST(WorkerPoolTest, RunsEveryJobOnNoMoreThreadsThanItsBound) {
  std::atomic<int> ran{0};
  WorkerPool pool(3, 100);
  for (int i = 0; i < 100; ++i) pool.Submit([&ran] { ++ran; });
  EXPECT_LE(pool.threads(), 3u);
  pool.Shutdown();  // runs what is queued
  EXPECT_EQ(ran.load(), 100);
}

TEST(WorkerPoolTest, AReservationIsRefusedWhenEveryThreadIsTaken) {
  Gate gate;
  WorkerPool pool(2, 1);
  ASSERT_TRUE(pool.TryReserve());
  ASSERT_TRUE(pool.TryReserve());
  EXPECT_FALSE(pool.TryReserve());  // both reserved, none running yet
  pool.RunReserved([&gate] { gate.Wait(); });
  pool.RunReserved([&gate] { gate.Wait(); });
  gate.AwaitWaiting(2);
  EXPECT_FALSE(pool.TryReserve());  // both busy
  gate.Open();
  pool.Shutdown();
  EXPECT_FALSE(pool.TryReserve());  // shut down
}

TEST(WorkerPoolTest, AnUnusedReservationIsReturned) {
  WorkerPool pool(1, 1);
  ASSERT_TRUE(pool.TryReserve());
  EXPECT_FALSE(pool.TryReserve());
  pool.Unreserve();
  EXPECT_TRUE(pool.TryReserve());
  pool.Unreserve();
}

TEST(WorkerPoolTest, AQueuedJobCountsAgainstReservations) {
  Gate gate;
  WorkerPool pool(1, 4);
  pool.Submit([&gate] { gate.Wait(); });
  gate.AwaitWaiting(1);
  pool.Submit([] {});   // queued behind the busy thread
  EXPECT_FALSE(pool.TryReserve());
  gate.Open();
  pool.Shutdown();
}

}  // namespace
}  // namespace udon::mcp
