// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/backoff.h"

#include "gtest/gtest.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;

TEST(BackoffTest, DoublesFrom100msTo10s) {
  ManualClock clock;
  Backoff backoff({milliseconds(100), milliseconds(10000), 0.0}, clock);
  std::vector<int64_t> delays;
  for (int i = 0; i < 10; ++i) delays.push_back(backoff.Next().count());
  EXPECT_EQ(delays,
            (std::vector<int64_t>{100, 200, 400, 800, 1600, 3200, 6400, 10000, 10000, 10000}));
}

TEST(BackoffTest, JitterStaysWithinTheBand) {
  ManualClock clock;
  clock.SetRandom(0.0);
  Backoff backoff({milliseconds(1000), milliseconds(10000), 0.2}, clock);
  EXPECT_EQ(backoff.Next().count(), 800);  // r = 0: -20%
  clock.SetRandom(0.999999);
  EXPECT_EQ(backoff.Next().count(), 2399);  // r -> 1: +20%
  clock.SetRandom(0.5);
  EXPECT_EQ(backoff.Next().count(), 4000);
}

TEST(BackoffTest, ResetStartsOver) {
  ManualClock clock;
  Backoff backoff({milliseconds(100), milliseconds(10000), 0.0}, clock);
  backoff.Next();
  backoff.Next();
  backoff.Reset();
  EXPECT_EQ(backoff.Next().count(), 100);
}

TEST(BackoffTest, DefaultRandomIsWithinTheBand) {
  Backoff backoff({milliseconds(100), milliseconds(100), 0.5});
  for (int i = 0; i < 100; ++i) {
    int64_t d = backoff.Next().count();
    EXPECT_GE(d, 50);
    EXPECT_LE(d, 150);
  }
}

}  // namespace
}  // namespace rdmad
