// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/discovery/probe_wait.h"

#include "gtest/gtest.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;
using Verdict = ProbeWait::Verdict;

TEST(ProbeWaitTest, HoldsADeviceBackUntilTheGraceThenListsItUnprobedWithOneWarning) {
  ProbeWait wait(2s);
  auto t0 = ProbeWait::Clock::now();
  bool warn = true;
  EXPECT_EQ(wait.Failed("rxe1", t0, &warn), Verdict::kHoldBack);
  EXPECT_FALSE(warn);
  EXPECT_TRUE(wait.holding(t0 + 100ms));
  EXPECT_EQ(wait.Failed("rxe1", t0 + 1900ms, &warn), Verdict::kHoldBack);
  EXPECT_EQ(wait.Failed("rxe1", t0 + 2s, &warn), Verdict::kListUnprobed);
  EXPECT_TRUE(warn);
  EXPECT_FALSE(wait.holding(t0 + 2s)) << "a device past its grace needs no quick rescans";
  EXPECT_EQ(wait.Failed("rxe1", t0 + 12s, &warn), Verdict::kListUnprobed);
  EXPECT_FALSE(warn) << "warned once per wait, not on every rescan";
}

TEST(ProbeWaitTest, AProbeEndsTheWait) {
  ProbeWait wait(2s);
  auto t0 = ProbeWait::Clock::now();
  bool warn = false;
  wait.Failed("rxe1", t0, &warn);
  wait.Probed("rxe1");
  EXPECT_FALSE(wait.holding(t0 + 100ms));
  // A later failure (the device reset, say) starts a new grace.
  EXPECT_EQ(wait.Failed("rxe1", t0 + 5s, &warn), Verdict::kHoldBack);
}

TEST(ProbeWaitTest, ADeviceGoneFromSysfsIsForgottenAndComesBackWithANewGrace) {
  ProbeWait wait(2s);
  auto t0 = ProbeWait::Clock::now();
  bool warn = false;
  wait.Failed("rxe1", t0, &warn);
  wait.Failed("rxe2", t0, &warn);
  wait.Keep({"rxe2"});
  EXPECT_EQ(wait.Failed("rxe1", t0 + 3s, &warn), Verdict::kHoldBack) << "rxe1 is a new device";
  EXPECT_EQ(wait.Failed("rxe2", t0 + 3s, &warn), Verdict::kListUnprobed);
}

}  // namespace
}  // namespace rdmad
