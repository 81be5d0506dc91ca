// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/top_view.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rdmactl {
namespace {

rdmad::ChannelSummary Channel(uint64_t id, const std::string& peer, const std::string& transport,
                              uint64_t sent, uint64_t written) {
  rdmad::ChannelSummary c;
  c.id = id;
  c.peer = peer;
  c.service = "kv";
  c.transport = transport;
  c.state = "established";
  c.traffic.messages_sent = sent / 100;
  c.traffic.bytes_sent = sent;
  c.traffic.writes = written / 1000;
  c.traffic.bytes_written = written;
  return c;
}

rdmad::ChannelRail Rail(const std::string& device, uint64_t written, bool up = true) {
  rdmad::ChannelRail r;
  r.local_device = device;
  r.peer_device = device;
  r.bytes_written = written;
  r.up = up;
  return r;
}

// Whether a line of text has every word in words, in that order.
bool HasLine(const std::string& text, const std::vector<std::string>& words) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string line =
        text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    size_t at = 0;
    bool all = true;
    for (const std::string& w : words) {
      at = line.find(w, at);
      if (at == std::string::npos) {
        all = false;
        break;
      }
      at += w.size();
    }
    if (all) return true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return false;
}

TEST(TopViewTest, RatesPerPeerRailAndChannelOverTheInterval) {
  TopSample before, now;
  now.at = before.at + std::chrono::seconds(2);
  rdmad::PeerInfo b;
  b.name = "node-b";
  b.state = rdmad::PeerState::kUp;
  b.rtt_ms = 0.25;
  before.peers = now.peers = {b};
  // One rail: all of its traffic is the rail's.
  before.channels.push_back(Channel(1, "node-b", "RDMA", 1000, 0));
  before.channels.back().rails = {Rail("rxe0", 0)};
  now.channels.push_back(Channel(1, "node-b", "RDMA", 3000, 4000));
  now.channels.back().rails = {Rail("rxe0", 0)};
  // Two rails: each its Writes, the first the messages too.
  before.channels.push_back(Channel(2, "node-b", "RDMA", 0, 0));
  before.channels.back().rails = {Rail("rxe0", 0), Rail("rxe1", 0)};
  now.channels.push_back(Channel(2, "node-b", "RDMA", 200, 10000));
  now.channels.back().rails = {Rail("rxe0", 2000), Rail("rxe1", 8000, false)};
  // New since the first sample: counted whole; over TCP, to a peer not listed.
  now.channels.push_back(Channel(3, "10.0.0.9:7581", "TCP", 600, 0));
  // Gone by the second: not counted.
  before.channels.push_back(Channel(4, "node-b", "RDMA", 1 << 20, 0));

  TopView v = ComputeTopView(before, now);
  EXPECT_DOUBLE_EQ(v.interval_s, 2);
  EXPECT_EQ(v.established, 3u);
  EXPECT_EQ(v.rdma, 2u);
  EXPECT_EQ(v.tcp, 1u);
  EXPECT_EQ(v.peers_up, 1u);
  ASSERT_EQ(v.peer_rows.size(), 2u);
  EXPECT_EQ(v.peer_rows[0].peer, "node-b");
  EXPECT_EQ(v.peer_rows[0].channels, 2u);
  EXPECT_DOUBLE_EQ(v.peer_rows[0].rates.tx_bytes, (2000 + 4000 + 200 + 10000) / 2.0);
  EXPECT_DOUBLE_EQ(v.peer_rows[0].rates.operations, (4 + 10) / 2.0);
  EXPECT_EQ(v.peer_rows[1].peer, "10.0.0.9:7581");
  EXPECT_EQ(v.peer_rows[1].state, "-");
  EXPECT_DOUBLE_EQ(v.peer_rows[1].rates.tx_bytes, 300);
  ASSERT_EQ(v.rail_rows.size(), 3u);  // TCP, rxe0, rxe1 by name
  EXPECT_EQ(v.rail_rows[0].device, "TCP");
  EXPECT_DOUBLE_EQ(v.rail_rows[0].bytes, 300);
  EXPECT_EQ(v.rail_rows[1].device, "rxe0");
  EXPECT_EQ(v.rail_rows[1].channels, 2u);
  EXPECT_DOUBLE_EQ(v.rail_rows[1].bytes, (2000 + 4000 + 2000 + 200) / 2.0);
  EXPECT_EQ(v.rail_rows[2].device, "rxe1");
  EXPECT_EQ(v.rail_rows[2].down, 1u);
  EXPECT_DOUBLE_EQ(v.rail_rows[2].bytes, 4000);
  ASSERT_EQ(v.channel_rows.size(), 3u);
  EXPECT_EQ(v.channel_rows[0].id, 2u);  // busiest first
  EXPECT_EQ(v.channel_rows[2].id, 3u);

  std::string text = RenderTop(v, 2);
  EXPECT_NE(text.find("peers 1/1 up | channels 3 (2 RDMA, 1 TCP)"), std::string::npos) << text;
  EXPECT_TRUE(HasLine(text, {"node-b", "up", "0.25 ms", "2", "7.9 KiB/s"})) << text;
  EXPECT_TRUE(HasLine(text, {"rxe1", "rxe1", "1", "1", "3.9 KiB/s"})) << text;
  EXPECT_TRUE(HasLine(text, {"0x0000000000000002", "node-b", "kv", "RDMA", "established"})) << text;
  EXPECT_FALSE(HasLine(text, {"0x0000000000000003"})) << "only the 2 busiest\n" << text;
  EXPECT_NE(text.find("(1 more)"), std::string::npos) << text;
  Json json = TopJson(v);
  EXPECT_EQ(json["peers"][0]["tx_bytes_per_s"], 8100.0);
  EXPECT_EQ(json["channels"][0]["id"], "0x0000000000000002");
  EXPECT_EQ(json["rails"][2]["down"], 1);
}

TEST(TopViewTest, RatesAreShownInBinaryUnits) {
  EXPECT_EQ(FormatRate(0), "0 B/s");
  EXPECT_EQ(FormatRate(512), "512 B/s");
  EXPECT_EQ(FormatRate(1536), "1.5 KiB/s");
  EXPECT_EQ(FormatRate(12.5 * 1024 * 1024), "12.5 MiB/s");
  EXPECT_EQ(FormatRate(3.0 * (1ull << 40)), "3.0 TiB/s");
}

}  // namespace
}  // namespace rdmactl
