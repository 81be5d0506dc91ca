// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What applications moved, as rdmad serves it (docs/operations.md,
// "Metrics"), between two real daemons on loopback: the test process's
// channels to B's echo service send messages, Write, Read and Submit; A's
// /metrics and ListChannels then show exactly those bytes and operations per
// peer and service, with each completion in the latency histogram and each
// Connect timed, and B's records show its echo service's side. Closing the
// channels keeps the totals. An rdmactl ping killed with SIGKILL keeps what
// its library had reported.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/echo_protocol.h"
#include "gtest/gtest.h"
#include "tests/integration/daemon_pair.h"
#include "tests/integration/http_get.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The value of the sample line "NAME{LABELS} VALUE", or -1 without one.
double Sample(const std::string& text, const std::string& series) {
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

std::string EchoSeries(const char* family, const char* op) {
  return std::string(family) + "{op=\"" + op + "\",peer=\"B\",service=\"" + echo::kService + "\"}";
}

class TrafficTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::FreeLoopbackPort();
    Status started = pair_.Start("[metrics]\nenabled = true\nport = " + std::to_string(port_) +
                                 "\n" + ExtraConfig());
    ASSERT_TRUE(started.ok()) << started.ToString() << pair_.Logs();
    ASSERT_TRUE(testing::DaemonPair::WaitForLog(pair_.a(), "serving Prometheus metrics"))
        << pair_.Logs();
  }
  virtual std::string ExtraConfig() const { return ""; }
  // A's scrape once series reaches at least value (up to 15 s: the library
  // reports once a second).
  std::string ScrapeUntil(const std::string& series, double value) {
    std::string text;
    for (int i = 0; i < 150; ++i) {
      text = HttpGet(port_, "/metrics");
      if (Sample(text, series) >= value) break;
      std::this_thread::sleep_for(milliseconds(100));
    }
    return text;
  }
  // A's scrape once no channel is established any more (up to 10 s).
  std::string ScrapeUntilNoneEstablished() {
    std::string text;
    for (int i = 0; i < 100; ++i) {
      text = HttpGet(port_, "/metrics");
      if (!Contains(text, "state=\"established\"")) break;
      std::this_thread::sleep_for(milliseconds(100));
    }
    return text;
  }
  StatusOr<ChannelTraffic> TrafficOf(Client& client, uint64_t id) {
    auto channels = client.ListChannels();
    if (!channels.ok()) return channels.status();
    for (const ChannelSummary& c : *channels) {
      if (c.id == id) return c.traffic;
    }
    return Status::NotFound("no channel " + std::to_string(id));
  }

  testing::DaemonPair pair_;
  int port_ = 0;
};

