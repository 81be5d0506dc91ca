// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Reads the fixture trees under tests/fixtures/sysfs/ (see their README.md
// files) field by field.

#include "daemon/discovery/sysfs_reader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

namespace fs = std::filesystem;

std::string FixtureRoot(const std::string& name) {
  return std::string(RDMAD_SOURCE_DIR) + "/tests/fixtures/sysfs/" + name;
}

std::vector<DeviceInfo> ReadFixture(const std::string& name) {
  auto devices = ReadSysfsDevices(FixtureRoot(name));
  EXPECT_TRUE(devices.ok()) << devices.status().ToString();
  return devices.ok() ? *devices : std::vector<DeviceInfo>{};
}

GidEntry Gid(int index, std::string gid, GidType type, std::string netdev, std::string ip) {
  return GidEntry{index, std::move(gid), type, std::move(netdev), std::move(ip)};
}

// A scratch sysfs root, removed afterwards.
class ScratchSysfs {
 public:
  ScratchSysfs()
      : root_(fs::temp_directory_path() / ("rdmad-sysfs-test-" + std::to_string(getpid()))) {
    fs::remove_all(root_);
  }
  ~ScratchSysfs() { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text << "\n";
  }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(SysfsReaderTest, ConnectXRoceHasOneEthernetPortPerDevice) {
  std::vector<DeviceInfo> devices = ReadFixture("connectx-roce");
  ASSERT_EQ(devices.size(), 2u);
  const DeviceInfo& d = devices[0];
  EXPECT_EQ(d.name, "mlx5_0");
  EXPECT_EQ(d.node_guid, "b8ce:f603:00a1:2b3c");
  EXPECT_EQ(d.vendor_id, 0x15b3u);
  EXPECT_EQ(d.vendor_part_id, 0x101du);
  EXPECT_EQ(d.vendor, "Mellanox/NVIDIA");
  EXPECT_EQ(d.driver, "mlx5_core");
  EXPECT_EQ(d.fw_ver, "22.36.1010");
  EXPECT_EQ(d.hw_rev, "0x0");
  EXPECT_EQ(d.node_type, NodeType::kCa);
  EXPECT_EQ(d.numa_node, 0);
  EXPECT_EQ(d.pci_address, "0000:3b:00.0");
  EXPECT_EQ(d.parent_netdev, "");
  ASSERT_EQ(d.ports.size(), 1u);
  const PortInfo& p = d.ports[0];
  EXPECT_EQ(p.port, 1);
  EXPECT_EQ(p.state, 4);
  EXPECT_EQ(p.state_name, "ACTIVE");
  EXPECT_EQ(p.phys_state, 5);
  EXPECT_EQ(p.phys_state_name, "LinkUp");
  EXPECT_EQ(p.link_layer, LinkLayer::kEthernet);
  EXPECT_EQ(p.transport, Transport::kRoceV2);
  EXPECT_EQ(p.rate, "100 Gb/sec (4X EDR)");
  EXPECT_DOUBLE_EQ(p.rate_gbps, 100);
  EXPECT_EQ(p.lid, 0u);
  EXPECT_EQ(p.sm_lid, 0u);
  EXPECT_EQ(p.max_mtu, 0);  // verbs fills these
  EXPECT_EQ(p.active_mtu, 0);
  EXPECT_EQ(p.netdev, "enp59s0f0np0");
  EXPECT_EQ(p.netdev_mtu, 9000);
  const std::string nd = "enp59s0f0np0";
  const std::string ll = "fe80:0000:0000:0000:bace:f6ff:fea1:2b3c";
  const std::string v4 = "0000:0000:0000:0000:0000:ffff:0a01:0005";
  const std::string v6 = "2001:0db8:0001:0000:0000:0000:0000:0005";
  std::vector<GidEntry> want = {
      Gid(0, ll, GidType::kRoceV1, nd, "fe80::bace:f6ff:fea1:2b3c"),
      Gid(1, ll, GidType::kRoceV2, nd, "fe80::bace:f6ff:fea1:2b3c"),
      Gid(2, v4, GidType::kRoceV1, nd, "10.1.0.5"),
      Gid(3, v4, GidType::kRoceV2, nd, "10.1.0.5"),
      Gid(4, v6, GidType::kRoceV1, nd, "2001:db8:1::5"),
      Gid(5, v6, GidType::kRoceV2, nd, "2001:db8:1::5"),
  };
  EXPECT_EQ(p.gids, want);  // null GIDs 6 and 7 are left out
}

TEST(SysfsReaderTest, ConnectXRoceSecondDevice) {
  std::vector<DeviceInfo> devices = ReadFixture("connectx-roce");
  ASSERT_EQ(devices.size(), 2u);
  const DeviceInfo& d = devices[1];
  EXPECT_EQ(d.name, "mlx5_1");
  EXPECT_EQ(d.pci_address, "0000:3b:00.1");
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0].netdev, "enp59s0f1np1");
  ASSERT_EQ(d.ports[0].gids.size(), 4u);
  EXPECT_EQ(d.ports[0].gids[3].ip, "10.1.1.5");
  EXPECT_EQ(d.ports[0].gids[3].type, GidType::kRoceV2);
}

