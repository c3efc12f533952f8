#include "mcp/server/worker_pool.h"

#include <algorithm>
#include <utility>

namespace udon::mcp {

WorkerPool::WorkerPool(std::size_t max_threads, std::size_t max_queued)
    : max_threads_(std::max<std::size_t>(max_threads, 1)), max_queued_(std::max<std::size_t>(max_queued, 1)) {}

WorkerPool::~WorkerPool() { Shutdown(); }

void WorkerPool::Submit(std::function<void()> job) {
  std::unique_lock lock(mutex_);
  room_.wait(lock, [this] { return shutdown_ || jobs_.size() < max_queued_; });
  if (shutdown_) return;
  Enqueue(lock, std::move(job));
}

bool WorkerPool::TryReserve() {
  std::lock_guard lock(mutex_);
  // Queued jobs will take threads too: a reservation must not wait behind them.
  if (shutdown_ || busy_ + reserved_ + jobs_.size() >= max_threads_) return false;
  ++reserved_;
  return true;
}

void WorkerPool::RunReserved(std::function<void()> job) {
  std::unique_lock lock(mutex_);
  --reserved_;
  if (shutdown_) return;
  Enqueue(lock, std::move(job));
}

void WorkerPool::Unreserve() {
  std::lock_guard lock(mutex_);
  --reserved_;
}

void WorkerPool::Enqueue(std::unique_lock<std::mutex>& lock, std::function<void()> job) {
  jobs_.push_back(std::move(job));
  // A new thread only when every existing one is busy with a job already.
  const std::size_t idle = threads_.size() - busy_;
  if (idle < jobs_.size() && threads_.size() < max_threads_) {
    threads_.emplace_back([this] { Work(); });
  }
  lock.unlock();
  work_.notify_one();
}

void WorkerPool::Work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // shutdown, nothing left to run
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    ++busy_;
    lock.unlock();
    room_.notify_one();
    job();
    job = nullptr;  // whatever the job holds is released before the thread counts as idle
    lock.lock();
    --busy_;
  }
}

void WorkerPool::Shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    shutdown_ = true;
    threads.swap(threads_);
  }
  work_.notify_all();
  room_.notify_all();
  for (std::thread& thread : threads) thread.join();
}

std::size_t WorkerPool::threads() const {
  std::lock_guard lock(mutex_);
  return threads_.size();
}

}  // namespace udon::mcp