TEST_F(TrafficTest, WhatAnApplicationMovedIsCountedPerPeerAndServiceAndOutlivesItsChannels) {
  auto messages = pair_.ConnectAB(echo::kService);
  ASSERT_TRUE(messages.ok()) << messages.status().ToString() << pair_.Logs();
  auto ack = echo::Handshake(**messages, {echo::kVersion, echo::Mode::kEcho, 0}, seconds(10));
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  for (uint64_t i = 0; i < 10; ++i) {
    std::vector<uint8_t> payload = echo::PatternPayload(i, 1000);
    ASSERT_TRUE((*messages)->Send(payload.data(), payload.size()).ok());
    auto back = (*messages)->Recv(seconds(10));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ASSERT_EQ(back->size(), 1000u);
  }

  constexpr size_t kRegion = 1 << 20;
  auto one_sided = pair_.ConnectAB(echo::kService);
  ASSERT_TRUE(one_sided.ok()) << one_sided.status().ToString();
  Channel& c = **one_sided;
  auto desc = echo::Handshake(c, {echo::kVersion, echo::Mode::kRegion, kRegion}, seconds(10));
  ASSERT_TRUE(desc.ok()) << desc.status().ToString();
  auto remote = RegionDescriptor::Parse(desc->data(), desc->size());
  ASSERT_TRUE(remote.ok());
  std::vector<uint8_t> buf(kRegion, 7);
  auto local = c.RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(local.ok());
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(c.Write(**local, 0, *remote, uint64_t(i) << 16, 1 << 16).ok());
  }
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(c.Read(**local, 0, *remote, 0, 1 << 16).ok());
  std::vector<TransferOp> ops(3);
  for (size_t i = 0; i < ops.size(); ++i) {
    ops[i].local = local->get();
    ops[i].local_offset = i << 12;
    ops[i].remote = *remote;
    ops[i].remote_offset = i << 12;
    ops[i].len = 4096;
  }
  auto batch = c.Submit(ops);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_TRUE((*batch)->Wait(seconds(10)).ok());

  // Sent: each channel's 16-byte header, then ten 1000-byte messages;
  // received: each ack (8 bytes and its payload), then the echoes.
  const uint64_t sent = 16 + 10 * 1000 + 16;
  const uint64_t received = 8 + ack->size() + 10 * 1000 + 8 + desc->size();
  const uint64_t written = 4 * (1 << 16) + 3 * 4096;
  std::string text = ScrapeUntil(EchoSeries("rdmad_channel_bytes_total", "write"), written);
  text = ScrapeUntil(EchoSeries("rdmad_channel_bytes_total", "send"), sent);
  EXPECT_EQ(Sample(text, EchoSeries("rdmad_channel_bytes_total", "send")), sent) << text;
  EXPECT_EQ(Sample(text, EchoSeries("rdmad_channel_operations_total", "send")), 12) << text;
  EXPECT_EQ(Sample(text, EchoSeries("rdmad_channel_bytes_total", "recv")), received) << text;
  EXPECT_EQ(Sample(text, EchoSeries("rdmad_channel_operations_total", "recv")), 12) << text;
  EXPECT_EQ(Sample(text, EchoSeries("rdmad_channel_bytes_total", "write")), written) << text;
  EXPECT_EQ(Sample(text, EchoSeries("rdmad_channel_operations_total", "write")), 7) << text;
  EXPECT_EQ(Sample(text, EchoSeries("rdmad_channel_bytes_total", "read")), 2 << 16) << text;
  EXPECT_EQ(Sample(text, EchoSeries("rdmad_channel_operations_total", "read")), 2) << text;
  // Four Writes, two Reads and one batch: seven completions.
  const std::string labels = std::string("{peer=\"B\",service=\"") + echo::kService + "\"}";
  EXPECT_EQ(Sample(text, "rdmad_transfer_duration_seconds_count" + labels), 7) << text;
  EXPECT_GT(Sample(text, "rdmad_transfer_duration_seconds_sum" + labels), 0) << text;
  const std::string cold =
      std::string("{peer=\"B\",service=\"") + echo::kService + "\",source=\"cold\"}";
  EXPECT_EQ(Sample(text, "rdmad_channel_open_duration_seconds_count" + cold), 2) << text;

  // Each channel's own account, on both sides: A's records have what the
  // test process moved, B's what its echo service did.
  auto mine = TrafficOf(*pair_.a().client, (*messages)->info().id);
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  EXPECT_EQ(mine->messages_sent, 11u);
  EXPECT_EQ(mine->bytes_sent, 16u + 10000u);
  EXPECT_EQ(mine->writes, 0u);
  auto theirs = TrafficOf(*pair_.b().client, (*messages)->info().id);
  for (int i = 0; i < 100 && theirs.ok() && theirs->messages_received < 11; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
    theirs = TrafficOf(*pair_.b().client, (*messages)->info().id);
  }
  ASSERT_TRUE(theirs.ok()) << theirs.status().ToString();
  EXPECT_EQ(theirs->messages_received, 11u);
  EXPECT_EQ(theirs->bytes_received, 16u + 10000u);
  EXPECT_EQ(theirs->bytes_sent, 8 + ack->size() + 10000u);
  auto region_side = TrafficOf(*pair_.a().client, c.info().id);
  ASSERT_TRUE(region_side.ok());
  EXPECT_EQ(region_side->writes, 7u);
  ASSERT_EQ(region_side->latency_buckets.size(), 20u);  // common/traffic.h's buckets

  // Closed, the channels' totals stay.
  (*messages)->Close();
  c.Close();
  messages->reset();
  one_sided->reset();
  text = ScrapeUntilNoneEstablished();
  EXPECT_FALSE(Contains(text, "state=\"established\"")) << text;
  EXPECT_EQ(Sample(text, EchoSeries("rdmad_channel_bytes_total", "send")), sent) << text;
  EXPECT_EQ(Sample(text, EchoSeries("rdmad_channel_bytes_total", "write")), written) << text;
}

