// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/format_connect.h"

#include "gtest/gtest.h"

namespace rdmactl {
namespace {

rdmad::ChannelInfo RdmaInfo() {
  rdmad::ChannelInfo i;
  i.id = 0x1f;
  i.peer = "node2";
  i.service = "rdmad.echo";
  i.transport = rdmad::ChannelTransport::kRdma;
  i.transport_reason = "RDMA path planned on both sides";
  i.local_device = "rxe0";
  i.peer_device = "mlx5_0";
  i.local_port = 1;
  i.peer_port = 1;
  i.local_gid_index = 1;
  i.peer_gid_index = 3;
  i.local_gid = "fe80::1";
  i.peer_gid = "::ffff:10.0.0.2";
  i.gid_type = "RoCE v2";
  i.local_qpn = 0x11;
  i.peer_qpn = 0x2a;
  i.mtu = 1024;
  i.local_active_mtu = 1024;
  i.peer_active_mtu = 4096;
  i.send_depth = 128;
  i.recv_depth = 128;
  i.slot_size = 4096;
  i.handshake_ms = 2.5;
  return i;
}

rdmad::ChannelInfo TcpInfo() {
  rdmad::ChannelInfo i;
  i.id = 3;
  i.peer = "127.0.0.1:7599";
  i.service = "rdmad.echo";
  i.transport = rdmad::ChannelTransport::kTcp;
  i.transport_reason = "no RDMA devices; channels will use TCP";
  i.tcp_local = "127.0.0.1:40122";
  i.tcp_peer = "127.0.0.1:40991";
  i.handshake_ms = 3.25;
  return i;
}

TEST(FormatConnectTest, Rdma) {
  EXPECT_EQ(FormatConnect(RdmaInfo(), 12.34, 64),
            "connected to node2 (rdmad.echo): RDMA, channel 0x000000000000001f\n"
            "  why         RDMA path planned on both sides\n"
            "  local       rxe0 port 1, GID 1 fe80::1 (RoCE v2), QPN 0x11\n"
            "  peer        mlx5_0 port 1, GID 3 ::ffff:10.0.0.2 (RoCE v2), QPN 0x2a\n"
            "  MTU         1024 (local active 1024, peer active 4096)\n"
            "  queues      send depth 128, recv depth 128, slot 4096 bytes\n"
            "  handshake   2.500 ms\n"
            "  round trip  12.3 µs (64 bytes)\n");
}

TEST(FormatConnectTest, TcpShowsAddressesAndWhy) {
  EXPECT_EQ(FormatConnect(TcpInfo(), 1500, 64),
            "connected to 127.0.0.1:7599 (rdmad.echo): TCP, channel 0x0000000000000003\n"
            "  why         no RDMA devices; channels will use TCP\n"
            "  local       127.0.0.1:40122\n"
            "  peer        127.0.0.1:40991\n"
            "  handshake   3.250 ms\n"
            "  round trip  1.500 ms (64 bytes)\n");
}

TEST(FormatConnectTest, JsonKeysAreChannelInfoMembers) {
  Json j = ConnectJson(RdmaInfo(), 12.5, 64);
  EXPECT_EQ(j["size"], 64);
  EXPECT_EQ(j["round_trip_us"], 12.5);
  const Json& c = j["channel"];
  EXPECT_EQ(c["id"], "0x000000000000001f");
  EXPECT_EQ(c["transport"], "RDMA");
  EXPECT_EQ(c["peer_qpn"], 0x2a);
  EXPECT_EQ(c["mtu"], 1024);
  std::vector<std::string> keys;
  for (auto it = c.begin(); it != c.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys.front(), "id");
  EXPECT_EQ(keys.back(), "tcp_peer");
  EXPECT_EQ(keys.size(), 25u);
}

TEST(FormatConnectTest, PingLines) {
  EXPECT_EQ(FormatPingHeader(TcpInfo(), 64),
            "PING 127.0.0.1:7599 (rdmad.echo): 64 bytes over TCP "
            "(no RDMA devices; channels will use TCP)\n");
  EXPECT_EQ(FormatPingReply(RdmaInfo(), 64, 1, 123.4),
            "64 bytes from node2 (RDMA): seq=1 time=0.123 ms\n");
}

TEST(FormatConnectTest, PingSummaryPicksItsUnit) {
  LatencyStats fast;
  for (double v : {8.1, 9.0, 14.3}) fast.Add(v);
  PingTally t{.sent = 4, .received = 3, .corrupt = 0, .elapsed_ms = 812};
  EXPECT_EQ(FormatPingSummary("node2", t, fast.Summarize()),
            "--- node2 echo statistics ---\n"
            "4 sent, 3 received, 1 lost (25%), time 812.000 ms\n"
            "rtt min/avg/p50/p99/max = 8.1/10.5/9.0/14.3/14.3 µs\n");
  LatencyStats slow;
  slow.Add(1500);
  t = {.sent = 1, .received = 1, .corrupt = 0, .elapsed_ms = 1.5};
  EXPECT_EQ(FormatPingSummary("node2", t, slow.Summarize()),
            "--- node2 echo statistics ---\n"
            "1 sent, 1 received, 0 lost (0%), time 1.500 ms\n"
            "rtt min/avg/p50/p99/max = 1.500/1.500/1.500/1.500/1.500 ms\n");
}

TEST(FormatConnectTest, PingSummaryWithoutReplies) {
  PingTally t{.sent = 2, .received = 0, .corrupt = 1, .elapsed_ms = 2000};
  EXPECT_EQ(FormatPingSummary("node2", t, LatencySummary{}),
            "--- node2 echo statistics ---\n"
            "2 sent, 0 received, 2 lost (100%), 1 corrupt, time 2.00 s\n");
}

TEST(FormatConnectTest, PingJson) {
  LatencyStats s;
  s.Add(10);
  s.Add(20);
  PingTally t{.sent = 2, .received = 2, .corrupt = 0, .elapsed_ms = 5};
  Json j = PingJson(TcpInfo(), 64, 2, 0, t, s);
  EXPECT_EQ(j["channel"]["transport"], "TCP");
  EXPECT_EQ(j["received"], 2);
  EXPECT_EQ(j["lost"], 0);
  EXPECT_EQ(j["rtt_us"]["min"], 10.0);
  EXPECT_EQ(j["rtt_us"]["p50"], 10.0);
  EXPECT_EQ(j["rtt_us"]["max"], 20.0);
  EXPECT_EQ(j["samples_us"], Json::array({10.0, 20.0}));
}

}  // namespace
}  // namespace rdmactl
