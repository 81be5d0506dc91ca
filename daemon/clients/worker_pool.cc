// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/clients/worker_pool.h"

#include <algorithm>

#include "spdlog/spdlog.h"

namespace rdmad {

WorkerPool::WorkerPool(Options options)
    : name_(std::move(options.name)),
      idle_timeout_(options.idle_timeout),
      max_workers_(std::max<size_t>(1, options.max_workers)),
      max_queued_(options.max_queued) {}

WorkerPool::~WorkerPool() { Stop(); }

Status WorkerPool::Submit(Task task) {
  std::list<std::thread> ended;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status::Unavailable(name_ + " is stopping");
    ended = TakeEndedLocked();
    size_t idle = workers_ - busy_;
    size_t startable = max_workers_ > workers_ ? max_workers_ - workers_ : 0;
    if (queue_.size() >= idle + startable + max_queued_) {
      return Status::ResourceExhausted(
          fmt::format("{}: {} running and {} waiting, its limit", name_, busy_, queue_.size()));
    }
    queue_.push_back(std::move(task));
    if (queue_.size() > idle && startable > 0) {
      ++workers_;
      threads_.emplace_back([this] { Run(); });
    }
  }
  cv_.notify_one();
  for (std::thread& t : ended) t.join();
  return Status::Ok();
}

void WorkerPool::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    bool woke = cv_.wait_for(lock, idle_timeout_, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (stopping_ || !woke) break;  // stopping, or idle for idle_timeout
      continue;
    }
    Task task = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    lock.unlock();
    task();
    task = nullptr;  // what it holds is let go outside the lock
    lock.lock();
    --busy_;
    if (workers_ > max_workers_ && !stopping_) break;  // the bound was lowered
  }
  --workers_;
  ended_.push_back(std::this_thread::get_id());
}

std::list<std::thread> WorkerPool::TakeEndedLocked() {
  std::list<std::thread> ended;
  for (std::thread::id id : ended_) {
    auto it = std::find_if(threads_.begin(), threads_.end(),
                           [id](const std::thread& t) { return t.get_id() == id; });
    if (it != threads_.end()) ended.splice(ended.end(), threads_, it);
  }
  ended_.clear();
  return ended;
}

void WorkerPool::SetLimits(size_t max_workers, size_t max_queued) {
  std::lock_guard lock(mu_);
  max_workers_ = std::max<size_t>(1, max_workers);
  max_queued_ = max_queued;
}

void WorkerPool::Stop() {
  std::list<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    threads = std::move(threads_);
    threads_.clear();
    ended_.clear();
  }
  cv_.notify_all();
  for (std::thread& t : threads) t.join();
}

size_t WorkerPool::workers() const {
  std::lock_guard lock(mu_);
  return workers_;
}

size_t WorkerPool::busy() const {
  std::lock_guard lock(mu_);
  return busy_;
}

size_t WorkerPool::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

}  // namespace rdmad
