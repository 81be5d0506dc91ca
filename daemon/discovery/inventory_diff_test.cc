// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// DiffInventory, table by table over hand-built inventories, then over the
// sysfs fixture trees.

#include "daemon/discovery/inventory_diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "daemon/discovery/sysfs_reader.h"

namespace rdmad {
namespace {

using Kind = InventoryChange::Kind;

PortInfo Port(int number, int state, std::string state_name, int phys, std::string phys_name,
              std::vector<GidEntry> gids) {
  PortInfo p;
  p.port = number;
  p.state = state;
  p.state_name = std::move(state_name);
  p.phys_state = phys;
  p.phys_state_name = std::move(phys_name);
  p.link_layer = LinkLayer::kEthernet;
  p.transport = Transport::kRoceV2;
  p.gids = std::move(gids);
  return p;
}

const GidEntry kGid1{1, "0000:0000:0000:0000:0000:ffff:0a01:0005", GidType::kRoceV2, "eth0",
                     "10.1.0.5"};
const GidEntry kGid3{3, "0000:0000:0000:0000:0000:ffff:0a01:0007", GidType::kRoceV2, "eth0",
                     "10.1.0.7"};

// Two devices: mlx5_0 with two ACTIVE ports, mlx5_1 with one.
Inventory Base() {
  Inventory inv;
  DeviceInfo a;
  a.name = "mlx5_0";
  a.vendor = "Mellanox/NVIDIA";
  a.ports = {Port(1, 4, "ACTIVE", 5, "LinkUp", {kGid1}), Port(2, 4, "ACTIVE", 5, "LinkUp", {})};
  DeviceInfo b = a;
  b.name = "mlx5_1";
  b.ports = {Port(1, 4, "ACTIVE", 5, "LinkUp", {kGid1})};
  inv.devices = {a, b};
  return inv;
}

struct Expected {
  Kind kind;
  std::string device;
  int port;
  std::string message;
};

struct DiffCase {
  std::string name;
  std::function<void(Inventory*)> change;  // applied to a copy of Base()
  std::vector<Expected> want;              // in order
};
void PrintTo(const DiffCase& c, std::ostream* os) { *os << c.name; }

class InventoryDiffTest : public ::testing::TestWithParam<DiffCase> {};

TEST_P(InventoryDiffTest, Diffs) {
  const DiffCase& c = GetParam();
  Inventory before = Base();
  Inventory after = Base();
  c.change(&after);
  std::vector<InventoryChange> got = DiffInventory(before, after);
  ASSERT_EQ(got.size(), c.want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].kind, c.want[i].kind);
    EXPECT_EQ(got[i].device, c.want[i].device);
    EXPECT_EQ(got[i].port, c.want[i].port);
    EXPECT_EQ(got[i].message, c.want[i].message);
  }
}

PortInfo& PortOf(Inventory* inv, size_t device, size_t port) {
  return inv->devices[device].ports[port];
}

