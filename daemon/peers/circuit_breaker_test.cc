// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/circuit_breaker.h"

#include "gtest/gtest.h"

namespace rdmad {
namespace {

using std::chrono::seconds;
using State = CircuitBreaker::State;

const CircuitBreaker::Time kStart = CircuitBreaker::Time() + std::chrono::hours(1);

TEST(CircuitBreakerTest, OpensAfterNConsecutiveFailures) {
  CircuitBreaker b({.failures = 3, .open_for = seconds(30)});
  EXPECT_FALSE(b.OnFailure(kStart));
  EXPECT_FALSE(b.OnFailure(kStart));
  EXPECT_EQ(b.state(), State::kClosed);
  EXPECT_TRUE(b.Allow(kStart));
  EXPECT_TRUE(b.OnFailure(kStart + seconds(1)));
  EXPECT_EQ(b.state(), State::kOpen);
  EXPECT_EQ(b.open_until(), kStart + seconds(31));
  EXPECT_EQ(b.consecutive_failures(), 3);
}

TEST(CircuitBreakerTest, QuickFailuresOpenOnlyOnceTheySpanMinSpan) {
  CircuitBreaker b({.failures = 3, .open_for = seconds(30), .min_span = seconds(10)});
  for (int i = 0; i < 6; ++i) EXPECT_FALSE(b.OnFailure(kStart + seconds(i)));  // a peer starting
  EXPECT_EQ(b.state(), State::kClosed);
  EXPECT_TRUE(b.OnFailure(kStart + seconds(10)));
  EXPECT_EQ(b.state(), State::kOpen);
  EXPECT_TRUE(b.OnSuccess());  // a new run starts its span again
  EXPECT_FALSE(b.OnFailure(kStart + seconds(60)));
  EXPECT_FALSE(b.OnFailure(kStart + seconds(61)));
  EXPECT_FALSE(b.OnFailure(kStart + seconds(62)));
  EXPECT_EQ(b.state(), State::kClosed);
}

TEST(CircuitBreakerTest, ASuccessResetsTheCount) {
  CircuitBreaker b({.failures = 2, .open_for = seconds(30)});
  EXPECT_FALSE(b.OnFailure(kStart));
  EXPECT_FALSE(b.OnSuccess());  // was closed
  EXPECT_FALSE(b.OnFailure(kStart));
  EXPECT_EQ(b.state(), State::kClosed);
}

TEST(CircuitBreakerTest, NoAttemptWhileOpenThenOneProbe) {
  CircuitBreaker b({.failures = 1, .open_for = seconds(30)});
  ASSERT_TRUE(b.OnFailure(kStart));
  EXPECT_FALSE(b.Allow(kStart));
  EXPECT_FALSE(b.Allow(kStart + seconds(29)));
  EXPECT_EQ(b.state(), State::kOpen);
  EXPECT_TRUE(b.Allow(kStart + seconds(30)));
  EXPECT_EQ(b.state(), State::kHalfOpen);
}

TEST(CircuitBreakerTest, ProbeSuccessCloses) {
  CircuitBreaker b({.failures = 2, .open_for = seconds(30)});
  b.OnFailure(kStart);
  b.OnFailure(kStart);
  ASSERT_TRUE(b.Allow(kStart + seconds(30)));
  EXPECT_TRUE(b.OnSuccess());
  EXPECT_EQ(b.state(), State::kClosed);
  EXPECT_EQ(b.consecutive_failures(), 0);
  EXPECT_FALSE(b.OnFailure(kStart + seconds(31)));  // counts from 0 again
}

TEST(CircuitBreakerTest, ProbeFailureReopensAtOnce) {
  CircuitBreaker b({.failures = 2, .open_for = seconds(30)});
  b.OnFailure(kStart);
  b.OnFailure(kStart);
  ASSERT_TRUE(b.Allow(kStart + seconds(30)));
  EXPECT_TRUE(b.OnFailure(kStart + seconds(31)));
  EXPECT_EQ(b.state(), State::kOpen);
  EXPECT_EQ(b.open_until(), kStart + seconds(61));
  EXPECT_FALSE(b.Allow(kStart + seconds(60)));
}

TEST(CircuitBreakerTest, ZeroFailuresNeverOpens) {
  CircuitBreaker b({.failures = 0, .open_for = seconds(30)});
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(b.OnFailure(kStart));
  EXPECT_EQ(b.state(), State::kClosed);
  EXPECT_TRUE(b.Allow(kStart));
}

TEST(CircuitBreakerTest, StateNames) {
  EXPECT_EQ(CircuitStateName(State::kClosed), "closed");
  EXPECT_EQ(CircuitStateName(State::kOpen), "open");
  EXPECT_EQ(CircuitStateName(State::kHalfOpen), "half-open");
}

}  // namespace
}  // namespace rdmad
