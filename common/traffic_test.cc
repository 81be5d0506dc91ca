// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/traffic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace rdmad {
namespace {

TEST(TrafficTest, ABucketHoldsDurationsUpToItsBound) {
  EXPECT_EQ(LatencyBucket(0), 0u);
  EXPECT_EQ(LatencyBucket(1000), 0u);  // 1 us: the first bound, inclusive
  EXPECT_EQ(LatencyBucket(1001), 1u);
  EXPECT_EQ(LatencyBucket(2000), 1u);
  EXPECT_EQ(LatencyBucket(2001), 2u);
  EXPECT_EQ(LatencyBucket(999'999'999), kLatencyBuckets - 2);
  EXPECT_EQ(LatencyBucket(1'000'000'000), kLatencyBuckets - 2);  // 1 s
  EXPECT_EQ(LatencyBucket(1'000'000'001), kLatencyBuckets - 1);  // slower than every bound
  EXPECT_EQ(LatencyBucket(~0ull), kLatencyBuckets - 1);
}

// Against a plain search over the bounds: every bound and its neighbours,
// every power of two and its neighbours, in nanoseconds around each.
TEST(TrafficTest, ABucketIsTheFirstBoundNotBelowTheDuration) {
  auto reference = [](uint64_t ns) {
    uint64_t us_ceil = ns / 1000 + (ns % 1000 != 0 ? 1 : 0);
    return size_t(std::lower_bound(kLatencyBoundsUs.begin(), kLatencyBoundsUs.end(), us_ceil) -
                  kLatencyBoundsUs.begin());
  };
  std::vector<uint64_t> us;
  for (uint64_t bound : kLatencyBoundsUs) us.insert(us.end(), {bound - 1, bound, bound + 1});
  for (int bit = 0; bit < 54; ++bit) {
    uint64_t p = uint64_t(1) << bit;
    us.insert(us.end(), {p - 1, p, p + 1});
  }
  for (uint64_t u : us) {
    for (uint64_t ns : {u * 1000 - 1, u * 1000, u * 1000 + 1}) {
      EXPECT_EQ(LatencyBucket(ns), reference(ns)) << ns << " ns";
    }
  }
}

TEST(TrafficTest, TotalsAddAndALaterAccountIsNotBelow) {
  TrafficTotals a;
  a.messages_sent = 2;
  a.bytes_sent = 100;
  a.latency.Observe(1500);
  TrafficTotals b = a;
  b.reads = 1;
  b.bytes_read = 4096;
  b.latency.Observe(3'000'000);
  EXPECT_TRUE(b.NotBelow(a));
  EXPECT_FALSE(a.NotBelow(b));
  EXPECT_FALSE(a == b);
  TrafficTotals sum = a;
  sum.Add(b);
  EXPECT_EQ(sum.messages_sent, 4u);
  EXPECT_EQ(sum.bytes_sent, 200u);
  EXPECT_EQ(sum.bytes_read, 4096u);
  EXPECT_EQ(sum.latency.count(), 3u);
  EXPECT_EQ(sum.latency.buckets[1], 2u);
  EXPECT_EQ(sum.latency.sum_ns, 1500u + 1500u + 3'000'000u);
  // One counter lower is an older account, whatever the others say.
  TrafficTotals older = b;
  older.bytes_sent -= 1;
  older.writes = 5;
  EXPECT_FALSE(older.NotBelow(b));
  EXPECT_FALSE(b.NotBelow(older));
}

}  // namespace
}  // namespace rdmad