INSTANTIATE_TEST_SUITE_P(
    Table, InventoryDiffTest,
    ::testing::ValuesIn(std::vector<DiffCase>{
        {"Unchanged", [](Inventory*) {}, {}},
        {"IgnoresFieldsThatAreNotEvents",
         [](Inventory* inv) {
           PortOf(inv, 0, 0).rate_gbps = 25;
           PortOf(inv, 0, 0).netdev_mtu = 1500;
           inv->devices[1].fw_ver = "22.1";
         },
         {}},
        {"DeviceRemoved",
         [](Inventory* inv) { inv->devices.pop_back(); },
         {{Kind::kDeviceRemoved, "mlx5_1", 0, "mlx5_1 removed"}}},
        {"DeviceAdded",
         [](Inventory* inv) {
           DeviceInfo rxe;
           rxe.name = "rxe0";
           rxe.vendor = "software";
           rxe.ports = {Port(1, 4, "ACTIVE", 5, "LinkUp", {kGid1})};
           inv->devices.push_back(rxe);
         },
         {{Kind::kDeviceAdded, "rxe0", 0, "rxe0 (software, RoCE v2, 1 port) added"}}},
        {"DeviceAddedWithTwoPorts",
         [](Inventory* inv) {
           DeviceInfo d = inv->devices[0];
           d.name = "mlx5_2";
           inv->devices.push_back(d);
         },
         {{Kind::kDeviceAdded, "mlx5_2", 0, "mlx5_2 (Mellanox/NVIDIA, RoCE v2, 2 ports) added"}}},
        {"DeviceRenamedIsRemovedAndAdded",
         [](Inventory* inv) { inv->devices[1].name = "mlx5_9"; },
         {{Kind::kDeviceRemoved, "mlx5_1", 0, "mlx5_1 removed"},
          {Kind::kDeviceAdded, "mlx5_9", 0, "mlx5_9 (Mellanox/NVIDIA, RoCE v2, 1 port) added"}}},
        {"PortWentDown",
         [](Inventory* inv) {
           PortInfo& p = PortOf(inv, 0, 1);
           p.state = 1;
           p.state_name = "DOWN";
           p.phys_state = 3;
           p.phys_state_name = "Disabled";
         },
         {{Kind::kPortStateChanged, "mlx5_0", 2,
           "mlx5_0 port 2: ACTIVE (LinkUp) -> DOWN (Disabled)"}}},
        {"PhysStateAloneIsAChange",
         [](Inventory* inv) {
           PortOf(inv, 1, 0).phys_state = 7;
           PortOf(inv, 1, 0).phys_state_name = "PortConfigurationTraining";
         },
         {{Kind::kPortStateChanged, "mlx5_1", 1,
           "mlx5_1 port 1: ACTIVE (LinkUp) -> ACTIVE "
           "(PortConfigurationTraining)"}}},
        {"GidAdded",
         [](Inventory* inv) { PortOf(inv, 0, 0).gids.push_back(kGid3); },
         {{Kind::kGidAdded, "mlx5_0", 1,
           "mlx5_0 port 1: GID 3 0000:0000:0000:0000:0000:ffff:0a01:0007 "
           "(RoCE v2, 10.1.0.7 on eth0) added"}}},
        {"GidRemoved",
         [](Inventory* inv) { PortOf(inv, 1, 0).gids.clear(); },
         {{Kind::kGidRemoved, "mlx5_1", 1,
           "mlx5_1 port 1: GID 1 0000:0000:0000:0000:0000:ffff:0a01:0005 "
           "(RoCE v2, 10.1.0.5 on eth0) removed"}}},
        {"GidReplacedAtTheSameIndex",
         [](Inventory* inv) {
           GidEntry g = kGid3;
           g.index = 1;
           PortOf(inv, 0, 0).gids = {g};
         },
         {{Kind::kGidRemoved, "mlx5_0", 1,
           "mlx5_0 port 1: GID 1 0000:0000:0000:0000:0000:ffff:0a01:0005 "
           "(RoCE v2, 10.1.0.5 on eth0) removed"},
          {Kind::kGidAdded, "mlx5_0", 1,
           "mlx5_0 port 1: GID 1 0000:0000:0000:0000:0000:ffff:0a01:0007 "
           "(RoCE v2, 10.1.0.7 on eth0) added"}}},
        {"GidTypeChanged",
         [](Inventory* inv) { PortOf(inv, 1, 0).gids[0].type = GidType::kRoceV1; },
         {{Kind::kGidRemoved, "mlx5_1", 1,
           "mlx5_1 port 1: GID 1 0000:0000:0000:0000:0000:ffff:0a01:0005 "
           "(RoCE v2, 10.1.0.5 on eth0) removed"},
          {Kind::kGidAdded, "mlx5_1", 1,
           "mlx5_1 port 1: GID 1 0000:0000:0000:0000:0000:ffff:0a01:0005 "
           "(RoCE v1, 10.1.0.5 on eth0) added"}}},
        {"StateAndGidChangeOnOnePort",
         [](Inventory* inv) {
           PortInfo& p = PortOf(inv, 0, 0);
           p.state = 1;
           p.state_name = "DOWN";
           p.gids.clear();
         },
         {{Kind::kPortStateChanged, "mlx5_0", 1, "mlx5_0 port 1: ACTIVE (LinkUp) -> DOWN (LinkUp)"},
          {Kind::kGidRemoved, "mlx5_0", 1,
           "mlx5_0 port 1: GID 1 0000:0000:0000:0000:0000:ffff:0a01:0005 "
           "(RoCE v2, 10.1.0.5 on eth0) removed"}}},
        {"DeviceOrderDoesNotMatter",
         [](Inventory* inv) { std::swap(inv->devices[0], inv->devices[1]); },
         {}},
    }),
    [](const auto& info) { return info.param.name; });

