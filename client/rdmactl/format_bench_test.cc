// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/format_bench.h"

#include "gtest/gtest.h"

namespace rdmactl {
namespace {

BenchReport Report(BenchTest test) {
  BenchReport r;
  r.args.peer = "B";
  r.args.test = test;
  r.args.iters = 1000;
  r.channel.peer = "B";
  r.channel.service = "rdmad.echo";
  r.channel.transport = rdmad::ChannelTransport::kRdma;
  r.channel.local_device = "rxe0";
  r.channel.mtu = 1024;
  return r;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(FormatBenchTest, Latency) {
  BenchReport r = Report(BenchTest::kLat);
  SizeResult s;
  s.size = 2;
  s.iters = 1000;
  s.latency = {1000, 10.5, 12.25, 12.0, 13.0, 20.0, 30.0, 40.0, 1.5};
  r.sizes.push_back(s);
  std::string text = FormatBench(r);
  EXPECT_TRUE(Has(text,
                  "bench lat to B (rdmad.echo) over RDMA (rxe0, MTU 1024), 1 channel, "
                  "1000 round trips per size and channel\n"))
      << text;
  EXPECT_TRUE(Has(text,
                  "#bytes  #iters  t_min[us]  t_typical[us]  t_avg[us]  t_p99[us]  "
                  "t_p99.9[us]  t_max[us]  t_stdev[us]\n"))
      << text;
  EXPECT_TRUE(Has(text, "2       1000    10.50      12.00          12.25      20.00      30.00"))
      << text;
  Json j = BenchJson(r);
  EXPECT_EQ(j["test"], "lat");
  EXPECT_EQ(j["channel"]["transport"], "RDMA");
  EXPECT_EQ(j["results"][0]["size"], 2);
  EXPECT_EQ(j["results"][0]["latency_us"]["typical"], 12.0);
  EXPECT_EQ(j["results"][0]["latency_us"]["p999"], 30.0);
  EXPECT_FALSE(j["results"][0].contains("bw_avg_mbps"));
}

TEST(FormatBenchTest, BandwidthOverTcp) {
  BenchReport r = Report(BenchTest::kWrite);
  r.args.iters = 0;
  r.args.duration_s = 2;
  r.args.channels = 4;
  r.channel.transport = rdmad::ChannelTransport::kTcp;
  r.channel.transport_reason = "forced";
  SizeResult s;
  s.size = 65536;
  s.iters = 400;
  s.throughput.avg_mbps = 1234.5;
  s.throughput.peak_mbps = 1300;
  s.throughput.avg_gbps = 10.356;
  s.throughput.msg_rate_mps = 0.019752;
  r.sizes.push_back(s);
  std::string text = FormatBench(r);
  EXPECT_TRUE(Has(text,
                  "bench write to B (rdmad.echo) over TCP (forced), 4 channels, for 2.00 s "
                  "per size\n"))
      << text;
  EXPECT_TRUE(Has(text, "BW peak[MB/s]  BW average[MB/s]")) << text;
  EXPECT_TRUE(Has(text, "1300.00        1234.50")) << text;
  EXPECT_TRUE(Has(text, "MB = 2^20 bytes")) << text;
  Json j = BenchJson(r);
  EXPECT_EQ(j["duration_s"], 2.0);
  EXPECT_EQ(j["results"][0]["bw_avg_mbps"], 1234.5);
  EXPECT_EQ(j["results"][0]["msg_rate_mps"], 0.019752);
}

TEST(FormatBenchTest, IdleAndConnect) {
  BenchReport idle = Report(BenchTest::kIdle);
  idle.idle = {5.0, 0.001, 0.002, 0.06};
  EXPECT_TRUE(Has(FormatBench(idle),
                  "1 channel blocked in Recv for 5.00 s: CPU 0.060 % of one "
                  "core (user 0.001 s, system 0.002 s"))
      << FormatBench(idle);
  EXPECT_EQ(BenchJson(idle)["idle"]["cpu_percent"], 0.06);
  EXPECT_FALSE(BenchJson(idle).contains("results"));

  BenchReport c = Report(BenchTest::kConnect);
  c.connect.cycles = 100;
  c.connect.seconds = 8;
  c.connect.per_second = 12.5;
  c.connect.handshake.p50_us = 45100;
  c.connect.handshake.p99_us = 80200;
  std::string text = FormatBench(c);
  EXPECT_TRUE(Has(text, "rate     12.50 connects/s")) << text;
  EXPECT_TRUE(Has(text, "p50 45.100 ms")) << text;
  EXPECT_EQ(BenchJson(c)["connect"]["handshake_ms"]["p99"], 80.2);
}

}  // namespace
}  // namespace rdmactl
