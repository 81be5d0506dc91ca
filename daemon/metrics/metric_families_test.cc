// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/metrics/metric_families.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <sstream>
#include <string>
#include <vector>

namespace rdmad {
namespace {

std::string Text(const Families& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

// The sample line for name{labels} (labels in the serializer's order).
bool Has(const std::string& text, const std::string& sample) {
  return text.find("\n" + sample + "\n") != std::string::npos || text.rfind(sample + "\n", 0) == 0;
}

TEST(MetricFamiliesTest, PeersByStateWithEveryStateAndTheirRoundTrips) {
  std::vector<PeerSnapshot> peers(3);
  peers[0].name = "node-b";
  peers[0].state = PeerSessionState::kUp;
  peers[0].rtt_ms = 1.5;
  peers[1].name = "node-c";
  peers[1].state = PeerSessionState::kDown;
  peers[2].name = "node-d";
  peers[2].state = PeerSessionState::kUp;
  Families f;
  AddPeerFamilies(peers, &f);
  std::string text = Text(f);
  EXPECT_TRUE(Has(text, "rdmad_peer_sessions{state=\"up\"} 2")) << text;
  EXPECT_TRUE(Has(text, "rdmad_peer_sessions{state=\"down\"} 1")) << text;
  EXPECT_TRUE(Has(text, "rdmad_peer_sessions{state=\"circuit-open\"} 0")) << text;
  EXPECT_TRUE(Has(text, "rdmad_peer_up{peer=\"node-c\"} 0")) << text;
  EXPECT_TRUE(Has(text, "rdmad_peer_up{peer=\"node-b\"} 1")) << text;
  EXPECT_TRUE(Has(text, "rdmad_peer_rtt_seconds{peer=\"node-b\"} 0.0015")) << text;
  // No round trip measured yet: no sample, rather than a false 0.
  EXPECT_EQ(text.find("rdmad_peer_rtt_seconds{peer=\"node-c\"}"), std::string::npos) << text;
}

TEST(MetricFamiliesTest, ChannelsAreCountedByStateTransportAndPeerNeverById) {
  std::vector<ChannelRecord> channels(4);
  for (size_t i = 0; i < channels.size(); ++i) {
    channels[i].channel_id = 0x1000 + i;
    channels[i].peer = "node-b";
    channels[i].state = ChannelState::kEstablished;
    channels[i].transport = EndpointKind::kRdma;
  }
  channels[0].rails = {{"rxe0", "rxe0", 10, 0, true, ""}, {"rxe1", "rxe1", 10, 0, false, "down"}};
  channels[1].rails = {{"rxe0", "rxe0", 0, 0, true, ""}};
  channels[2].transport = EndpointKind::kTcp;
  channels[3].state = ChannelState::kClosed;
  channels[3].rails = {{"rxe0", "rxe0", 0, 0, true, ""}};  // ended: not a live rail
  Families f;
  AddChannelFamilies(channels, &f);
  std::string text = Text(f);
  EXPECT_TRUE(
      Has(text, "rdmad_channels{peer=\"node-b\",state=\"established\",transport=\"rdma\"} 2"))
      << text;
  EXPECT_TRUE(
      Has(text, "rdmad_channels{peer=\"node-b\",state=\"established\",transport=\"tcp\"} 1"))
      << text;
  EXPECT_TRUE(Has(text, "rdmad_channels{peer=\"node-b\",state=\"closed\",transport=\"rdma\"} 1"))
      << text;
  EXPECT_TRUE(Has(text, "rdmad_channel_rails{device=\"rxe0\",peer_device=\"rxe0\",up=\"1\"} 2"))
      << text;
  EXPECT_TRUE(Has(text, "rdmad_channel_rails{device=\"rxe1\",peer_device=\"rxe1\",up=\"0\"} 1"))
      << text;
  EXPECT_EQ(text.find("0x1000"), std::string::npos);
  EXPECT_EQ(text.find("4096"), std::string::npos);  // the id in decimal neither
}

TEST(MetricFamiliesTest, ConnectDurationsAreAHistogramAndFailuresCountedByReason) {
  HandshakeStats stats;
  stats.Succeeded(std::chrono::microseconds(300));  // <= 0.5 ms
  stats.Succeeded(std::chrono::milliseconds(20));   // <= 25 ms
  stats.Succeeded(std::chrono::seconds(7));         // +Inf only
  stats.Failed("initiator", StatusCode::kNotFound);
  stats.Failed("initiator", StatusCode::kNotFound);
  stats.Failed("acceptor", StatusCode::kResourceExhausted);
  Families f;
  AddHandshakeFamilies(stats.Snapshot(), &f);
  std::string text = Text(f);
  EXPECT_NE(text.find("# TYPE rdmad_connect_duration_seconds histogram"), std::string::npos);
  EXPECT_TRUE(Has(text, "rdmad_connect_duration_seconds_bucket{le=\"0.0005\"} 1")) << text;
  EXPECT_TRUE(Has(text, "rdmad_connect_duration_seconds_bucket{le=\"0.01\"} 1")) << text;
  EXPECT_TRUE(Has(text, "rdmad_connect_duration_seconds_bucket{le=\"0.025\"} 2")) << text;
  EXPECT_TRUE(Has(text, "rdmad_connect_duration_seconds_bucket{le=\"5\"} 2")) << text;
  EXPECT_TRUE(Has(text, "rdmad_connect_duration_seconds_bucket{le=\"+Inf\"} 3")) << text;
  EXPECT_TRUE(Has(text, "rdmad_connect_duration_seconds_count 3")) << text;
  EXPECT_TRUE(
      Has(text, "rdmad_handshake_failures_total{reason=\"NOT_FOUND\",side=\"initiator\"} 2"))
      << text;
  EXPECT_TRUE(Has(
      text, "rdmad_handshake_failures_total{reason=\"RESOURCE_EXHAUSTED\",side=\"acceptor\"} 1"))
      << text;
}

TEST(MetricFamiliesTest, PortsWithTheirCountersAndNoneForAPortThatHasNone) {
  Inventory inv;
  DeviceInfo d;
  d.name = "rxe0";
  PortInfo p;
  p.port = 1;
  p.state = 4;
  p.link_layer = LinkLayer::kEthernet;
  p.rate_gbps = 100;
  d.ports.push_back(p);
  DeviceInfo e = d;
  e.name = "rxe1";
  e.ports[0].state = 1;
  inv.devices = {d, e};
  Families f;
  AddPortFamilies(
      inv,
      [](const std::string& device, int port) -> StatusOr<std::map<std::string, uint64_t>> {
        if (device == "rxe1") return Status::NotFound("no counters");
        return std::map<std::string, uint64_t>{{"port_xmit_data", 1234}, {"sent_pkts", 7}};
      },
      &f);
  std::string text = Text(f);
  EXPECT_TRUE(Has(text, "rdmad_port_active{device=\"rxe0\",link_layer=\"Ethernet\",port=\"1\"} 1"))
      << text;
  EXPECT_TRUE(Has(text, "rdmad_port_active{device=\"rxe1\",link_layer=\"Ethernet\",port=\"1\"} 0"))
      << text;
  EXPECT_TRUE(Has(text, "rdmad_port_rate_gbps{device=\"rxe0\",port=\"1\"} 100")) << text;
  EXPECT_TRUE(Has(
      text,
      "rdmad_port_hw_counter_total{counter=\"port_xmit_data\",device=\"rxe0\",port=\"1\"} 1234"))
      << text;
  EXPECT_EQ(text.find("rdmad_port_hw_counter_total{counter=\"sent_pkts\",device=\"rxe1\""),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE rdmad_port_hw_counter_total counter"), std::string::npos) << text;
}

TEST(MetricFamiliesTest, TheProcessReadsItsOwnFigures) {
  StatusOr<ProcessStats> s = ReadProcessStats();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_GT(s->resident_bytes, 1 << 20);
  EXPECT_GE(s->virtual_bytes, s->resident_bytes);
  EXPECT_GE(s->open_fds, 3);  // stdin, stdout, stderr at least
  EXPECT_GT(s->max_fds, s->open_fds);
  EXPECT_GT(s->start_time_seconds, 1.7e9);  // after 2023
  EXPECT_GE(s->cpu_seconds, 0);
  Families f;
  AddProcessFamilies(*s, &f);
  std::string text = Text(f);
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("\nprocess_open_fds "), std::string::npos) << text;
}

TEST(MetricFamiliesTest, TrafficByPeerServiceAndOpWithLatencyHistograms) {
  TrafficView view;
  TrafficTotals& t = view.totals[{"node-b", "kv"}];
  t.messages_sent = 3;
  t.bytes_sent = 300;
  t.messages_received = 1;
  t.bytes_received = 8;
  t.writes = 2;
  t.bytes_written = 1 << 20;
  t.latency.Observe(1500);       // the 2 us bucket
  t.latency.Observe(3'000'000);  // 5 ms
  view.connects[{"node-b", "kv", true}].Observe(900);
  view.connects[{"node-b", "kv", false}].Observe(2'000'000'000);  // slower than 1 s
  Families f;
  AddTrafficFamilies(view, &f);
  std::string text = Text(f);
  EXPECT_TRUE(
      Has(text, "rdmad_channel_bytes_total{op=\"send\",peer=\"node-b\",service=\"kv\"} 300"))
      << text;
  EXPECT_TRUE(
      Has(text, "rdmad_channel_bytes_total{op=\"write\",peer=\"node-b\",service=\"kv\"} 1048576"))
      << text;
  EXPECT_TRUE(
      Has(text, "rdmad_channel_operations_total{op=\"recv\",peer=\"node-b\",service=\"kv\"} 1"))
      << text;
  EXPECT_TRUE(
      Has(text, "rdmad_channel_operations_total{op=\"read\",peer=\"node-b\",service=\"kv\"} 0"))
      << text;
  EXPECT_TRUE(
      Has(text,
          "rdmad_transfer_duration_seconds_bucket{peer=\"node-b\",service=\"kv\",le=\"1e-06\"} 0"))
      << text;
  EXPECT_TRUE(
      Has(text,
          "rdmad_transfer_duration_seconds_bucket{peer=\"node-b\",service=\"kv\",le=\"2e-06\"} 1"))
      << text;
  EXPECT_TRUE(
      Has(text,
          "rdmad_transfer_duration_seconds_bucket{peer=\"node-b\",service=\"kv\",le=\"0.005\"} 2"))
      << text;
  EXPECT_TRUE(Has(text, "rdmad_transfer_duration_seconds_count{peer=\"node-b\",service=\"kv\"} 2"))
      << text;
  EXPECT_TRUE(Has(text,
                  "rdmad_channel_open_duration_seconds_bucket{peer=\"node-b\",service=\"kv\","
                  "source=\"pool\",le=\"1e-06\"} 1"))
      << text;
  EXPECT_TRUE(Has(text,
                  "rdmad_channel_open_duration_seconds_bucket{peer=\"node-b\",service=\"kv\","
                  "source=\"cold\",le=\"1\"} 0"))
      << text;
  EXPECT_TRUE(Has(text,
                  "rdmad_channel_open_duration_seconds_bucket{peer=\"node-b\",service=\"kv\","
                  "source=\"cold\",le=\"+Inf\"} 1"))
      << text;
}

TEST(MetricFamiliesTest, QuotaRefusalsLocalClientsAndPoolsSummedOverClients) {
  std::map<std::string, uint64_t, std::less<>> refusals = {{"limits.max_channels_per_uid", 4}};
  auto row = [](uint64_t client, const char* peer, int target, int warm, int in_use) {
    PoolRow r;
    r.client_id = client;
    r.peer = peer;
    r.service = "kv";
    r.target = target;
    r.warm = warm;
    r.in_use = in_use;
    return r;
  };
  std::vector<PoolRow> rows = {row(1, "node-b", 2, 2, 0), row(2, "node-b", 2, 1, 1),
                               row(2, "node-c", 1, 0, 0)};
  Families f;
  AddQuotaFamilies(refusals, &f);
  AddLocalClientFamilies({.connections = 5, .processes = 3}, &f);
  AddPoolFamilies(rows, &f);
  std::string text = Text(f);
  EXPECT_TRUE(Has(text, "rdmad_quota_refusals_total{quota=\"limits.max_channels_per_uid\"} 4"))
      << text;
  EXPECT_TRUE(Has(text, "rdmad_local_connections 5")) << text;
  EXPECT_TRUE(Has(text, "rdmad_local_clients 3")) << text;
  EXPECT_TRUE(Has(text, "rdmad_pool_target_channels{peer=\"node-b\",service=\"kv\"} 4")) << text;
  EXPECT_TRUE(Has(text, "rdmad_pool_warm_channels{peer=\"node-b\",service=\"kv\"} 3")) << text;
  EXPECT_TRUE(Has(text, "rdmad_pool_in_use_channels{peer=\"node-b\",service=\"kv\"} 1")) << text;
  EXPECT_TRUE(Has(text, "rdmad_pool_warm_channels{peer=\"node-c\",service=\"kv\"} 0")) << text;
}

}  // namespace
}  // namespace rdmad
