// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/bench_clock.h"

#include <gtest/gtest.h>

#include <thread>

namespace rdmactl {
namespace {

uint64_t Fixed() { return 42; }

TEST(TickClockTest, MicrosScaleTicksAndNeverGoBackwards) {
  TickClock clock(2500.0, &Fixed);  // 2.5 GHz
  EXPECT_EQ(clock.Now(), 42u);
  EXPECT_DOUBLE_EQ(clock.Micros(1000, 26000), 10.0);
  EXPECT_DOUBLE_EQ(clock.Micros(26000, 1000), 0.0);
}

TEST(TickClockTest, TheCalibratedClockAgreesWithTheSteadyClock) {
  const TickClock& clock = TickClock::Calibrated();
  ASSERT_GT(clock.ticks_per_us(), 0);
  auto t0 = std::chrono::steady_clock::now();
  uint64_t k0 = clock.Now();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  uint64_t k1 = clock.Now();
  double steady_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  // Within 10 %: the calibration window is 20 ms, and a loaded host may
  // stretch either read.
  EXPECT_NEAR(clock.Micros(k0, k1), steady_us, steady_us * 0.1);
}

}  // namespace
}  // namespace rdmactl