TEST(SysfsReaderTest, InfiniBandHca) {
  std::vector<DeviceInfo> devices = ReadFixture("infiniband-hca");
  ASSERT_EQ(devices.size(), 1u);
  const DeviceInfo& d = devices[0];
  EXPECT_EQ(d.name, "mlx5_2");
  EXPECT_EQ(d.node_guid, "0c42:a103:0065:e8f4");
  EXPECT_EQ(d.vendor_part_id, 0x101bu);
  EXPECT_EQ(d.numa_node, 1);
  EXPECT_EQ(d.pci_address, "0000:86:00.0");
  ASSERT_EQ(d.ports.size(), 1u);
  const PortInfo& p = d.ports[0];
  EXPECT_EQ(p.link_layer, LinkLayer::kInfiniBand);
  EXPECT_EQ(p.transport, Transport::kInfiniBand);
  EXPECT_DOUBLE_EQ(p.rate_gbps, 200);
  EXPECT_EQ(p.lid, 0x12u);
  EXPECT_EQ(p.sm_lid, 0x1u);
  EXPECT_EQ(p.netdev, "");  // the IPoIB netdev is not the port's
  EXPECT_EQ(p.netdev_mtu, 0);
  std::vector<GidEntry> want = {
      Gid(0, "fe80:0000:0000:0000:0c42:a103:0065:e8f4", GidType::kIb, "", "")};
  EXPECT_EQ(p.gids, want);
}

TEST(SysfsReaderTest, IwarpRnicPortsMapToNetdevsByDevPort) {
  std::vector<DeviceInfo> devices = ReadFixture("iwarp-rnic");
  ASSERT_EQ(devices.size(), 1u);
  const DeviceInfo& d = devices[0];
  EXPECT_EQ(d.name, "cxgb4_0");
  EXPECT_EQ(d.vendor, "Chelsio");
  EXPECT_EQ(d.driver, "cxgb4");
  EXPECT_EQ(d.node_type, NodeType::kRnic);
  EXPECT_EQ(d.pci_address, "0000:01:00.4");
  ASSERT_EQ(d.ports.size(), 2u);
  const PortInfo& p1 = d.ports[0];
  EXPECT_EQ(p1.port, 1);
  EXPECT_EQ(p1.link_layer, LinkLayer::kEthernet);
  EXPECT_EQ(p1.transport, Transport::kIwarp);
  EXPECT_DOUBLE_EQ(p1.rate_gbps, 20);
  EXPECT_EQ(p1.netdev, "enp1s0f4");
  EXPECT_EQ(p1.netdev_mtu, 9000);
  std::vector<GidEntry> want = {
      Gid(0, "0007:4356:1a30:0000:0000:0000:0000:0000", GidType::kIb, "", "")};
  EXPECT_EQ(p1.gids, want);
  const PortInfo& p2 = d.ports[1];
  EXPECT_EQ(p2.port, 2);
  EXPECT_EQ(p2.state, 1);
  EXPECT_EQ(p2.state_name, "DOWN");
  EXPECT_EQ(p2.phys_state_name, "Disabled");
  EXPECT_EQ(p2.transport, Transport::kIwarp);
  EXPECT_EQ(p2.netdev, "enp1s0f4d1");
  EXPECT_EQ(p2.netdev_mtu, 1500);
}

TEST(SysfsReaderTest, NoIpPortHasOnlyLinkLocalGids) {
  std::vector<DeviceInfo> devices = ReadFixture("no-ip");
  ASSERT_EQ(devices.size(), 1u);
  const DeviceInfo& d = devices[0];
  EXPECT_EQ(d.name, "bnxt_re0");
  EXPECT_EQ(d.vendor, "Broadcom");
  EXPECT_EQ(d.driver, "bnxt_en");
  EXPECT_EQ(d.numa_node, -1);
  ASSERT_EQ(d.ports.size(), 1u);
  const PortInfo& p = d.ports[0];
  EXPECT_EQ(p.transport, Transport::kRoceV2);
  EXPECT_EQ(p.netdev, "ens1f0np0");
  EXPECT_EQ(p.netdev_mtu, 1500);
  ASSERT_EQ(p.gids.size(), 2u);
  for (const GidEntry& gid : p.gids) {
    EXPECT_TRUE(gid.ip.starts_with("fe80::")) << gid.ip;
    EXPECT_EQ(gid.netdev, "ens1f0np0");
  }
}