TEST_F(TrafficTest, ConnectsFromThePoolAreTimedApartFromColdOnes) {
  ClientOptions options;
  options.socket_path = pair_.a().socket;
  options.follow_pool = true;
  auto app = Client::Open(options);
  ASSERT_TRUE(app.ok()) << app.status().ToString();
  ASSERT_TRUE((*app)->Prewarm("B", echo::kService, 1).ok());
  auto warm = [&] {
    auto pools = pair_.a().client->ListPools();
    for (const PoolSummary& p : pools.ok() ? *pools : std::vector<PoolSummary>{}) {
      if (p.service == echo::kService && p.warm == 1) return true;
    }
    return false;
  };
  for (int i = 0; i < 100 && !warm(); ++i) std::this_thread::sleep_for(milliseconds(100));
  ASSERT_TRUE(warm()) << pair_.Logs();
  auto pooled = (*app)->Connect("B", echo::kService);
  ASSERT_TRUE(pooled.ok()) << pooled.status().ToString();
  ASSERT_TRUE((*app)->Prewarm("B", echo::kService, 0).ok());
  auto cold = (*app)->Connect("B", echo::kService);
  ASSERT_TRUE(cold.ok()) << cold.status().ToString();
  const std::string labels = std::string("{peer=\"B\",service=\"") + echo::kService;
  std::string text =
      ScrapeUntil("rdmad_channel_open_duration_seconds_count" + labels + "\",source=\"cold\"}", 1);
  EXPECT_EQ(
      Sample(text, "rdmad_channel_open_duration_seconds_count" + labels + "\",source=\"pool\"}"), 1)
      << text;
  EXPECT_EQ(
      Sample(text, "rdmad_channel_open_duration_seconds_count" + labels + "\",source=\"cold\"}"), 1)
      << text;
  // Taking a warm channel costs no handshake.
  EXPECT_LT(
      Sample(text, "rdmad_channel_open_duration_seconds_sum" + labels + "\",source=\"pool\"}"),
      Sample(text, "rdmad_channel_open_duration_seconds_sum" + labels + "\",source=\"cold\"}"))
      << text;
}

TEST_F(TrafficTest, AnApplicationKilledKeepsWhatItsLibraryReported) {
  testing::TempDir dir;
  testing::Process ping(
      RDMACTL_BINARY, {"ping", pair_.BAddress(), "-c", "100000", "-i", "10", "-s", "100", "-q"},
      std::map<std::string, std::string>{{"RDMAD_SOCKET", pair_.a().socket}}, dir.File("ping.log"));
  ping.set_report_on_failure(false);  // killed on purpose
  // rdmactl names B by its address; A counts it under the peer's name.
  const std::string series = EchoSeries("rdmad_channel_bytes_total", "send");
  std::string text = ScrapeUntil(series, 2000);
  double before = Sample(text, series);
  ASSERT_GE(before, 2000) << text << ping.log() << pair_.Logs();
  ping.Signal(SIGKILL);
  ASSERT_TRUE(ping.WaitExit(seconds(10)).has_value());
  text = ScrapeUntilNoneEstablished();
  EXPECT_FALSE(Contains(text, "state=\"established\"")) << "the dead ping's channel is still up\n"
                                                        << text;
  EXPECT_GE(Sample(text, series), before) << text;
}

// A at most 2 channels: a pool of 2 fills it.
class HostMetricsTest : public TrafficTest {
 protected:
  std::string ExtraConfig() const override { return "[limits]\nmax_channels = 2\n"; }
};

TEST_F(HostMetricsTest, QuotaRefusalsLocalClientsAndPoolLevelsAreServed) {
  ClientOptions options;
  options.socket_path = pair_.a().socket;
  options.follow_pool = true;
  auto app = Client::Open(options);
  ASSERT_TRUE(app.ok()) << app.status().ToString();
  ASSERT_TRUE((*app)->Prewarm("B", echo::kService, 2).ok());
  const std::string pool = std::string("{peer=\"B\",service=\"") + echo::kService + "\"}";
  std::string text = ScrapeUntil("rdmad_pool_warm_channels" + pool, 2);
  EXPECT_EQ(Sample(text, "rdmad_pool_target_channels" + pool), 2) << text;
  EXPECT_EQ(Sample(text, "rdmad_pool_warm_channels" + pool), 2) << text;
  EXPECT_EQ(Sample(text, "rdmad_pool_in_use_channels" + pool), 0) << text;
  // The pair's client and the app: two connections at least (the app's
  // pool stream and calls may share one), from this one process.
  EXPECT_GE(Sample(text, "rdmad_local_connections"), 2) << text;
  EXPECT_GE(Sample(text, "rdmad_local_clients"), 1) << text;
  // The limit is full: a cold Connect is refused, and counted under its key.
  auto refused = pair_.a().client->Connect("B", echo::kService);
  ASSERT_EQ(refused.status().code(), StatusCode::kResourceExhausted) << refused.status().ToString();
  text = ScrapeUntil("rdmad_quota_refusals_total{quota=\"limits.max_channels\"}", 1);
  EXPECT_GE(Sample(text, "rdmad_quota_refusals_total{quota=\"limits.max_channels\"}"), 1) << text;
  auto taken = (*app)->Connect("B", echo::kService);
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  text = ScrapeUntil("rdmad_pool_in_use_channels" + pool, 1);
  EXPECT_EQ(Sample(text, "rdmad_pool_in_use_channels" + pool), 1) << text;
}

}  // namespace
}  // namespace rdmad
