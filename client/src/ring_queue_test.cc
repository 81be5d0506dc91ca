// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/ring_queue.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <random>

namespace rdmad::internal {
namespace {

size_t HeapInUse() { return mallinfo2().uordblks; }

TEST(RingQueueTest, AnEmptyQueueAllocatesNothing) {
  size_t before = HeapInUse();
  auto queues = std::make_unique<RingQueue<int>[]>(64);
  size_t with_queues = HeapInUse();
  // The array itself, nothing per queue beyond its three words.
  EXPECT_LE(with_queues - before, 64 * sizeof(RingQueue<int>) + 64);
  EXPECT_TRUE(queues[0].empty());
  EXPECT_EQ(queues[63].size(), 0u);
}

TEST(RingQueueTest, KeepsOrderAcrossWrapAndGrowth) {
  RingQueue<int> q;
  std::deque<int> want;
  std::mt19937 rng(7);
  int next = 0;
  for (int step = 0; step < 20000; ++step) {
    if (want.empty() || rng() % 3 != 0) {
      q.push_back(next);
      want.push_back(next++);
    } else {
      ASSERT_EQ(q.front(), want.front());
      q.pop_front();
      want.pop_front();
    }
    ASSERT_EQ(q.size(), want.size());
    if (!want.empty()) {
      ASSERT_EQ(q.back(), want.back());
      size_t i = rng() % want.size();
      ASSERT_EQ(q[i], want[i]) << "at " << i << " of " << want.size();
    }
  }
  EXPECT_TRUE(std::equal(q.begin(), q.end(), want.begin(), want.end()));
}

TEST(RingQueueTest, EraseKeepsTheOthersInOrder) {
  RingQueue<int> q;
  for (int i = 0; i < 6; ++i) q.push_back(i);
  q.pop_front();  // the front is no longer at the array's start
  q.pop_front();
  for (int i = 6; i < 9; ++i) q.push_back(i);  // wraps: 2..8 in a ring of 8
  for (auto it = q.begin(); it != q.end();) it = (*it % 2 == 0) ? q.erase(it) : std::next(it);
  std::vector<int> left(q.begin(), q.end());
  EXPECT_EQ(left, (std::vector<int>{3, 5, 7}));
  auto last = q.begin();
  std::advance(last, 2);
  auto after = q.erase(last);  // the last one: nothing after it
  EXPECT_EQ(after, q.end());
  EXPECT_EQ(std::vector<int>(q.begin(), q.end()), (std::vector<int>{3, 5}));
}

TEST(RingQueueTest, PoppedAndClearedSlotsLetGoOfWhatTheyHeld) {
  auto held = std::make_shared<int>(1);
  RingQueue<std::shared_ptr<int>> q;
  q.push_back(held);
  q.emplace_back(held);
  EXPECT_EQ(held.use_count(), 3);
  q.pop_front();
  EXPECT_EQ(held.use_count(), 2);
  q.clear();
  EXPECT_EQ(held.use_count(), 1);
  EXPECT_TRUE(q.empty());
  q.push_back(held);  // usable after clear
  EXPECT_EQ(*q.front(), 1);
}

}  // namespace
}  // namespace rdmad::internal