TEST(SysfsReaderTest, OverlayGidsKeepTheirNetdevs) {
  std::vector<DeviceInfo> devices = ReadFixture("overlay");
  ASSERT_EQ(devices.size(), 1u);
  ASSERT_EQ(devices[0].ports.size(), 1u);
  const PortInfo& p = devices[0].ports[0];
  EXPECT_EQ(p.netdev, "enp94s0f0np0");  // the port's own, not an upper one
  EXPECT_EQ(p.netdev_mtu, 1500);
  EXPECT_DOUBLE_EQ(p.rate_gbps, 25);
  ASSERT_EQ(p.gids.size(), 12u);
  EXPECT_EQ(p.gids[3].ip, "10.2.0.7");
  EXPECT_EQ(p.gids[3].netdev, "enp94s0f0np0");
  EXPECT_EQ(p.gids[4].ip, p.gids[0].ip);
  EXPECT_EQ(p.gids[4].netdev, "enp94s0f0np0.100");
  EXPECT_EQ(p.gids[7].ip, "10.100.0.7");
  EXPECT_EQ(p.gids[7].netdev, "enp94s0f0np0.100");
  EXPECT_EQ(p.gids[9].ip, "10.244.1.5");
  EXPECT_EQ(p.gids[9].type, GidType::kRoceV2);
  EXPECT_EQ(p.gids[9].netdev, "macvlan0");
  EXPECT_EQ(p.gids[11].index, 11);
}

TEST(SysfsReaderTest, CapturedRxeLab) {
  std::vector<DeviceInfo> devices = ReadFixture("rxe-lab");
  ASSERT_EQ(devices.size(), 1u);
  const DeviceInfo& d = devices[0];
  EXPECT_EQ(d.name, "rxe0");
  EXPECT_EQ(d.vendor, "software");
  EXPECT_EQ(d.vendor_id, 0u);
  EXPECT_EQ(d.driver, "rdma_rxe");
  EXPECT_EQ(d.parent_netdev, "veth0");
  EXPECT_EQ(d.pci_address, "");  // a veth has no device
  EXPECT_EQ(d.numa_node, -1);
  EXPECT_EQ(d.node_type, NodeType::kCa);
  EXPECT_FALSE(d.node_guid.empty());
  ASSERT_EQ(d.ports.size(), 1u);
  const PortInfo& p = d.ports[0];
  EXPECT_EQ(p.state_name, "ACTIVE");
  EXPECT_EQ(p.link_layer, LinkLayer::kEthernet);
  EXPECT_EQ(p.transport, Transport::kRoceV2);
  EXPECT_GT(p.rate_gbps, 0);
  EXPECT_EQ(p.netdev, "veth0");
  EXPECT_EQ(p.netdev_mtu, 1500);
  const GidEntry* v4 = nullptr;
  for (const GidEntry& gid : p.gids) {
    if (gid.index == 1) v4 = &gid;
  }
  ASSERT_NE(v4, nullptr);
  EXPECT_EQ(v4->gid, "0000:0000:0000:0000:0000:ffff:c000:0201");
  EXPECT_EQ(v4->type, GidType::kRoceV2);
  EXPECT_EQ(v4->netdev, "veth0");
  EXPECT_EQ(v4->ip, "192.0.2.1");
}

TEST(SysfsReaderTest, MissingRootIsNoDevices) {
  auto devices = ReadSysfsDevices(FixtureRoot("does-not-exist"));
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  EXPECT_TRUE(devices->empty());
}

TEST(SysfsReaderTest, MissingDeviceIsNotFound) {
  auto device = ReadSysfsDevice(FixtureRoot("connectx-roce"), "mlx5_9");
  EXPECT_EQ(device.status().code(), StatusCode::kNotFound);
  auto bad = ReadSysfsDevice(FixtureRoot("connectx-roce"), "../mlx5_0");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(SysfsReaderTest, DeviceWithoutPortsOrFiles) {
  ScratchSysfs sysfs;
  sysfs.Write("class/infiniband/bare0/node_type", "1: CA");
  sysfs.Write("class/infiniband/zz_empty/.keep", "");
  auto devices = ReadSysfsDevices(sysfs.root());
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].name, "bare0");
  EXPECT_EQ((*devices)[0].node_type, NodeType::kCa);
  EXPECT_TRUE((*devices)[0].ports.empty());
  EXPECT_EQ((*devices)[0].vendor, "");
  EXPECT_EQ((*devices)[0].numa_node, -1);
  EXPECT_EQ((*devices)[1].node_type, NodeType::kUnknown);
}

