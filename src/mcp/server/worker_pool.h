// A bounded pool of worker threads for the HTTP server: at most `max_threads` threads,
// started only when work finds none idle and kept until Shutdown, and a bounded queue.
//
// Two ways in, each with a defined answer when the pool is full:
// - Submit waits for room in the queue (backpressure: the HTTP server's accept loop stops
//   accepting, and further connections wait in the kernel's listen backlog);
// - TryReserve + RunReserved never wait: a reservation is refused when every thread is
//   taken, so a caller can answer at once (the HTTP server: 503) instead of queueing work
//   that must start now (a listen stream, a tool call whose client is waiting).
//
// No error codes.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace udon::mcp {

class WorkerPool {
 public:
  // `max_queued`: jobs waiting for a thread before Submit blocks (at least 1).
  WorkerPool(std::size_t max_threads, std::size_t max_queued);
  ~WorkerPool();  // Shutdown()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `job`; waits while the queue is full. After Shutdown the job is dropped.
  void Submit(std::function<void()> job);
  // Reserves a thread for one job that must start at once: false when every thread is
  // busy or reserved. A reservation is used by RunReserved or returned by Unreserve.
  bool TryReserve();
  void RunReserved(std::function<void()> job);
  void Unreserve();
  // Runs what is queued, then joins every thread. Idempotent.
  void Shutdown();

  std::size_t threads() const;

 private:
  void Enqueue(std::unique_lock<std::mutex>& lock, std::function<void()> job);
  void Work();

  const std::size_t max_threads_;
  const std::size_t max_queued_;
  mutable std::mutex mutex_;
  std::condition_variable work_;  // a job was queued, or shutdown
  std::condition_variable room_;  // the queue has room
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t busy_ = 0;      // threads running a job
  std::size_t reserved_ = 0;  // reservations not yet run
  bool shutdown_ = false;
};

}  // namespace udon::mcp
