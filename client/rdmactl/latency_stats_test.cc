// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/latency_stats.h"

#include <random>

#include "gtest/gtest.h"

namespace rdmactl {
namespace {

TEST(LatencyStatsTest, EmptyIsAllZeros) {
  LatencySummary s = LatencyStats().Summarize();
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.min_us, 0);
  EXPECT_EQ(s.max_us, 0);
  EXPECT_EQ(s.p99_us, 0);
}

TEST(LatencyStatsTest, OneSampleIsEveryStatistic) {
  LatencyStats stats;
  stats.Add(42.5);
  LatencySummary s = stats.Summarize();
  EXPECT_EQ(s.count, 1u);
  for (double v : {s.min_us, s.avg_us, s.p50_us, s.p90_us, s.p99_us, s.p999_us, s.max_us}) {
    EXPECT_EQ(v, 42.5);
  }
  EXPECT_EQ(s.stddev_us, 0);
}

TEST(LatencyStatsTest, NearestRankPercentiles) {
  LatencyStats stats;
  for (int v = 100; v >= 1; --v) stats.Add(v);  // out of order on purpose
  LatencySummary s = stats.Summarize();
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.min_us, 1);
  EXPECT_EQ(s.max_us, 100);
  EXPECT_DOUBLE_EQ(s.avg_us, 50.5);
  EXPECT_EQ(s.p50_us, 50);
  EXPECT_EQ(s.p90_us, 90);
  EXPECT_EQ(s.p99_us, 99);
  EXPECT_EQ(s.p999_us, 100);
  EXPECT_EQ(stats.samples().front(), 100);  // kept in arrival order
}

TEST(LatencyStatsTest, SmallCounts) {
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 50), 2);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 99), 4);
  EXPECT_EQ(Percentile({1, 2}, 0.001), 1);
  EXPECT_EQ(Percentile({}, 50), 0);
  LatencyStats stats;
  stats.Add(2);
  stats.Add(4);
  EXPECT_DOUBLE_EQ(stats.Summarize().stddev_us, 1);
}

TEST(LatencyStatsTest, OrderHoldsForAnyData) {
  std::mt19937 rng(7);
  std::lognormal_distribution<double> dist(3, 1);
  for (int n : {1, 2, 3, 19, 20, 101, 1000}) {
    LatencyStats stats;
    for (int i = 0; i < n; ++i) stats.Add(dist(rng));
    LatencySummary s = stats.Summarize();
    EXPECT_LE(s.min_us, s.p50_us) << n;
    EXPECT_LE(s.p50_us, s.p90_us) << n;
    EXPECT_LE(s.p90_us, s.p99_us) << n;
    EXPECT_LE(s.p99_us, s.p999_us) << n;
    EXPECT_LE(s.p999_us, s.max_us) << n;
    EXPECT_LE(s.min_us, s.avg_us) << n;
    EXPECT_LE(s.avg_us, s.max_us) << n;
  }
}

TEST(LatencyStatsTest, FormatsMicros) {
  EXPECT_EQ(FormatMicros(0.85), "850 ns");
  EXPECT_EQ(FormatMicros(12.34), "12.3 µs");
  EXPECT_EQ(FormatMicros(1234), "1.234 ms");
  EXPECT_EQ(FormatMicros(2.5e6), "2.50 s");
}

}  // namespace
}  // namespace rdmactl