TEST(SysfsReaderTest, PortsAndGidsAreSortedNumerically) {
  ScratchSysfs sysfs;
  const std::string port = "class/infiniband/dev0/ports/";
  for (int n : {10, 2, 1}) {
    sysfs.Write(port + std::to_string(n) + "/link_layer", "InfiniBand");
  }
  for (int i : {10, 9, 1}) {
    sysfs.Write(port + "1/gids/" + std::to_string(i),
                "fe80:0000:0000:0000:0000:0000:0000:00" + std::to_string(i));
  }
  sysfs.Write(port + "1/gids/junk", "fe80::1");
  sysfs.Write(port + "1/gids/3", "not a gid");
  auto device = ReadSysfsDevice(sysfs.root(), "dev0");
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  ASSERT_EQ(device->ports.size(), 3u);
  EXPECT_EQ(device->ports[0].port, 1);
  EXPECT_EQ(device->ports[1].port, 2);
  EXPECT_EQ(device->ports[2].port, 10);
  ASSERT_EQ(device->ports[0].gids.size(), 3u);
  EXPECT_EQ(device->ports[0].gids[0].index, 1);
  EXPECT_EQ(device->ports[0].gids[1].index, 9);
  EXPECT_EQ(device->ports[0].gids[2].index, 10);
}

TEST(SysfsReaderTest, PortCountersFromBothGroups) {
  auto counters = ReadPortCounters(FixtureRoot("connectx-roce"), "mlx5_0", 1);
  ASSERT_TRUE(counters.ok()) << counters.status().ToString();
  EXPECT_EQ(counters->at("port_xmit_data"), 123456789u);
  EXPECT_EQ(counters->at("port_rcv_packets"), 2000u);
  EXPECT_EQ(counters->at("np_cnp_sent"), 17u);
  EXPECT_EQ(counters->at("out_of_buffer"), 3u);
  EXPECT_EQ(counters->count("lifespan"), 0u);  // a setting
  EXPECT_EQ(counters->count("broken"), 0u);    // unreadable
  EXPECT_EQ(counters->size(), 13u);
}

TEST(SysfsReaderTest, PortCountersOfMissingPort) {
  auto none = ReadPortCounters(FixtureRoot("connectx-roce"), "mlx5_1", 1);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto missing = ReadPortCounters(FixtureRoot("connectx-roce"), "mlx5_0", 2);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(SysfsReaderTest, RxeLabCountersAreReadable) {
  auto counters = ReadPortCounters(FixtureRoot("rxe-lab"), "rxe0", 1);
  ASSERT_TRUE(counters.ok()) << counters.status().ToString();
  EXPECT_EQ(counters->count("sent_pkts"), 1u);
  EXPECT_EQ(counters->count("rcvd_pkts"), 1u);
}

TEST(SysfsReaderTest, IbMtuForNetdevMtuTable) {
  struct Case {
    int netdev_mtu;
    int ib_mtu;
  };
  for (Case c : std::initializer_list<Case>{{9000, 4096},
                                            {4200, 4096},
                                            {4192, 4096},
                                            {4191, 2048},
                                            {2144, 2048},
                                            {2143, 1024},
                                            {1500, 1024},
                                            {1280, 1024},
                                            {1120, 1024},
                                            {1119, 512},
                                            {576, 256},
                                            {352, 256},
                                            {351, 0},
                                            {0, 0},
                                            {-1, 0}}) {
    EXPECT_EQ(IbMtuForNetdevMtu(c.netdev_mtu), c.ib_mtu) << c.netdev_mtu;
  }
}

TEST(SysfsReaderTest, ParseRate) {
  EXPECT_DOUBLE_EQ(ParseSysfsRateGbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_DOUBLE_EQ(ParseSysfsRateGbps("400 Gb/sec (4X NDR)"), 400);
  EXPECT_DOUBLE_EQ(ParseSysfsRateGbps("53.125 Gb/sec (1X HDR)"), 53.125);
  EXPECT_DOUBLE_EQ(ParseSysfsRateGbps(""), 0);
  EXPECT_DOUBLE_EQ(ParseSysfsRateGbps("fast"), 0);
  EXPECT_DOUBLE_EQ(ParseSysfsRateGbps("x Gb/sec"), 0);
}

TEST(SysfsReaderTest, GidIpText) {
  EXPECT_EQ(GidIpText("0000:0000:0000:0000:0000:ffff:c000:0201", GidType::kRoceV2), "192.0.2.1");
  EXPECT_EQ(GidIpText("fe80:0000:0000:0000:5054:00ff:fe12:3456", GidType::kRoceV1),
            "fe80::5054:ff:fe12:3456");
  EXPECT_EQ(GidIpText("fe80:0000:0000:0000:0c42:a103:0065:e8f4", GidType::kIb), "");
  EXPECT_EQ(GidIpText("garbage", GidType::kRoceV2), "");
}

}  // namespace
}  // namespace rdmad
