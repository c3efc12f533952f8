#include "mcp/server/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

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

// Submits `count` jobs that each hold their thread as lasting, if they can, until `gate`
// opens; returns once they all wait, with how many got a hold.
int HoldStreams(WorkerPool& pool, Gate& gate, int count) {
  std::atomic<int> held{0};
  for (int i = 0; i < count; ++i) {
    pool.Submit([&gate, &held] {
      auto lasting = WorkerPool::HoldLasting();
      if (lasting) ++held;
      gate.Wait();  // `held` is not used past this point: it may be gone
    });
  }
  gate.AwaitWaiting(count);
  return held.load();
}

TEST(WorkerPoolTest, ALastingThreadIsCountedOutOfTheBound) {
  Gate streams;
  Gate requests;
  WorkerPool pool(1, 4, 2);
  EXPECT_EQ(HoldStreams(pool, streams, 2), 2);  // both hold a thread, and the bound is one
  ASSERT_TRUE(pool.TryReserve());  // the one thread for other work is still there
  EXPECT_FALSE(pool.TryReserve());
  pool.RunReserved([&requests] { requests.Wait(); });
  requests.AwaitWaiting(1);
  EXPECT_EQ(pool.threads(), 3u);
  requests.Open();
  streams.Open();
  pool.Shutdown();
}

TEST(WorkerPoolTest, LastingThreadsAreBoundedAndOnlyAPoolsJobHoldsOne) {
  EXPECT_EQ(WorkerPool::HoldLasting(), nullptr);  // not a pool's thread
  Gate gate;
  WorkerPool pool(4, 4, 1);
  EXPECT_EQ(HoldStreams(pool, gate, 2), 1);
  gate.Open();
  pool.Shutdown();
}

TEST(WorkerPoolTest, ASpareLeftOverWhenAStreamEndsIsRetired) {
  Gate stream;
  WorkerPool pool(1, 4, 1);
  ASSERT_EQ(HoldStreams(pool, stream, 1), 1);
  Gate request;
  pool.Submit([&request] { request.Wait(); });
  request.AwaitWaiting(1);
  EXPECT_EQ(pool.threads(), 2u);  // the spare
  stream.Open();
  request.Open();
  // Both threads end up idle: one is surplus and leaves. A bounded wait, not a timing.
  for (int i = 0; i < 10000 && pool.threads() > 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(pool.threads(), 1u);
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) pool.Submit([&ran] { ++ran; });
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 10);
}

}  // namespace
}  // namespace udon::mcp
