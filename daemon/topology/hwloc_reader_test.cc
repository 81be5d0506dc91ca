// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The reader against the topologies of real kinds of machine
// (tests/fixtures/topology/make_fixtures.py says where each comes from).

#include "daemon/topology/hwloc_reader.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace rdmad {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(RDMAD_SOURCE_DIR) + "/tests/fixtures/topology/" + name;
}

// The GPU x NIC matrix as rows of words, as rdmactl topo prints it.
std::map<std::string, std::string> Rows(const Topology& t) {
  std::map<std::string, std::string> rows;
  for (const TopoNic& nic : t.nics) {
    std::string row;
    for (const TopoGpu& gpu : t.gpus) {
      if (!row.empty()) row += " ";
      row += PathTypeName(PathBetween(nic.place, gpu.place));
    }
    rows[nic.name] = row;
  }
  return rows;
}

TEST(HwlocReaderTest, AnEightGpuServerHasEachGpusNicBehindItsSwitch) {
  auto t = ReadTopology(Fixture("gpu8-nic8-2socket.xml"), Inventory{});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->numa_nodes, 2);
  EXPECT_EQ(t->machine, "NVIDIA DGX A100 (rdmad fixture)");
  ASSERT_EQ(t->gpus.size(), 8u) << "the BMC's VGA is not a GPU";
  ASSERT_EQ(t->nics.size(), 8u);
  // GPU g shares a leaf switch with mlx5_g; pairs share a top switch; a
  // socket has two host bridges.
  std::map<std::string, std::string> expected = {
      {"mlx5_0", "PIX PXB NODE NODE SYS SYS SYS SYS"},
      {"mlx5_1", "PXB PIX NODE NODE SYS SYS SYS SYS"},
      {"mlx5_2", "NODE NODE PIX PXB SYS SYS SYS SYS"},
      {"mlx5_3", "NODE NODE PXB PIX SYS SYS SYS SYS"},
      {"mlx5_4", "SYS SYS SYS SYS PIX PXB NODE NODE"},
      {"mlx5_5", "SYS SYS SYS SYS PXB PIX NODE NODE"},
      {"mlx5_6", "SYS SYS SYS SYS NODE NODE PIX PXB"},
      {"mlx5_7", "SYS SYS SYS SYS NODE NODE PXB PIX"},
  };
  EXPECT_EQ(Rows(*t), expected);
  const TopoGpu& gpu0 = t->gpus[0];
  EXPECT_EQ(gpu0.index, 0);
  EXPECT_EQ(gpu0.place.address, "0000:11:00.0");
  EXPECT_EQ(gpu0.vendor, "NVIDIA");
  EXPECT_EQ(gpu0.class_id, 0x0302);
  EXPECT_EQ(gpu0.model, "GA100 [A100 SXM4 80GB]");
  EXPECT_EQ(gpu0.place.numa_node, 0);
  EXPECT_EQ(gpu0.place.cpus, "0-7");
  EXPECT_EQ(t->gpus[7].place.numa_node, 1);
  EXPECT_EQ(t->gpus[7].place.cpus, "8-15");
  const TopoNic* nic = t->FindNic("mlx5_0");
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->netdev, "ibp18s0");
  EXPECT_EQ(nic->place.address, "0000:12:00.0");
  EXPECT_EQ(nic->place.bridges.front(), "host:0000:[0c-2b]");
  EXPECT_EQ(nic->place.bridges.size(), 6u);
}

TEST(HwlocReaderTest, ATwoNicHostWithoutGpusHasItsNicsOnOneHostBridge) {
  auto t = ReadTopology(Fixture("nic2-host.xml"), Inventory{});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->numa_nodes, 1);
  EXPECT_TRUE(t->gpus.empty()) << "the BMC's VGA is not a GPU";
  ASSERT_EQ(t->nics.size(), 2u);
  EXPECT_EQ(t->nics[0].name, "mlx5_0");
  EXPECT_EQ(t->nics[0].netdev, "ens1f0np0");
  EXPECT_EQ(t->nics[0].place.numa_node, 0);
  EXPECT_EQ(t->nics[0].place.cpus, "0-15");
  EXPECT_EQ(PathBetween(t->nics[0].place, t->nics[1].place), PathType::kPhb);
}

TEST(HwlocReaderTest, ASoftwareDeviceIsPlacedByItsNetdev) {
  Inventory inventory;
  for (auto [name, netdev] : {std::pair{"rxe0", "ens2f0np0"}, std::pair{"siw0", "nowhere"}}) {
    DeviceInfo device;
    device.name = name;
    device.parent_netdev = netdev;
    inventory.devices.push_back(device);
  }
  auto t = ReadTopology(Fixture("nic2-host.xml"), inventory);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const TopoNic* rxe = t->FindNic("rxe0");
  ASSERT_NE(rxe, nullptr);
  EXPECT_EQ(rxe->place.address, "0000:4b:00.0");
  EXPECT_EQ(PathBetween(rxe->place, t->FindNic("mlx5_1")->place), PathType::kSelf);
  const TopoNic* siw = t->FindNic("siw0");
  ASSERT_NE(siw, nullptr) << "a device off the tree is still listed";
  EXPECT_TRUE(siw->place.address.empty());
}

TEST(HwlocReaderTest, AFileThatIsNotATopologyIsRefusedByName) {
  auto missing = ReadTopology("/nonexistent/topology.xml", Inventory{});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/topology.xml"), std::string::npos);
  auto garbage = ReadTopology(std::string(RDMAD_SOURCE_DIR) + "/README.md", Inventory{});
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("README.md"), std::string::npos);
}

TEST(HwlocReaderTest, ThisHostLoads) {
  auto t = ReadTopology("", Inventory{});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->source, "sysfs");
  EXPECT_GE(t->numa_nodes, 1);
}

}  // namespace
}  // namespace rdmad
