// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ResolvePath over hand-built inventories and the sysfs fixture trees under
// tests/fixtures/sysfs/, one table of cases.

#include "daemon/policy/path_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "daemon/discovery/sysfs_reader.h"
#include "daemon/policy/gid_policy.h"

namespace rdmad {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Inventory Fixture(const std::string& name) {
  StatusOr<std::vector<DeviceInfo>> devices =
      ReadSysfsDevices(std::string(RDMAD_SOURCE_DIR) + "/tests/fixtures/sysfs/" + name);
  EXPECT_TRUE(devices.ok()) << devices.status().ToString();
  EXPECT_FALSE(devices.ok() && devices->empty()) << name;
  return Inventory{devices.ok() ? *devices : std::vector<DeviceInfo>{}};
}

// rxe-lab with the MTUs the verbs probe reports: rxe's max 4096, and 1024
// active over veth0's 1500.
Inventory RxeWithMtus() {
  Inventory inv = Fixture("rxe-lab");
  for (DeviceInfo& d : inv.devices) {
    for (PortInfo& p : d.ports) {
      p.max_mtu = 4096;
      p.active_mtu = 1024;
    }
  }
  return inv;
}

GidEntry Gid(int index, const std::string& ip, const std::string& netdev,
             GidType type = GidType::kRoceV2) {
  return GidEntry{index, "::ffff:" + ip, type, netdev, ip};
}

PortInfo Port(int number, std::vector<GidEntry> gids, int state = 4,
              std::string state_name = "ACTIVE") {
  PortInfo p;
  p.port = number;
  p.state = state;
  p.state_name = std::move(state_name);
  p.link_layer = LinkLayer::kEthernet;
  p.transport = Transport::kRoceV2;
  p.max_mtu = p.active_mtu = 4096;
  p.netdev = gids.empty() ? "" : gids[0].netdev;
  p.netdev_mtu = 9000;
  p.gids = std::move(gids);
  return p;
}

DeviceInfo Device(std::string name, std::vector<PortInfo> ports) {
  DeviceInfo d;
  d.name = std::move(name);
  d.node_type = NodeType::kCa;
  d.ports = std::move(ports);
  return d;
}

Inventory Iwarp() {
  DeviceInfo d = Device("cxgb4_0", {Port(1, {Gid(0, "10.7.0.5", "enp1s0f4", GidType::kIb)})});
  d.node_type = NodeType::kRnic;
  d.ports[0].transport = Transport::kIwarp;
  return Inventory{{d}};
}

Inventory InfiniBandWithoutLid() {
  Inventory inv = Fixture("infiniband-hca");
  inv.devices[0].ports[0].lid = 0;
  return inv;
}

// mlx5_0 port 1 DOWN with a routable GID, mlx5_1 ACTIVE with a private one.
Inventory OneDown() {
  return Inventory{{Device("mlx5_0", {Port(1, {Gid(3, "203.0.113.5", "eth0")}, 1, "DOWN")}),
                    Device("mlx5_1", {Port(1, {Gid(3, "10.1.0.5", "eth1")})})}};
}

Inventory NoneActive() {
  return Inventory{{Device("mlx5_0", {Port(1, {Gid(3, "10.1.0.5", "eth0")}, 1, "DOWN")}),
                    Device("mlx5_1", {Port(1, {Gid(3, "10.1.1.5", "eth1")}, 2, "")}),
                    Device("rxe9", {})}};
}

// a_dev has a routable GID, b_dev a private one.
Inventory TwoScopes() {
  return Inventory{{Device("a_dev", {Port(1, {Gid(1, "203.0.113.5", "eth0")})}),
                    Device("b_dev", {Port(1, {Gid(4, "10.1.0.5", "eth1")})})}};
}

// Two equal devices listed in reverse, each with ports 2 and 1.
Inventory EqualPorts() {
  auto dev = [](std::string name) {
    return Device(std::move(name),
                  {Port(2, {Gid(3, "10.2.0.5", "eth2")}), Port(1, {Gid(3, "10.1.0.5", "eth1")})});
  };
  return Inventory{{dev("mlx5_1"), dev("mlx5_0")}};
}

Inventory OnlyV1() {
  return Inventory{{Device("mlx4_0", {Port(1, {Gid(0, "10.1.0.5", "eth0", GidType::kRoceV1)})})}};
}

struct Want {
  std::string device;
  int port = 1;
  int gid_index = -1;
  Transport transport = Transport::kRoceV2;
  std::string source_ip;
  std::string netdev;
  uint32_t lid = 0;
  int mtu = 1024;  // fixtures have no MTUs: "unknown (assuming 1024)"
};

struct PathCase {
  std::string name;
  std::function<Inventory()> inventory;
  std::string peer;
  std::string toml = "";                           // config file text
  std::map<std::string, std::string> routes = {};  // peer -> kernel source
  std::function<void(Config*)> tweak = nullptr;    // values TOML refuses
  int peer_mtu = 0;
  Want want = {};
  std::vector<std::pair<int, std::string>> reasons = {};  // line -> substring
  StatusCode code = StatusCode::kOk;
  std::vector<std::string> error = {};  // substrings of the error message
};
void PrintTo(const PathCase& c, std::ostream* os) { *os << c.name; }

class PathPolicyTest : public ::testing::TestWithParam<PathCase> {};

TEST_P(PathPolicyTest, Resolves) {
  const PathCase& c = GetParam();
  StatusOr<Config> config = ParseConfig(c.toml, "t.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  if (c.tweak) c.tweak(&*config);
  Inventory inventory = c.inventory();
  // The case's routes, counting the lookups.
  struct Routes final : SourceAddressLookup {
    const PathCase& c;
    mutable int lookups = 0;
    explicit Routes(const PathCase& c) : c(c) {}
    std::optional<std::string> SourceAddressFor(const std::string& peer) const override {
      ++lookups;
      EXPECT_EQ(peer, c.peer);  // as the request spells it
      return SourceAddressTable(c.routes).SourceAddressFor(peer);
    }
  } routes(c);
  StatusOr<PathDecision> d = ResolvePath(inventory, *config, {c.peer, c.peer_mtu}, &routes);
  EXPECT_LE(routes.lookups, 1);
  if (c.code != StatusCode::kOk) {
    ASSERT_FALSE(d.ok()) << "picked " << d->device << " GID " << d->gid_index;
    EXPECT_EQ(d.status().code(), c.code) << d.status().ToString();
    for (const std::string& s : c.error) {
      EXPECT_THAT(d.status().message(), HasSubstr(s));
    }
    return;
  }
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(routes.lookups, 1);
  const Want& w = c.want;
  EXPECT_EQ(d->device, w.device);
  EXPECT_EQ(d->port, w.port);
  EXPECT_EQ(d->gid_index, w.gid_index);
  EXPECT_EQ(d->transport, w.transport);
  EXPECT_EQ(d->source_ip, w.source_ip);
  EXPECT_EQ(d->netdev, w.netdev);
  EXPECT_EQ(d->lid, w.lid);
  EXPECT_EQ(d->mtu.mtu, w.mtu);
  EXPECT_EQ(d->qp, ResolveQpAttributes(*config).value());
  // The GID fields match the inventory's entry.
  const DeviceInfo* dev = inventory.Find(d->device);
  ASSERT_NE(dev, nullptr);
  if (w.gid_index >= 0) {
    const GidEntry* entry = nullptr;
    for (const PortInfo& p : dev->ports) {
      for (const GidEntry& g : p.gids) {
        if (p.port == d->port && g.index == w.gid_index) entry = &g;
      }
    }
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(d->gid, entry->gid);
    EXPECT_EQ(d->gid_type, entry->type);
  } else {
    EXPECT_EQ(d->gid, "");
  }
  // One line per decision: device, port, GID, MTU, QP.
  ASSERT_EQ(d->reasons.size(), 5u);
  for (const std::string& line : d->reasons) {
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
  EXPECT_THAT(d->reasons[0], StartsWith("device " + w.device + ": "));
  EXPECT_THAT(d->reasons[1], StartsWith("port " + std::to_string(w.port) + " (ACTIVE, "));
  EXPECT_THAT(d->reasons[2], StartsWith(w.transport == Transport::kIwarp
                                            ? "iWARP: "
                                            : "GID " + std::to_string(w.gid_index) + " ("));
  EXPECT_EQ(d->reasons[3], "MTU " + d->mtu.reason);
  EXPECT_EQ(d->reasons[4], DescribeQpAttributes(d->qp));
  for (const auto& [line, s] : c.reasons) {
    EXPECT_THAT(d->reasons[line], HasSubstr(s)) << "reason line " << line;
  }
}

using T = Transport;
constexpr StatusCode kBadArg = StatusCode::kInvalidArgument;
constexpr StatusCode kNoPath = StatusCode::kFailedPrecondition;
const char kCxLink0[] = "fe80::bace:f6ff:fea1:2b3c";

std::vector<PathCase> Cases() {
  auto cx = [] { return Fixture("connectx-roce"); };
  auto rxe = [] { return Fixture("rxe-lab"); };
  auto ib = [] { return Fixture("infiniband-hca"); };
  auto no_ip = [] { return Fixture("no-ip"); };
  auto overlay = [] { return Fixture("overlay"); };
  return {
      {.name = "EmptyInventory",
       .inventory = [] { return Inventory{}; },
       .peer = "192.0.2.2",
       .code = kNoPath,
       .error = {"no RDMA devices; channels will use TCP"}},
      {.name = "PeerNotAnAddress",
       .inventory = rxe,
       .peer = "rdma-host",
       .code = kBadArg,
       .error = {"peer address \"rdma-host\" is not an IPv4 or IPv6 address"}},
      {.name = "PeerEmpty", .inventory = rxe, .peer = "", .code = kBadArg},
      {.name = "PeerUnspecified", .inventory = rxe, .peer = "0.0.0.0", .code = kBadArg},
      {.name = "PeerMtuNotIb",
       .inventory = rxe,
       .peer = "192.0.2.2",
       .peer_mtu = 1500,
       .code = kBadArg,
       .error = {"peer active MTU: MTU 1500 is not an IB MTU"}},
      {.name = "QpSettingOutOfRange",
       .inventory = rxe,
       .peer = "192.0.2.2",
       .tweak = [](Config* c) { c->qp.timeout = 40; },
       .code = kBadArg,
       .error = {"qp.timeout 40 is out of range 0..31"}},
      {.name = "GidSettingInvalid",
       .inventory = rxe,
       .peer = "192.0.2.2",
       .tweak = [](Config* c) { c->gid.roce_version = "v9"; },
       .code = kBadArg,
       .error = {"gid.roce_version \"v9\""}},
      {.name = "RxeLabPicksGid1",
       .inventory = rxe,
       .peer = "192.0.2.2",
       .want = {"rxe0", 1, 1, T::kRoceV2, "192.0.2.1", "veth0"},
       .reasons = {{0, "selected: devices.include is empty"},
                   {1,
                    "port 1 (ACTIVE, RoCE v2, netdev veth0): the only "
                    "usable port"},
                   {2,
                    "GID 1 (RoCE v2, 192.0.2.1 on veth0): a routable "
                    "address; the kernel gave no source address for "
                    "192.0.2.2"},
                   {3,
                    "MTU 1024: local active MTU unknown (assuming 1024) "
                    "(limits it), peer unknown, cap 4096"}}},
      {.name = "RxeLabKernelSource",
       .inventory = rxe,
       .peer = "192.0.2.2",
       .routes = {{"192.0.2.2", "192.0.2.1"}},
       .want = {"rxe0", 1, 1, T::kRoceV2, "192.0.2.1", "veth0"},
       .reasons = {{1,
                    "holds the kernel's source address 192.0.2.1 for "
                    "192.0.2.2"},
                   {2,
                    "GID 1 (RoCE v2, 192.0.2.1 on veth0): the kernel's "
                    "source address for 192.0.2.2"}}},
      {.name = "RxeLabNetdevLimitsMtu",
       .inventory = RxeWithMtus,
       .peer = "192.0.2.2",
       .peer_mtu = 4096,
       .want = {"rxe0", 1, 1, T::kRoceV2, "192.0.2.1", "veth0", 0, 1024},
       .reasons = {{3,
                    "MTU 1024: local active MTU 1024 (netdev veth0 MTU "
                    "1500 limits it; >= 4200 gives 4096), peer 4096"}}},
      {.name = "RxeLabPeerMtuLimits",
       .inventory = RxeWithMtus,
       .peer = "192.0.2.2",
       .peer_mtu = 512,
       .want = {"rxe0", 1, 1, T::kRoceV2, "192.0.2.1", "veth0", 0, 512},
       .reasons = {{3, "peer 512 (limits it)"}}},
      {.name = "RxeLabIpv6PeerHasNoGid",
       .inventory = rxe,
       .peer = "2001:db8::2",
       .code = kNoPath,
       .error = {"no usable RDMA port for 2001:db8::2: rxe0 port 1: no "
                 "usable GID [GID 0 (RoCE v2, fe80::1434:dfff:fea9:50e3 on "
                 "veth0): link-local address",
                 "IPv4 address, the peer 2001:db8::2 is IPv6"}},
      {.name = "ConnectXKernelSourcePicksMatchingIp",
       .inventory = cx,
       .peer = "10.1.1.9",
       .routes = {{"10.1.1.9", "10.1.1.5"}},
       .want = {"mlx5_1", 1, 3, T::kRoceV2, "10.1.1.5", "enp59s0f1np1"},
       .reasons = {{1, "holds the kernel's source address 10.1.1.5"}}},
      {.name = "ConnectXSubnetPicksMatchingIp",
       .inventory = cx,
       .peer = "10.1.1.9",
       .toml = "[gid]\nsubnet = \"10.1.1.0/24\"\n",
       .want = {"mlx5_1", 1, 3, T::kRoceV2, "10.1.1.5", "enp59s0f1np1"},
       .reasons = {{1, "not used: mlx5_0 port 1: no usable GID ["},
                   {1, "outside gid.subnet 10.1.1.0/24"},
                   {2, "; inside gid.subnet 10.1.1.0/24"}}},
      {.name = "ConnectXNoHintTiesToDeviceName",
       .inventory = cx,
       .peer = "10.1.1.9",
       .want = {"mlx5_0", 1, 3, T::kRoceV2, "10.1.0.5", "enp59s0f0np0"},
       .reasons = {{1, "best-ranked GID of 2 usable ports"}, {2, "a private address"}}},
      {.name = "ConnectXIpv6Peer",
       .inventory = cx,
       .peer = "2001:db8:1::9",
       .want = {"mlx5_0", 1, 5, T::kRoceV2, "2001:db8:1::5", "enp59s0f0np0"},
       .reasons = {{1, "not used: mlx5_1 port 1: no usable GID"}}},
      {.name = "ConnectXPreferV2StaysOnV2",
       .inventory = cx,
       .peer = "10.1.0.9",
       .toml = "[gid]\nroce_version = \"prefer-v2\"\n",
       .routes = {{"10.1.0.9", "10.1.0.5"}},
       .want = {"mlx5_0", 1, 3, T::kRoceV2, "10.1.0.5", "enp59s0f0np0"}},
      {.name = "ConnectXV1",
       .inventory = cx,
       .peer = "10.1.0.9",
       .toml = "[gid]\nroce_version = \"v1\"\n",
       .routes = {{"10.1.0.9", "10.1.0.5"}},
       .want = {"mlx5_0", 1, 2, T::kRoceV1, "10.1.0.5", "enp59s0f0np0"}},
      {.name = "ConnectXPinned",
       .inventory = cx,
       .peer = "10.1.1.9",
       .toml = "[gid]\nindex = 3\n",
       .routes = {{"10.1.1.9", "10.1.1.5"}},
       .want = {"mlx5_1", 1, 3, T::kRoceV2, "10.1.1.5", "enp59s0f1np1"},
       .reasons = {{2,
                    "GID 3 (RoCE v2, 10.1.1.5 on enp59s0f1np1): pinned "
                    "by gid.index 3"}}},
      {.name = "ConnectXPinnedOverridesAuto",
       .inventory = cx,
       .peer = "10.1.0.9",
       .toml = "[gid]\nindex = 1\n",
       .routes = {{"10.1.0.9", "10.1.0.5"}},
       .want = {"mlx5_0", 1, 1, T::kRoceV2, kCxLink0, "enp59s0f0np0"},
       .reasons = {{2,
                    "pinned by gid.index 1; auto would pick GID 3 (the "
                    "kernel's source address for 10.1.0.9); warning: auto "
                    "rejects it: IPv6 address"}}},
      {.name = "ConnectXPinnedV1",
       .inventory = cx,
       .peer = "10.1.0.9",
       .toml = "[gid]\nindex = 2\n",
       .routes = {{"10.1.0.9", "10.1.0.5"}},
       .want = {"mlx5_0", 1, 2, T::kRoceV1, "10.1.0.5", "enp59s0f0np0"},
       .reasons = {{2, "warning: auto rejects it: RoCE v1"}}},
      {.name = "ConnectXPinnedMissing",
       .inventory = cx,
       .peer = "10.1.0.9",
       .toml = "[gid]\nindex = 6\n",
       .routes = {{"10.1.0.9", "10.1.0.5"}},
       .code = kNoPath,
       .error = {"gid.index 6 does not exist on mlx5_0 port 1; it has GID 0 "
                 "(RoCE v1, fe80::bace:f6ff:fea1:2b3c on enp59s0f0np0), ",
                 "GID 5 (RoCE v2, 2001:db8:1::5 on enp59s0f0np0)"}},
      {.name = "DeviceExcluded",
       .inventory = cx,
       .peer = "10.1.0.9",
       .toml = "[devices]\nexclude = [\"mlx5_0\"]\n",
       .routes = {{"10.1.0.9", "10.1.0.5"}},
       .want = {"mlx5_1", 1, 3, T::kRoceV2, "10.1.1.5", "enp59s0f1np1"},
       .reasons = {{1,
                    "not used: mlx5_0 port 1: excluded by "
                    "devices.exclude \"mlx5_0\""},
                   {2,
                    "the kernel's source address for 10.1.0.9 is "
                    "10.1.0.5, on no usable GID of a selected port"}}},
      {.name = "DeviceIncludedByPort",
       .inventory = cx,
       .peer = "10.1.0.9",
       .toml = "[devices]\ninclude = [\"=mlx5_1:1\"]\n",
       .want = {"mlx5_1", 1, 3, T::kRoceV2, "10.1.1.5", "enp59s0f1np1"},
       .reasons = {{0,
                    "device mlx5_1: selected by devices.include "
                    "\"=mlx5_1:1\""}}},
      {.name = "InfiniBandUsesGid0AndLid",
       .inventory = ib,
       .peer = "10.0.0.9",
       .want = {"mlx5_2", 1, 0, T::kInfiniBand, "", "", 0x12},
       .reasons = {{1, "port 1 (ACTIVE, InfiniBand): the only usable port"},
                   {2,
                    "GID 0 (IB, fe80:0000:0000:0000:0c42:a103:0065:e8f4):"
                    " InfiniBand port, addressed by LID 18; GID index 0 "
                    "is the port GID"}}},
      {.name = "InfiniBandPinnedMissing",
       .inventory = ib,
       .peer = "10.0.0.9",
       .toml = "[gid]\nindex = 1\n",
       .code = kNoPath,
       .error = {"gid.index 1 does not exist on mlx5_2 port 1; it has GID 0 "
                 "(IB, fe80:0000:0000:0000:0c42:a103:0065:e8f4)"}},
      {.name = "InfiniBandWithoutLid",
       .inventory = InfiniBandWithoutLid,
       .peer = "10.0.0.9",
       .code = kNoPath,
       .error = {"mlx5_2 port 1: InfiniBand port without a LID"}},
      {.name = "IwarpNeedsNoGidIndex",
       .inventory = Iwarp,
       .peer = "10.7.0.9",
       .toml = "[gid]\nindex = 3\n",
       .want = {"cxgb4_0", 1, -1, T::kIwarp, "10.7.0.5", "enp1s0f4", 0, 4096},
       .reasons = {{2,
                    "iWARP: no GID index (rdma_cm addresses the port by "
                    "IP); source 10.7.0.5 on enp1s0f4"},
                   {2, "gid.index ignored"}}},
      // The fixture's iWARP GIDs are MAC-based: they map no address.
      {.name = "IwarpFixtureGidsHoldNoAddress",
       .inventory = [] { return Fixture("iwarp-rnic"); },
       .peer = "2001:db8::9",
       .code = kNoPath,
       .error = {"cxgb4_0 port 1: no usable GID [GID 0 (IB, "
                 "0007:4356:1a30:0000:0000:0000:0000:0000): no IP address",
                 "cxgb4_0 port 2: DOWN, not ACTIVE"}},
      {.name = "DownPortSkipped",
       .inventory = OneDown,
       .peer = "203.0.113.9",
       .want = {"mlx5_1", 1, 3, T::kRoceV2, "10.1.0.5", "eth1", 0, 4096},
       .reasons = {{1,
                    "the only usable port; not used: mlx5_0 port 1: DOWN, "
                    "not ACTIVE"}}},
      {.name = "NoActivePort",
       .inventory = NoneActive,
       .peer = "10.1.0.9",
       .code = kNoPath,
       .error = {"no usable RDMA port for 10.1.0.9: mlx5_0 port 1: DOWN, not "
                 "ACTIVE; mlx5_1 port 1: state 2, not ACTIVE; rxe9: no "
                 "ports"}},
      {.name = "KernelSourcePortBeatsBetterScope",
       .inventory = TwoScopes,
       .peer = "198.51.100.9",
       .routes = {{"198.51.100.9", "10.1.0.5"}},
       .want = {"b_dev", 1, 4, T::kRoceV2, "10.1.0.5", "eth1", 0, 4096}},
      {.name = "TiesGoToDeviceNameThenPort",
       .inventory = EqualPorts,
       .peer = "10.9.0.9",
       .want = {"mlx5_0", 1, 3, T::kRoceV2, "10.1.0.5", "eth1", 0, 4096},
       .reasons = {{1, "best-ranked GID of 4 usable ports"}}},
      {.name = "PreferV2FallsBackToV1",
       .inventory = OnlyV1,
       .peer = "10.1.0.9",
       .toml = "[gid]\nroce_version = \"prefer-v2\"\n",
       .want = {"mlx4_0", 1, 0, T::kRoceV1, "10.1.0.5", "eth0", 0, 4096},
       .reasons = {{2, "RoCE v1 fallback: no usable RoCE v2 GID"}}},
      {.name = "NoIpFixtureRoutablePeer",
       .inventory = no_ip,
       .peer = "192.0.2.2",
       .code = kNoPath,
       .error = {"bnxt_re0 port 1: no usable GID", "IPv6 address"}},
      {.name = "NoIpFixtureLinkLocalPeer",
       .inventory = no_ip,
       .peer = "fe80::5%ens1f0np0",
       .want = {"bnxt_re0", 1, 1, T::kRoceV2, "fe80::20a:f7ff:feb4:1260", "ens1f0np0"}},
      {.name = "OverlayKernelSourceOnMacvlan",
       .inventory = overlay,
       .peer = "10.244.1.9",
       .routes = {{"10.244.1.9", "10.244.1.5"}},
       .want = {"mlx5_0", 1, 9, T::kRoceV2, "10.244.1.5", "macvlan0"}},
      {.name = "OverlayNoHintLowestIndex",
       .inventory = overlay,
       .peer = "10.100.0.9",
       .want = {"mlx5_0", 1, 3, T::kRoceV2, "10.2.0.7", "enp94s0f0np0"}},
      {.name = "OverlayConfiguredNetdevsRankLast",
       .inventory = overlay,
       .peer = "10.100.0.9",
       .toml = "[gid]\noverlay_netdevs = [\"enp94s0f0np0\", \"macvlan*\"]\n",
       .want = {"mlx5_0", 1, 7, T::kRoceV2, "10.100.0.7", "enp94s0f0np0.100"},
       .reasons = {{2, "a private address"}}},
      {.name = "MtuCapFromConfig",
       .inventory = RxeWithMtus,
       .peer = "192.0.2.2",
       .toml = "[mtu]\ncap = 512\n",
       .peer_mtu = 4096,
       .want = {"rxe0", 1, 1, T::kRoceV2, "192.0.2.1", "veth0", 0, 512},
       .reasons = {{3, "cap 512 (mtu.cap limits it)"}}},
  };
}

INSTANTIATE_TEST_SUITE_P(Table, PathPolicyTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

TEST(PathPolicyLookupTest, EmptyLookupMeansNoHint) {
  StatusOr<PathDecision> d =
      ResolvePath(Fixture("rxe-lab"), DefaultConfig(), {"192.0.2.2"}, nullptr);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->gid_index, 1);
  EXPECT_THAT(d->reasons[2], HasSubstr("the kernel gave no source address"));
}

}  // namespace
}  // namespace rdmad
