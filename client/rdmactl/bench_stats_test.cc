// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/bench_stats.h"

#include "gtest/gtest.h"

namespace rdmactl {
namespace {

TEST(BenchStatsTest, PerftestUnits) {
  // 1 GiB in 1 s: 1024 MB/s (2^20) and 8.589934592 Gb/s (10^9 bits).
  Timeline t{{0.5, 1ull << 29, 512}, {1.0, 1ull << 30, 1024}};
  Throughput r = Summarize(t);
  EXPECT_EQ(r.bytes, 1ull << 30);
  EXPECT_EQ(r.messages, 1024u);
  EXPECT_DOUBLE_EQ(r.seconds, 1.0);
  EXPECT_DOUBLE_EQ(r.avg_mbps, 1024);
  EXPECT_DOUBLE_EQ(r.avg_gbps, 8.589934592);
  EXPECT_DOUBLE_EQ(r.msg_rate_mps, 0.001024);
  EXPECT_DOUBLE_EQ(r.peak_mbps, 1024);  // steady: peak = average
}

TEST(BenchStatsTest, PeakIsTheBestWindow) {
  // 1 MB/ms for 50 ms, then 4 MB/ms for 50 ms (1 ms steps).
  Timeline t;
  uint64_t bytes = 0;
  for (int ms = 1; ms <= 100; ++ms) {
    bytes += ms <= 50 ? 1000000 : 4000000;
    t.push_back({ms / 1000.0, bytes, uint64_t(ms)});
  }
  EXPECT_DOUBLE_EQ(PeakWindow(0.1), 0.010);
  EXPECT_DOUBLE_EQ(PeakWindow(10), 0.5);
  EXPECT_NEAR(PeakRate(t, 0.010), 4e9, 1);
  Throughput r = Summarize(t);
  EXPECT_NEAR(r.avg_mbps, 2.5e9 / kMegabyte, 1e-6);
  EXPECT_NEAR(r.peak_mbps, 4e9 / kMegabyte, 1e-6);
}

TEST(BenchStatsTest, OneEarlyCompletionIsNoPeak) {
  // A burst in the first microsecond does not count: windows are >= 10 ms.
  Timeline t{{1e-6, 1000, 1}, {1.0, 2000, 2}};
  EXPECT_NEAR(PeakRate(t, 0.010), 1000, 0.01);  // from the burst to 1.0
  EXPECT_EQ(PeakRate(t, 2.0), 0);               // no window that long
  EXPECT_DOUBLE_EQ(Summarize(t).peak_mbps, Summarize(t).avg_mbps);
}

TEST(BenchStatsTest, SecondsOverrideTheLastEvent) {
  Timeline t{{1.0, 1000, 1}};
  EXPECT_DOUBLE_EQ(Summarize(t, 2.0).seconds, 2.0);
  EXPECT_DOUBLE_EQ(Summarize(t, 2.0).avg_mbps, 500 / kMegabyte);
  EXPECT_EQ(Summarize({}).bytes, 0u);
}

TEST(BenchStatsTest, MergeSumsChannels) {
  Timeline a{{1, 10, 1}, {3, 30, 3}};
  Timeline b{{2, 100, 1}, {3, 200, 2}};
  Timeline m = MergeTimelines({a, b});
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].t, 1);
  EXPECT_EQ(m[0].bytes, 10u);
  EXPECT_EQ(m[1].bytes, 110u);
  EXPECT_EQ(m[1].messages, 2u);
  EXPECT_EQ(m[2].t, 3);  // both channels' events at t = 3 in one
  EXPECT_EQ(m[2].bytes, 230u);
  EXPECT_EQ(m[2].messages, 5u);
  EXPECT_TRUE(MergeTimelines({}).empty());
}

TEST(BenchStatsTest, RecorderThinsButKeepsTheLast) {
  TimelineRecorder r;
  for (int i = 1; i <= 1000; ++i) r.Add(i * 1e-6, i * 10, i);  // 1 µs apart
  Timeline t = r.Finish();
  EXPECT_LE(t.size(), 22u);
  EXPECT_EQ(t.front().messages, 1u);
  EXPECT_EQ(t.back().messages, 1000u);
  EXPECT_EQ(t.back().bytes, 10000u);
}

TEST(BenchStatsTest, LimitAndCpu) {
  EXPECT_FALSE((BenchLimit{3, 0}).Done(2, 100));
  EXPECT_TRUE((BenchLimit{3, 0}).Done(3, 0));
  EXPECT_FALSE((BenchLimit{0, 1.5}).Done(1000, 1.0));
  EXPECT_TRUE((BenchLimit{0, 1.5}).Done(0, 1.5));
  EXPECT_DOUBLE_EQ(CpuPercent(0.05, 5), 1.0);
  EXPECT_EQ(CpuPercent(1, 0), 0);
}

TEST(BenchStatsTest, ARunOfIterationsReadsNoClock) {
  int reads = 0;
  auto clock = [&](double t) {
    return [&reads, t] {
      ++reads;
      return t;
    };
  };
  EXPECT_FALSE((BenchLimit{3, 0}).DoneBy(2, clock(100)));
  EXPECT_TRUE((BenchLimit{3, 0}).DoneBy(3, clock(0)));
  EXPECT_EQ(reads, 0);
  EXPECT_FALSE((BenchLimit{0, 1.5}).DoneBy(1000, clock(1.0)));
  EXPECT_TRUE((BenchLimit{0, 1.5}).DoneBy(0, clock(1.5)));
  EXPECT_EQ(reads, 2);
}

}  // namespace
}  // namespace rdmactl
