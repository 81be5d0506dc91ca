// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/events/bounded_stream.h"

#include <atomic>
#include <condition_variable>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

using Stream = BoundedStream<int>;

// Records the writer calls; a write completes when the test says so.
class FakeWriter : public Stream::Writer {
 public:
  void Write(const int& item) override {
    std::lock_guard lock(mu);
    written.push_back(item);
    ++in_flight;
  }
  void Finish(const Status& status) override {
    std::lock_guard lock(mu);
    ++finishes;
    final = status;
  }
  std::mutex mu;
  std::vector<int> written;
  int in_flight = 0;
  int finishes = 0;
  Status final;
};

Stream::Options FailAfter(size_t n) {
  Stream::Options o;
  o.max_queued = n;
  o.overflow = Status::ResourceExhausted("not reading (2 queued)");
  return o;
}

TEST(BoundedStreamTest, WritesOneAtATimeInOrder) {
  FakeWriter w;
  Stream s(&w, FailAfter(8));
  EXPECT_EQ(s.Push(1), Stream::Pushed::kQueued);
  EXPECT_EQ(s.Push(2), Stream::Pushed::kQueued);
  EXPECT_EQ(s.Push(3), Stream::Pushed::kQueued);
  EXPECT_EQ(w.written, std::vector<int>({1}));  // 2 and 3 wait
  EXPECT_EQ(s.queued(), 2u);
  s.OnWriteDone(true);
  EXPECT_EQ(w.written, std::vector<int>({1, 2}));
  s.OnWriteDone(true);
  s.OnWriteDone(true);
  EXPECT_EQ(w.written, std::vector<int>({1, 2, 3}));
  EXPECT_TRUE(s.idle());
  EXPECT_EQ(w.finishes, 0);
}

