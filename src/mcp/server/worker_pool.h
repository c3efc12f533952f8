// A bounded pool of worker threads for the HTTP server: at most `max_threads` threads for
// jobs, started only when work finds none idle, and a bounded queue.
//
// Two ways in, each with a defined answer when the pool is full:
// - Submit waits for room in the queue (backpressure: the HTTP server's accept loop stops
//   accepting, and further connections wait in the kernel's listen backlog);
// - TryReserve + RunReserved never wait: a reservation is refused when every thread is
//   taken, so a caller can answer at once (the HTTP server: 503) instead of queueing work
//   that must start now (a listen stream, a tool call whose client is waiting).
//
// A job that turns into a long-lived stream, which mostly waits, holds its thread as
// "lasting" (HoldLasting): the pool counts that thread out of `max_threads` and starts a
// spare when work needs one, as a managed-blocking pool does, so that streams never take
// the threads that requests need. At most `max_lasting` threads are held so; a spare left
// over when a stream ends is retired once it is idle.
//
// No error codes.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace udon::mcp {

class WorkerPool {
 public:
  // `max_queued`: jobs waiting for a thread before Submit blocks (at least 1).
  WorkerPool(std::size_t max_threads, std::size_t max_queued, std::size_t max_lasting = 0);
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

  // The calling thread, running a job of a pool, counted out of its `max_threads` until
  // the hold goes (on any thread). Null when the caller runs no pool's job or its pool
  // holds `max_lasting` already: the caller then refuses the stream or runs counted.
  class Lasting {
   public:
    explicit Lasting(WorkerPool& pool) : pool_(pool) {}
    ~Lasting() { pool_.EndLasting(); }
    Lasting(const Lasting&) = delete;
    Lasting& operator=(const Lasting&) = delete;

   private:
    WorkerPool& pool_;
  };
  static std::shared_ptr<Lasting> HoldLasting();

  std::size_t threads() const;

 private:
  bool BeginLasting();
  void EndLasting();
  void Enqueue(std::unique_lock<std::mutex>& lock, std::function<void()> job);
  void StartThreadIfNeeded();
  bool Surplus() const { return threads_.size() > max_threads_ + lasting_; }
  void Retire();
  void Work();

  const std::size_t max_threads_;
  const std::size_t max_queued_;
  const std::size_t max_lasting_;
  mutable std::mutex mutex_;
  std::condition_variable work_;  // a job was queued, a thread is surplus, or shutdown
  std::condition_variable room_;  // the queue has room
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::vector<std::thread> retired_;  // surplus threads that left, joined later
  std::size_t busy_ = 0;      // threads running a job, lasting ones included
  std::size_t reserved_ = 0;  // reservations not yet run
  std::size_t lasting_ = 0;   // busy threads held by a long-lived stream
  bool shutdown_ = false;
};

}  // namespace udon::mcp
