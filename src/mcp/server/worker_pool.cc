#include "mcp/server/worker_pool.h"

#include <algorithm>
#include <utility>

namespace udon::mcp {
namespace {

// The pool whose job the calling thread runs, for HoldLasting.
thread_local WorkerPool* current_pool = nullptr;

}  // namespace

WorkerPool::WorkerPool(std::size_t max_threads, std::size_t max_queued, std::size_t max_lasting)
    : max_threads_(std::max<std::size_t>(max_threads, 1)),
      max_queued_(std::max<std::size_t>(max_queued, 1)),
      max_lasting_(max_lasting) {}

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
  if (shutdown_ || busy_ + reserved_ + jobs_.size() >= max_threads_ + lasting_) return false;
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

std::shared_ptr<WorkerPool::Lasting> WorkerPool::HoldLasting() {
  WorkerPool* pool = current_pool;
  if (pool == nullptr || !pool->BeginLasting()) return nullptr;
  return std::make_shared<Lasting>(*pool);
}

bool WorkerPool::BeginLasting() {
  std::lock_guard lock(mutex_);
  if (lasting_ >= max_lasting_) return false;
  ++lasting_;
  StartThreadIfNeeded();  // a job may be waiting for the thread this stream now keeps
  return true;
}

void WorkerPool::EndLasting() {
  {
    std::lock_guard lock(mutex_);
    --lasting_;
  }
  work_.notify_one();  // an idle thread may now be surplus
}

void WorkerPool::Enqueue(std::unique_lock<std::mutex>& lock, std::function<void()> job) {
  jobs_.push_back(std::move(job));
  StartThreadIfNeeded();
  lock.unlock();
  work_.notify_one();
}

// Called with the lock held. A new thread only when every existing one is busy with a job
// already and the threads counted against max_threads leave room.
void WorkerPool::StartThreadIfNeeded() {
  const std::size_t idle = threads_.size() - busy_;
  if (idle >= jobs_.size() || threads_.size() >= max_threads_ + lasting_) return;
  for (std::thread& thread : retired_) thread.join();  // they have left the lock for good
  retired_.clear();
  threads_.emplace_back([this] { Work(); });
}

// Called with the lock held by an idle surplus thread: it leaves, and is joined later.
void WorkerPool::Retire() {
  auto self = std::find_if(threads_.begin(), threads_.end(),
                           [](const std::thread& thread) { return thread.get_id() == std::this_thread::get_id(); });
  retired_.push_back(std::move(*self));
  threads_.erase(self);
  if (!jobs_.empty()) work_.notify_one();  // the wake-up this thread took was for a job
}

void WorkerPool::Work() {
  current_pool = this;
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return shutdown_ || !jobs_.empty() || Surplus(); });
    if (!shutdown_ && Surplus()) {
      Retire();
      return;
    }
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
    for (std::thread& thread : retired_) threads.push_back(std::move(thread));
    retired_.clear();
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