// The fixture trees, read as the daemon reads /sys.

std::vector<DeviceInfo> ReadFixture(const std::string& name) {
  StatusOr<std::vector<DeviceInfo>> devices =
      ReadSysfsDevices(std::string(RDMAD_SOURCE_DIR) + "/tests/fixtures/sysfs/" + name);
  EXPECT_TRUE(devices.ok()) << devices.status().ToString();
  return devices.ok() ? *devices : std::vector<DeviceInfo>{};
}

TEST(InventoryDiffFixtureTest, FromNothingEveryDeviceIsAdded) {
  Inventory after{ReadFixture("connectx-roce")};
  ASSERT_EQ(after.devices.size(), 2u);
  std::vector<InventoryChange> got = DiffInventory(Inventory{}, after);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].kind, Kind::kDeviceAdded);
  EXPECT_EQ(got[0].message, "mlx5_0 (Mellanox/NVIDIA, RoCE v2, 1 port) added");
  EXPECT_EQ(got[1].device, "mlx5_1");
  EXPECT_EQ(DiffInventory(after, Inventory{}).size(), 2u);
  EXPECT_TRUE(DiffInventory(after, after).empty());
}

TEST(InventoryDiffFixtureTest, SwappingTheCardIsRemoveAndAdd) {
  Inventory before{ReadFixture("connectx-roce")};
  Inventory after{ReadFixture("infiniband-hca")};
  std::vector<InventoryChange> got = DiffInventory(before, after);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].message, "mlx5_0 removed");
  EXPECT_EQ(got[1].message, "mlx5_1 removed");
  EXPECT_EQ(got[2].kind, Kind::kDeviceAdded);
  EXPECT_EQ(got[2].message, "mlx5_2 (Mellanox/NVIDIA, InfiniBand, 1 port) added");
}

TEST(InventoryDiffFixtureTest, RxeAddressRemoved) {
  Inventory before{ReadFixture("rxe-lab")};
  ASSERT_EQ(before.devices.size(), 1u);
  ASSERT_EQ(before.devices[0].ports.size(), 1u);
  Inventory after = before;
  // `ip addr del 192.0.2.1/24 dev veth0`: the kernel drops GID 1.
  std::vector<GidEntry>& gids = after.devices[0].ports[0].gids;
  ASSERT_EQ(gids.size(), 2u);
  gids.erase(gids.begin() + 1);
  std::vector<InventoryChange> got = DiffInventory(before, after);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, Kind::kGidRemoved);
  EXPECT_EQ(got[0].device, "rxe0");
  EXPECT_EQ(got[0].port, 1);
  EXPECT_EQ(got[0].message,
            "rxe0 port 1: GID 1 0000:0000:0000:0000:0000:ffff:c000:0201 "
            "(RoCE v2, 192.0.2.1 on veth0) removed");
}

TEST(InventoryDiffFixtureTest, IwarpPortComingUp) {
  Inventory before{ReadFixture("iwarp-rnic")};
  ASSERT_EQ(before.devices.size(), 1u);
  ASSERT_EQ(before.devices[0].ports.size(), 2u);
  Inventory after = before;
  PortInfo& p2 = after.devices[0].ports[1];
  p2.state = 4;
  p2.state_name = "ACTIVE";
  p2.phys_state = 5;
  p2.phys_state_name = "LinkUp";
  std::vector<InventoryChange> got = DiffInventory(before, after);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, Kind::kPortStateChanged);
  EXPECT_EQ(got[0].message, "cxgb4_0 port 2: DOWN (Disabled) -> ACTIVE (LinkUp)");
}

}  // namespace
}  // namespace rdmad
