// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// MrCache's bookkeeping with counting register/release functions (no
// device): one registration per live range and access, released with its
// last user, errors not cached, and balanced under concurrent use.

#include "client/src/rdma/mr_cache.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

class MrCacheTest : public ::testing::Test {
 protected:
  // A fake ibv_mr*: a distinct non-null address per registration.
  MrCache::Register Counting() {
    return [this]() -> StatusOr<ibv_mr*> {
      int n = ++registered_;
      return reinterpret_cast<ibv_mr*>(static_cast<uintptr_t>(0x1000 * n));
    };
  }
  MrCache::Release Releasing() {
    return [this](ibv_mr*) { ++released_; };
  }

  MrCache cache_;
  std::atomic<int> registered_{0}, released_{0};
};

TEST_F(MrCacheTest, TheSameRangeAndAccessShareOneRegistration) {
  auto a = cache_.Get(0x10000, 4096, 7, Counting(), Releasing());
  auto b = cache_.Get(0x10000, 4096, 7, Counting(), Releasing());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(registered_, 1);
  auto other_access = cache_.Get(0x10000, 4096, 3, Counting(), Releasing());
  auto other_length = cache_.Get(0x10000, 2048, 7, Counting(), Releasing());
  ASSERT_TRUE(other_access.ok() && other_length.ok());
  EXPECT_NE((*other_access)->get(), (*a)->get());
  EXPECT_NE((*other_length)->get(), (*a)->get());
  EXPECT_EQ(registered_, 3);
  EXPECT_EQ(cache_.size(), 3u);

  a->reset();
  EXPECT_EQ(released_, 0) << "b still uses it";
  b->reset();
  EXPECT_EQ(released_, 1);
  EXPECT_EQ(cache_.size(), 2u);
  auto again = cache_.Get(0x10000, 4096, 7, Counting(), Releasing());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(registered_, 4) << "a released range registers anew";
}

TEST_F(MrCacheTest, AFailedRegistrationIsReturnedAndNotKept) {
  auto failed = cache_.Get(
      0x20000, 64, 7, [] { return StatusOr<ibv_mr*>(Status::ResourceExhausted("ulimit -l")); },
      Releasing());
  EXPECT_EQ(failed.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(cache_.size(), 0u);
  auto next = cache_.Get(0x20000, 64, 7, Counting(), Releasing());
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(registered_, 1);
}

TEST_F(MrCacheTest, ConcurrentUsersBalanceRegistrationsAndReleases) {
  std::vector<std::jthread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        auto mr = cache_.Get(0x30000 + 4096 * uintptr_t(i % 3), 4096, unsigned(t % 2), Counting(),
                             Releasing());
        ASSERT_TRUE(mr.ok());
        ASSERT_NE((*mr)->get(), nullptr);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(registered_.load(), released_.load());
  EXPECT_EQ(cache_.size(), 0u);
}

}  // namespace
}  // namespace rdmad::internal
