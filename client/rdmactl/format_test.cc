// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/format.h"

#include "gtest/gtest.h"

namespace rdmactl {
namespace {

rdmad::Device RoceDevice() {
  rdmad::Device d;
  d.name = "mlx5_0";
  d.vendor = "Mellanox/NVIDIA";
  d.vendor_id = 0x15b3;
  d.vendor_part_id = 0x101d;
  d.driver = "mlx5_core";
  d.fw_ver = "22.36.1010";
  d.node_type = "CA";
  d.numa_node = 0;
  d.pci_address = "0000:3b:00.0";
  rdmad::Port p;
  p.port = 1;
  p.state = "ACTIVE";
  p.state_code = 4;
  p.phys_state = "LinkUp";
  p.link_layer = "Ethernet";
  p.transport = "RoCE v2";
  p.rate = "100 Gb/sec (4X EDR)";
  p.max_mtu = 4096;
  p.active_mtu = 4096;
  p.netdev = "enp59s0f0np0";
  p.netdev_mtu = 9000;
  p.gids = {{0, "fe80:0000:0000:0000:bace:f6ff:fea1:2b3c", "RoCE v1", "enp59s0f0np0",
             "fe80::bace:f6ff:fea1:2b3c"},
            {3, "0000:0000:0000:0000:0000:ffff:0a01:0005", "RoCE v2", "enp59s0f0np0", "10.1.0.5"}};
  d.ports.push_back(p);
  return d;
}

rdmad::Device IbDevice() {
  rdmad::Device d;
  d.name = "mlx5_2";
  d.vendor = "Mellanox/NVIDIA";
  d.node_type = "CA";
  d.numa_node = -1;
  rdmad::Port p;
  p.port = 1;
  p.state = "DOWN";
  p.phys_state = "Polling";
  p.link_layer = "InfiniBand";
  p.transport = "InfiniBand";
  p.rate = "200 Gb/sec (4X HDR)";
  p.lid = 18;
  p.sm_lid = 1;
  p.gids = {{0, "fe80:0000:0000:0000:0c42:a103:0065:e8f4", "IB", "", ""}};
  d.ports.push_back(p);
  return d;
}

TEST(TableTest, AlignsColumnsAndKeepsDetailsOutsideThem) {
  Table t({"A", "LONGER", "C"});
  t.AddRow({"wide cell", "x", "last"});
  t.AddDetail("  a detail line that is wider than the columns");
  t.AddRow({"y", "", ""});
  EXPECT_EQ(t.Render(),
            "A          LONGER  C\n"
            "wide cell  x       last\n"
            "  a detail line that is wider than the columns\n"
            "y\n");
}

TEST(TableTest, WithoutAHeaderPrintsOnlyRows) {
  Table t({});
  t.AddRow({"key", "value"});
  t.AddRow({"longer key", "v"});
  EXPECT_EQ(t.Render(), "key         value\nlonger key  v\n");
}

TEST(FormatTest, NoDevicesIsExactlyOneLine) {
  EXPECT_EQ(FormatDevices({}), "no RDMA devices; channels will use TCP\n");
  EXPECT_EQ(FormatGids({}), "no RDMA devices; channels will use TCP\n");
}

TEST(FormatTest, DevicesShowARowPerDeviceAndALinePerPort) {
  EXPECT_EQ(FormatDevices({RoceDevice(), IbDevice()}),
            "DEVICE  VENDOR           DRIVER     NODE  TRANSPORT   ACTIVE/PORTS  FIRMWARE    NUMA  "
            "PCI/NETDEV\n"
            "mlx5_0  Mellanox/NVIDIA  mlx5_core  CA    RoCE v2     1/1           22.36.1010  0     "
            "0000:3b:00.0\n"
            "  port 1: ACTIVE (LinkUp), Ethernet/RoCE v2, 100 Gb/sec (4X EDR), MTU 4096 active / "
            "4096 max, netdev enp59s0f0np0 (MTU 9000), 2 GIDs\n"
            "mlx5_2  Mellanox/NVIDIA  -          CA    InfiniBand  0/1           -           -     "
            "-\n"
            "  port 1: DOWN (Polling), InfiniBand, 200 Gb/sec (4X HDR), MTU unknown, LID 18, "
            "SM LID 1, 1 GID\n");
}

TEST(FormatTest, SoftwareDevicesShowTheirParentNetdev) {
  rdmad::Device d = RoceDevice();
  d.name = "rxe0";
  d.parent_netdev = "veth0";
  EXPECT_NE(FormatDevices({d}).find("  netdev veth0\n"), std::string::npos) << FormatDevices({d});
}

TEST(FormatTest, OneDeviceInDetailListsFieldsAndGids) {
  std::string text = FormatDevice(RoceDevice());
  EXPECT_EQ(text.rfind("mlx5_0: Mellanox/NVIDIA CA, RoCE v2, 1/1 ports active\n", 0), 0u) << text;
  EXPECT_NE(text.find("  vendor            Mellanox/NVIDIA (vendor id 0x15b3, part 0x101d)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  max QPs/MRs/CQs   ? / ? / ?\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    INDEX  GID                                      TYPE     NETDEV"
                      "        IP\n"
                      "    0      fe80:0000:0000:0000:bace:f6ff:fea1:2b3c  RoCE v1  "
                      "enp59s0f0np0  fe80::bace:f6ff:fea1:2b3c\n"),
            std::string::npos)
      << text;
}

TEST(FormatTest, GidsTableHasDashesForIbGids) {
  EXPECT_EQ(FormatGids({RoceDevice(), IbDevice()}),
            "DEV     PORT  INDEX  GID                                      TYPE     NETDEV"
            "        IP\n"
            "mlx5_0  1     0      fe80:0000:0000:0000:bace:f6ff:fea1:2b3c  RoCE v1  "
            "enp59s0f0np0  fe80::bace:f6ff:fea1:2b3c\n"
            "mlx5_0  1     3      0000:0000:0000:0000:0000:ffff:0a01:0005  RoCE v2  "
            "enp59s0f0np0  10.1.0.5\n"
            "mlx5_2  1     0      fe80:0000:0000:0000:0c42:a103:0065:e8f4  IB       -"
            "             -\n");
}

rdmad::Path RocePath() {
  rdmad::Path p;
  p.device = "mlx5_0";
  p.port = 1;
  p.transport = "RoCE v2";
  p.gid_index = 3;
  p.gid = "0000:0000:0000:0000:0000:ffff:0a01:0005";
  p.gid_type = "RoCE v2";
  p.source_ip = "10.1.0.5";
  p.netdev = "enp59s0f0np0";
  p.mtu = 1024;
  p.local_active_mtu = 1024;
  p.mtu_cap = 4096;
  p.qp = {"RC", 14, 7, 7, 12, 0, 0, 64, 64, 128, 128, 1, 50, 2, 65536};
  p.reasons = {"device mlx5_0: selected", "port 1: the only usable port"};
  return p;
}

TEST(FormatTest, PathShowsTheFieldsThenWhy) {
  EXPECT_EQ(FormatPath("10.1.0.9", RocePath()),
            "path to 10.1.0.9: RoCE v2 over mlx5_0 port 1\n"
            "  device     mlx5_0\n"
            "  port       1\n"
            "  transport  RoCE v2\n"
            "  GID        3  0000:0000:0000:0000:0000:ffff:0a01:0005 (RoCE v2)\n"
            "  source IP  10.1.0.5\n"
            "  netdev     enp59s0f0np0\n"
            "  MTU        1024 (local active 1024, peer unknown, cap 4096)\n"
            "  QP         RC: timeout 14, retry_cnt 7, rnr_retry 7, min_rnr_timer 12\n"
            "             traffic_class 0, service_level 0, hop_limit 64\n"
            "             max_inline 64, send_depth 128, recv_depth 128, qps_per_channel 1\n"
            "             spin_us 50, relaxed_ordering 2, slot_size 65536\n"
            "why:\n"
            "  device mlx5_0: selected\n"
            "  port 1: the only usable port\n");
}

TEST(FormatTest, InfiniBandPathShowsTheLidAndNoSourceIp) {
  rdmad::Path p = RocePath();
  p.transport = "InfiniBand";
  p.gid_index = 0;
  p.gid_type = "IB";
  p.source_ip.clear();
  p.netdev.clear();
  p.lid = 18;
  p.peer_active_mtu = 2048;
  std::string text = FormatPath("10.2.0.9", p);
  EXPECT_NE(text.find("  LID        18\n"), std::string::npos) << text;
  EXPECT_NE(text.find("peer 2048"), std::string::npos) << text;
  EXPECT_EQ(text.find("source IP"), std::string::npos) << text;
}

TEST(FormatTest, EventsNameTheirDeviceAndPort) {
  rdmad::Event e;
  e.sequence = 7;
  e.kind = rdmad::EventKind::kPortStateChanged;
  e.device = "mlx5_0";
  e.port = 1;
  e.message = "mlx5_0 port 1: ACTIVE -> DOWN";
  EXPECT_EQ(FormatEvent(e), "#7 port-state-changed mlx5_0 port 1: ACTIVE -> DOWN\n");
  e.message = "link went down";
  EXPECT_EQ(FormatEvent(e), "#7 port-state-changed mlx5_0 port 1: link went down\n");
  e.kind = rdmad::EventKind::kDeviceAdded;
  e.port = 0;
  e.message = "mlx5_0 (Mellanox/NVIDIA, RoCE v2, 1 port) added";
  EXPECT_EQ(FormatEvent(e),
            "#7 device-added mlx5_0: mlx5_0 (Mellanox/NVIDIA, RoCE v2, 1 port) added\n");
  e.kind = rdmad::EventKind::kConfigReloaded;
  e.device.clear();
  e.port = 0;
  e.message = "reloaded";
  EXPECT_EQ(FormatEvent(e), "#7 config-reloaded: reloaded\n");
}

TEST(FormatTest, StatusListsDevicesOrSaysTcp) {
  rdmad::DaemonStatus s;
  s.version = "0.1.0";
  s.pid = 42;
  s.uptime_seconds = 3725;
  std::string none = FormatStatus(s, {});
  EXPECT_NE(none.find("up 0d 01:02:05\n"), std::string::npos) << none;
  EXPECT_NE(none.find("\n  no RDMA devices; channels will use TCP\n"), std::string::npos) << none;
  s.device_count = 2;
  s.port_count = 2;
  s.active_port_count = 1;
  std::string two = FormatStatus(s, {RoceDevice(), IbDevice()});
  EXPECT_NE(two.find("  devices: 2 (2 ports, 1 active)\n"
                     "    mlx5_0  RoCE v2     1/1 ports active\n"
                     "    mlx5_2  InfiniBand  0/1 ports active\n"),
            std::string::npos)
      << two;
  EXPECT_EQ(two.find("TCP"), std::string::npos) << two;
}

TEST(FormatTest, CountersAreANameValueTable) {
  EXPECT_EQ(FormatCounters({{"port_rcv_data", 987654321}, {"symbol_error", 0}}),
            "NAME           VALUE\n"
            "port_rcv_data  987654321\n"
            "symbol_error   0\n");
  EXPECT_EQ(FormatCounters({}), "no counters\n");
}

}  // namespace
}  // namespace rdmactl
