// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/clients/worker_pool.h"

#include <atomic>
#include <future>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;

// Tasks that block until Open(), like handshakes waiting for a peer.
class Gate {
 public:
  std::function<void()> Task() {
    return [this] {
      ++started_;
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return open_; });
      ++finished_;
    };
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool WaitStarted(int n) {
    for (auto end = std::chrono::steady_clock::now() + 5s; started_ < n;) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(1ms);
    }
    return true;
  }
  int started() const { return started_; }
  int finished() const { return finished_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  std::atomic<int> started_{0}, finished_{0};
};

WorkerPool::Options Bounds(size_t workers, size_t queued) {
  WorkerPool::Options o;
  o.name = "Connect handshakes";
  o.max_workers = workers;
  o.max_queued = queued;
  return o;
}

TEST(WorkerPoolTest, RunsTasksOnAtMostMaxWorkersThreads) {
  Gate gate;
  WorkerPool pool(Bounds(3, 10));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(pool.Submit(gate.Task()).ok());
  ASSERT_TRUE(gate.WaitStarted(3));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(gate.started(), 3);  // the other two wait for a worker
  EXPECT_EQ(pool.workers(), 3u);
  EXPECT_EQ(pool.busy(), 3u);
  EXPECT_EQ(pool.queued(), 2u);
  gate.Open();
  pool.Stop();
  EXPECT_EQ(gate.finished(), 5);
}

TEST(WorkerPoolTest, RefusesBeyondTheQueueAndDoesNotRunTheTask) {
  Gate gate;
  WorkerPool pool(Bounds(2, 1));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(pool.Submit(gate.Task()).ok()) << i;
  ASSERT_TRUE(gate.WaitStarted(2));
  auto token = std::make_shared<int>(0);
  bool ran = false;
  Status refused = pool.Submit([token, &ran] { ran = true; });
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted) << refused.ToString();
  EXPECT_NE(refused.message().find("Connect handshakes: 2 running and 1 waiting"),
            std::string::npos)
      << refused.message();
  EXPECT_EQ(token.use_count(), 1) << "a refused task is destroyed at once";
  gate.Open();
  pool.Stop();
  EXPECT_FALSE(ran);
  EXPECT_EQ(gate.finished(), 3);
}

TEST(WorkerPoolTest, ReusesIdleWorkersAndEndsThemAfterTheIdleTimeout) {
  WorkerPool::Options o = Bounds(4, 0);
  o.idle_timeout = 100ms;
  WorkerPool pool(o);
  for (int i = 0; i < 20; ++i) {
    std::promise<void> done;
    ASSERT_TRUE(pool.Submit([&done] { done.set_value(); }).ok());
    done.get_future().wait();
    while (pool.busy() > 0) std::this_thread::sleep_for(1ms);  // the worker is idle again
  }
  EXPECT_EQ(pool.workers(), 1u) << "one task at a time needs one worker";
  for (auto end = std::chrono::steady_clock::now() + 5s;
       pool.workers() > 0 && std::chrono::steady_clock::now() < end;) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(pool.workers(), 0u);
  std::promise<void> done;
  ASSERT_TRUE(pool.Submit([&done] { done.set_value(); }).ok()) << "a new worker starts";
  EXPECT_EQ(done.get_future().wait_for(5s), std::future_status::ready);
}

TEST(WorkerPoolTest, StopRunsWhatIsQueuedAndRefusesMore) {
  std::atomic<int> ran{0};
  WorkerPool pool(Bounds(1, 100));
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(pool.Submit([&ran] { ++ran; }).ok());
  pool.Stop();
  EXPECT_EQ(ran.load(), 50);
  EXPECT_EQ(pool.Submit([] {}).code(), StatusCode::kUnavailable);
}

TEST(WorkerPoolTest, LoweredBoundsApplyToNewTasks) {
  Gate gate;
  WorkerPool pool(Bounds(4, 0));
  ASSERT_TRUE(pool.Submit(gate.Task()).ok());
  ASSERT_TRUE(pool.Submit(gate.Task()).ok());
  ASSERT_TRUE(gate.WaitStarted(2));
  pool.SetLimits(2, 0);
  EXPECT_EQ(pool.Submit(gate.Task()).code(), StatusCode::kResourceExhausted);
  pool.SetLimits(3, 0);
  EXPECT_TRUE(pool.Submit(gate.Task()).ok());
  gate.Open();
  pool.Stop();
  EXPECT_EQ(gate.finished(), 3);
}

}  // namespace
}  // namespace rdmad
