// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The bench loops against the daemon's own echo session (ServeEchoChannel)
// over a TCP channel pair on loopback: what they count and time, and that
// Write and Read move the bytes.

#include "client/rdmactl/bench_runner.h"

#include <thread>

#include "client/rdmactl/bench_args.h"
#include "client/src/tcp/tcp_test_util.h"
#include "common/echo_protocol.h"
#include "daemon/echo/echo_session.h"
#include "gtest/gtest.h"

namespace rdmactl {
namespace {

namespace echo = rdmad::echo;
using rdmad::StatusCode;

class BenchRunnerTest : public ::testing::Test {
 protected:
  // Starts the echo service's side and sends the header from this side.
  std::vector<uint8_t> Open(echo::Mode mode, uint64_t param) {
    auto pair = rdmad::internal::MakeTcpPair("127.0.0.1");
    if (pair.status().code() == StatusCode::kFailedPrecondition) return {};
    EXPECT_TRUE(pair.ok()) << pair.status().ToString();
    if (!pair.ok()) return {};
    near_ = std::move(pair->first);
    far_ = std::move(pair->second);
    server_ = std::thread([this] { rdmad::ServeEchoChannel(*far_, {}); });
    auto ack = echo::Handshake(*near_, {echo::kVersion, mode, param}, std::chrono::seconds(5));
    EXPECT_TRUE(ack.ok()) << ack.status().ToString();
    return ack.ok() ? *ack : std::vector<uint8_t>{};
  }

  void TearDown() override {
    if (near_) near_->Close();
    if (server_.joinable()) server_.join();
  }

  std::unique_ptr<rdmad::Channel> near_, far_;
  std::thread server_;
};

TEST(BenchRunnerParamsTest, SinkAcksAboutEveryMegabyte) {
  EXPECT_EQ(SinkAckEvery(0), 256u);
  EXPECT_EQ(SinkAckEvery(2), 256u);
  EXPECT_EQ(SinkAckEvery(8), 256u);
  EXPECT_EQ(SinkAckEvery(4096), 256u);
  EXPECT_EQ(SinkAckEvery(65536), 16u);
  EXPECT_EQ(SinkAckEvery(100000), 11u);
  EXPECT_EQ(SinkAckEvery(1 << 20), 1u);
  EXPECT_EQ(SinkAckEvery(1 << 30), 1u);
  EXPECT_EQ(SinkWindow(16), 128u);
}

TEST_F(BenchRunnerTest, LatencySamplesHalfRoundTrips) {
  Open(echo::Mode::kEcho, 0);
  if (!near_) GTEST_SKIP() << "no loopback";
  ASSERT_TRUE(WarmUpLatency(*near_, 4096, kBenchLatWarmup).ok());
  auto r = RunLatency(*near_, 4096, {20, 0}, BenchClock::now());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->iters, 20u);
  EXPECT_EQ(r->latency_us.count(), 20u);
  EXPECT_GT(r->latency_us.Summarize().min_us, 0);
  EXPECT_GT(r->seconds, 0);
  EXPECT_TRUE(r->timeline.empty());
}

TEST_F(BenchRunnerTest, SinkCountsEveryMessage) {
  const size_t size = 100000;
  const uint64_t every = SinkAckEvery(size);  // 11
  Open(echo::Mode::kSink, every);
  if (!near_) GTEST_SKIP() << "no loopback";
  std::vector<uint8_t> memory(size, 0x5a);
  auto region = near_->RegisterMemory(memory.data(), memory.size());
  ASSERT_TRUE(region.ok());
  auto r = RunSink(*near_, **region, size, every, {30, 0}, BenchClock::now());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->iters, 33u);  // rounded up to whole counts
  ASSERT_FALSE(r->timeline.empty());
  EXPECT_EQ(r->timeline.back().messages, 33u);
  EXPECT_EQ(r->timeline.back().bytes, 33u * size);
  EXPECT_DOUBLE_EQ(r->seconds, r->timeline.back().t);
}

TEST_F(BenchRunnerTest, SinkForADuration) {
  Open(echo::Mode::kSink, SinkAckEvery(65536));
  if (!near_) GTEST_SKIP() << "no loopback";
  std::vector<uint8_t> memory(65536);
  auto region = near_->RegisterMemory(memory.data(), memory.size());
  ASSERT_TRUE(region.ok());
  auto start = BenchClock::now();
  auto r = RunSink(*near_, **region, 65536, 16, {0, 0.05}, start);
  double wall = std::chrono::duration<double>(BenchClock::now() - start).count();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GE(wall, 0.05);
  EXPECT_LE(r->seconds, wall);  // the last count, which may precede the end
  EXPECT_GT(r->iters, 0u);
  EXPECT_EQ(r->iters % 16, 0u);
  EXPECT_EQ(r->timeline.back().messages, r->iters);
}

TEST_F(BenchRunnerTest, WriteThenReadMovesTheBytes) {
  const size_t size = 8192;
  std::vector<uint8_t> ack = Open(echo::Mode::kRegion, size);
  if (!near_) GTEST_SKIP() << "no loopback";
  auto remote = rdmad::RegionDescriptor::Parse(ack.data(), ack.size());
  ASSERT_TRUE(remote.ok());
  std::vector<uint8_t> out = echo::PatternPayload(7, size), in(size);
  auto out_region = near_->RegisterMemory(out.data(), size);
  auto in_region = near_->RegisterMemory(in.data(), size);
  ASSERT_TRUE(out_region.ok() && in_region.ok());
  ASSERT_TRUE(WarmUpOneSided(*near_, true, **out_region, *remote, size).ok());
  auto w = RunOneSided(*near_, true, **out_region, *remote, size, {5, 0}, BenchClock::now());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->iters, 5u);
  EXPECT_EQ(w->timeline.back().bytes, 5u * size);
  auto r = RunOneSided(*near_, false, **in_region, *remote, size, {3, 0}, BenchClock::now());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(in, out);
  // Many in flight: every op completes and counts once.
  std::fill(in.begin(), in.end(), 0);
  auto ring = PrepareOneSided(*near_, false, **in_region, *remote, size, 16);
  ASSERT_TRUE(ring.ok()) << ring.status().ToString();
  ASSERT_EQ(ring->size(), 16u);
  auto deep = RunOneSidedRing(*ring, size, {100, 0}, BenchClock::now());
  ASSERT_TRUE(deep.ok()) << deep.status().ToString();
  EXPECT_EQ(deep->iters, 100u);
  EXPECT_EQ(deep->timeline.back().bytes, 100u * size);
  EXPECT_EQ(in, out);
}

TEST_F(BenchRunnerTest, AClosedChannelFails) {
  Open(echo::Mode::kEcho, 0);
  if (!near_) GTEST_SKIP() << "no loopback";
  far_->Close();
  auto r = RunLatency(*near_, 64, {1000, 0}, BenchClock::now());
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace rdmactl