TEST(BoundedStreamTest, AFullFailStreamEndsAfterTheWriteInFlightAndFreesItsQueue) {
  FakeWriter w;
  Stream s(&w, FailAfter(2));
  s.Push(1);  // in flight
  s.Push(2);
  s.Push(3);
  EXPECT_EQ(s.Push(4), Stream::Pushed::kOverflowed);
  EXPECT_EQ(s.queued(), 0u);  // freed at once
  EXPECT_TRUE(s.ending());
  EXPECT_EQ(s.Push(5), Stream::Pushed::kEnding);
  EXPECT_EQ(w.finishes, 0);  // 1 is still being written
  s.OnWriteDone(true);
  EXPECT_EQ(w.finishes, 1);
  EXPECT_EQ(w.final.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(w.final.message(), "not reading (2 queued)");
  EXPECT_EQ(w.written, std::vector<int>({1}));
}

TEST(BoundedStreamTest, KeepLatestReplacesWhatWaitsAndNeverRefuses) {
  FakeWriter w;
  Stream::Options o;
  o.overflow_policy = Stream::Overflow::kKeepLatest;
  Stream s(&w, o);
  s.Push(1);
  for (int i = 2; i <= 100; ++i) EXPECT_EQ(s.Push(i), Stream::Pushed::kQueued);
  EXPECT_EQ(s.queued(), 1u);
  s.OnWriteDone(true);
  s.OnWriteDone(true);
  EXPECT_EQ(w.written, std::vector<int>({1, 100}));
  EXPECT_EQ(w.finishes, 0);
}

TEST(BoundedStreamTest, CloseWritesTheQueueFirstAbortDropsIt) {
  FakeWriter closed_w;
  Stream closed(&closed_w, FailAfter(8));
  closed.Push(1);
  closed.Push(2);
  closed.Close(Status::Ok());
  EXPECT_EQ(closed.Push(3), Stream::Pushed::kEnding);
  closed.OnWriteDone(true);
  EXPECT_EQ(closed_w.finishes, 0);
  closed.OnWriteDone(true);
  EXPECT_EQ(closed_w.written, std::vector<int>({1, 2}));
  EXPECT_EQ(closed_w.finishes, 1);
  EXPECT_TRUE(closed_w.final.ok());

  FakeWriter aborted_w;
  Stream aborted(&aborted_w, FailAfter(8));
  aborted.Push(1);
  aborted.Push(2);
  aborted.Abort(Status::Cancelled("cancelled by the client"));
  aborted.Close(Status::Ok());  // the first ending wins
  aborted.OnWriteDone(true);
  EXPECT_EQ(aborted_w.written, std::vector<int>({1}));
  EXPECT_EQ(aborted_w.finishes, 1);
  EXPECT_EQ(aborted_w.final.code(), StatusCode::kCancelled);
}

TEST(BoundedStreamTest, AFailedWriteEndsTheStreamAtOnce) {
  FakeWriter w;
  Stream::Options o = FailAfter(8);
  o.write_failed = Status::Unavailable("client gone");
  Stream s(&w, o);
  s.Push(1);
  s.Push(2);
  s.OnWriteDone(false);
  EXPECT_EQ(w.finishes, 1);
  EXPECT_EQ(w.final.message(), "client gone");
  EXPECT_EQ(w.written, std::vector<int>({1}));
  s.OnWriteDone(true);  // a stray completion changes nothing
  s.Abort(Status::Internal("late"));
  EXPECT_EQ(w.finishes, 1);
}

TEST(BoundedStreamTest, AnEmptyStreamFinishesAtOnceAndHoldForWriteQueuesBehindIt) {
  FakeWriter w;
  Stream s(&w, FailAfter(8));
  s.HoldForWrite();  // the headers are being sent
  s.Push(7);
  EXPECT_TRUE(w.written.empty());
  s.OnWriteDone(true);
  EXPECT_EQ(w.written, std::vector<int>({7}));
  s.OnWriteDone(true);
  s.Close(Status::Ok());
  EXPECT_EQ(w.finishes, 1);
}

TEST(BoundedStreamTest, StampsRunInWriteOrder) {
  FakeWriter w;
  Stream s(&w, FailAfter(8));
  int next = 0;
  for (int i = 0; i < 4; ++i) s.Push(0, [&](int& item) { item = ++next; });
  for (int i = 0; i < 4; ++i) s.OnWriteDone(true);
  EXPECT_EQ(w.written, std::vector<int>({1, 2, 3, 4}));
}

// Producers on several threads and a writer that completes writes on
// another: every item is written once, each producer's in its order, and
// Finish comes last, once.
TEST(BoundedStreamTest, ConcurrentProducersAndCompletions) {
  constexpr int kProducers = 4;
  constexpr int kEach = 2000;
  class ThreadedWriter : public Stream::Writer {
   public:
    void Write(const int& item) override {
      std::lock_guard lock(mu);
      written.push_back(item);
      pending = true;
      cv.notify_one();
    }
    void Finish(const Status& status) override {
      std::lock_guard lock(mu);
      ++finishes;
      finished_after = written.size();
      cv.notify_one();
    }
    std::mutex mu;
    std::condition_variable cv;
    std::vector<int> written;
    bool pending = false;
    int finishes = 0;
    size_t finished_after = 0;
  } w;
  Stream s(&w, FailAfter(kProducers * kEach));
  std::jthread completer([&] {
    for (;;) {
      std::unique_lock lock(w.mu);
      w.cv.wait(lock, [&] { return w.pending || w.finishes > 0; });
      if (w.finishes > 0) return;
      w.pending = false;
      lock.unlock();
      s.OnWriteDone(true);
    }
  });
  std::vector<std::jthread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kEach; ++i) s.Push(p * kEach + i);
    });
  }
  for (auto& t : producers) t.join();
  s.Close(Status::Ok());
  completer.join();
  ASSERT_EQ(w.written.size(), size_t(kProducers * kEach));
  EXPECT_EQ(w.finishes, 1);
  EXPECT_EQ(w.finished_after, w.written.size());
  std::vector<int> last(kProducers, -1);
  for (int item : w.written) {
    int p = item / kEach;
    EXPECT_GT(item, last[p]);
    last[p] = item;
  }
}

}  // namespace
}  // namespace rdmad
