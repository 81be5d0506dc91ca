// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// WorkerPool runs blocking tasks (the local API's Connect handshakes, which
// wait for the peer) on a bounded set of threads instead of a thread per
// call. Workers start as tasks arrive, up to max_workers, and one that has
// been idle for idle_timeout ends. A task submitted while every worker is
// busy waits in a FIFO queue of at most max_queued tasks; beyond that
// Submit refuses it with RESOURCE_EXHAUSTED (the task is destroyed, not
// run). Stop (and the destructor) refuses new tasks, lets the workers run
// what is queued, and joins them.
//
// Thread safety: every method may be called from any thread; Submit also
// from a task. Stop and the destructor must not be called from a task.

#ifndef RDMAD_DAEMON_CLIENTS_WORKER_POOL_H_
#define RDMAD_DAEMON_CLIENTS_WORKER_POOL_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>

#include "rdmad/status.h"

namespace rdmad {

class WorkerPool {
 public:
  struct Options {
    std::string name = "worker pool";  // in messages
    size_t max_workers = 16;           // at least 1
    size_t max_queued = 16;            // tasks waiting for a worker
    std::chrono::milliseconds idle_timeout{30000};
  };

  // A task: the pool runs any kind of work, hence type-erased.
  using Task = std::function<void()>;

  explicit WorkerPool(Options options);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs task on a worker, now or once one is free. RESOURCE_EXHAUSTED
  // when the queue is full, UNAVAILABLE after Stop.
  Status Submit(Task task);
  // New bounds (a config reload); running tasks finish, excess workers
  // end when idle.
  void SetLimits(size_t max_workers, size_t max_queued);
  void Stop();

  size_t workers() const;  // threads running
  size_t busy() const;     // of them, running a task
  size_t queued() const;

 private:
  void Run();  // a worker's loop
  // The threads of workers that have left Run, to join outside the lock.
  std::list<std::thread> TakeEndedLocked();  // mu_ held

  const std::string name_;
  const std::chrono::milliseconds idle_timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  size_t max_workers_;                // guarded by mu_
  size_t max_queued_;                 // guarded by mu_
  std::deque<Task> queue_;            // guarded by mu_
  std::list<std::thread> threads_;    // guarded by mu_
  std::list<std::thread::id> ended_;  // workers that left Run; guarded by mu_
  size_t workers_ = 0;                // in Run; guarded by mu_
  size_t busy_ = 0;                   // guarded by mu_
  bool stopping_ = false;             // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CLIENTS_WORKER_POOL_H_
