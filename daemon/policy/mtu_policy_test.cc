// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// IsIbMtu, ValidateIbMtu, NetdevMtuFor and ChooseMtu, table by table.

#include "daemon/policy/mtu_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "daemon/discovery/sysfs_reader.h"

namespace rdmad {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(MtuPolicyTest, IsIbMtuAndValidateIbMtu) {
  struct Case {
    int mtu;
    bool ib;
  };
  for (const Case& c : std::vector<Case>{{256, true},
                                         {512, true},
                                         {1024, true},
                                         {2048, true},
                                         {4096, true},
                                         {0, false},
                                         {-256, false},
                                         {128, false},
                                         {255, false},
                                         {257, false},
                                         {1000, false},
                                         {1500, false},
                                         {4097, false},
                                         {8192, false},
                                         {9000, false}}) {
    SCOPED_TRACE(c.mtu);
    EXPECT_EQ(IsIbMtu(c.mtu), c.ib);
    Status status = ValidateIbMtu(c.mtu);
    EXPECT_EQ(status.ok(), c.ib);
    if (!c.ib) {
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(status.message(), "MTU " + std::to_string(c.mtu) +
                                      " is not an IB MTU (256, 512, 1024, 2048 or 4096)");
    }
  }
}

TEST(MtuPolicyTest, NetdevMtuFor) {
  // IB MTU + 96 bytes of RoCE headers, rounded up to a multiple of 100.
  struct Case {
    int ib_mtu;
    int netdev_mtu;
  };
  for (const Case& c :
       std::vector<Case>{{256, 400}, {512, 700}, {1024, 1200}, {2048, 2200}, {4096, 4200}}) {
    SCOPED_TRACE(c.ib_mtu);
    EXPECT_EQ(NetdevMtuFor(c.ib_mtu), c.netdev_mtu);
    // Cross-check with the sysfs reader's independent iboe_get_mtu model:
    // the suggested netdev MTU reaches the IB MTU, 100 bytes less does not.
    EXPECT_GE(IbMtuForNetdevMtu(c.netdev_mtu), c.ib_mtu);
    EXPECT_LT(IbMtuForNetdevMtu(c.netdev_mtu - 100), c.ib_mtu);
  }
}

struct ChooseCase {
  std::string name;
  // The local port.
  int active = 4096;
  int max = 4096;
  std::string netdev = "eth0";
  int netdev_mtu = 9000;
  LinkLayer link_layer = LinkLayer::kEthernet;
  int peer = 4096;
  int cap = 4096;
  // Expected.
  int mtu = 0;
  int local_active = 0;
  int peer_active = 0;
  int applied_cap = 0;
  std::string reason = "";                 // exact when non-empty
  std::vector<std::string> contains = {};  // substrings of the reason
  std::vector<std::string> lacks = {};     // not in the reason
};
void PrintTo(const ChooseCase& c, std::ostream* os) { *os << c.name; }

class MtuPolicyChooseTest : public ::testing::TestWithParam<ChooseCase> {};

TEST_P(MtuPolicyChooseTest, Chooses) {
  const ChooseCase& c = GetParam();
  PortInfo port;
  port.active_mtu = c.active;
  port.max_mtu = c.max;
  port.netdev = c.netdev;
  port.netdev_mtu = c.netdev_mtu;
  port.link_layer = c.link_layer;
  MtuDecision d = ChooseMtu(port, c.peer, c.cap);
  EXPECT_EQ(d.mtu, c.mtu);
  EXPECT_TRUE(IsIbMtu(d.mtu));
  EXPECT_EQ(d.local_active, c.local_active);
  EXPECT_EQ(d.peer_active, c.peer_active);
  EXPECT_EQ(d.cap, c.applied_cap);
  // The path MTU never exceeds what either end or the cap allows.
  EXPECT_LE(d.mtu, d.local_active);
  EXPECT_LE(d.mtu, d.cap);
  if (d.peer_active > 0) {
    EXPECT_LE(d.mtu, d.peer_active);
  }
  EXPECT_THAT(d.reason, ::testing::StartsWith(std::to_string(c.mtu) + ": "));
  if (!c.reason.empty()) {
    EXPECT_EQ(d.reason, c.reason);
  }
  for (const std::string& s : c.contains) EXPECT_THAT(d.reason, HasSubstr(s));
  for (const std::string& s : c.lacks) {
    EXPECT_THAT(d.reason, Not(HasSubstr(s)));
  }
}

INSTANTIATE_TEST_SUITE_P(Table, MtuPolicyChooseTest,
                         ::testing::ValuesIn(std::vector<ChooseCase>{
                             {.name = "AllAgreeNothingLimits",
                              .mtu = 4096,
                              .local_active = 4096,
                              .peer_active = 4096,
                              .applied_cap = 4096,
                              .reason = "4096: local active MTU 4096, peer 4096, cap 4096"},
                             // The header's example: a 1500-byte netdev keeps the port at 1024.
                             {.name = "Netdev1500LimitsTheLocalPort",
                              .active = 1024,
                              .netdev = "veth0",
                              .netdev_mtu = 1500,
                              .mtu = 1024,
                              .local_active = 1024,
                              .peer_active = 4096,
                              .applied_cap = 4096,
                              .reason = "1024: local active MTU 1024 (netdev veth0 MTU 1500 limits "
                                        "it; >= 4200 gives 4096), peer 4096, cap 4096"},
                             {.name = "Netdev3000LimitsTo2048",
                              .active = 2048,
                              .netdev_mtu = 3000,
                              .mtu = 2048,
                              .local_active = 2048,
                              .peer_active = 4096,
                              .applied_cap = 4096,
                              .contains = {"netdev eth0 MTU 3000 limits it; >= 4200 gives 4096"}},
                             {.name = "NetdevHintTargetsThePortMax",
                              .active = 1024,
                              .max = 2048,
                              .netdev_mtu = 1500,
                              .mtu = 1024,
                              .local_active = 1024,
                              .peer_active = 4096,
                              .applied_cap = 4096,
                              .contains = {"netdev eth0 MTU 1500 limits it; >= 2200 gives 2048"}},
                             {.name = "LargeNetdevIsNotBlamed",
                              .active = 1024,
                              .netdev_mtu = 9000,
                              .mtu = 1024,
                              .local_active = 1024,
                              .peer_active = 4096,
                              .applied_cap = 4096,
                              .contains = {"local active MTU 1024 (limits it)"},
                              .lacks = {"netdev"}},
                             {.name = "InfiniBandNetdevIsNotBlamed",
                              .active = 2048,
                              .netdev = "ibp134s0",
                              .netdev_mtu = 2044,
                              .link_layer = LinkLayer::kInfiniBand,
                              .mtu = 2048,
                              .local_active = 2048,
                              .peer_active = 4096,
                              .applied_cap = 4096,
                              .contains = {"local active MTU 2048 (limits it)"},
                              .lacks = {"netdev"}},
                             {.name = "PortAtItsMaxIsNotBlamedOnTheNetdev",
                              .active = 1024,
                              .max = 1024,
                              .netdev_mtu = 1500,
                              .mtu = 1024,
                              .local_active = 1024,
                              .peer_active = 4096,
                              .applied_cap = 4096,
                              .lacks = {"netdev"}},
                             {.name = "PeerLimits",
                              .peer = 1024,
                              .mtu = 1024,
                              .local_active = 4096,
                              .peer_active = 1024,
                              .applied_cap = 4096,
                              .reason = "1024: local active MTU 4096, peer 1024 (limits it), "
                                        "cap 4096"},
                             {.name = "CapLimits",
                              .cap = 2048,
                              .mtu = 2048,
                              .local_active = 4096,
                              .peer_active = 4096,
                              .applied_cap = 2048,
                              .reason = "2048: local active MTU 4096, peer 4096, cap 2048 "
                                        "(mtu.cap limits it)"},
                             {.name = "LocalAndPeerBothLimit",
                              .active = 2048,
                              .peer = 2048,
                              .mtu = 2048,
                              .local_active = 2048,
                              .peer_active = 2048,
                              .applied_cap = 4096,
                              .contains = {"local active MTU 2048 (limits it)",
                                           "peer 2048 (limits it)"},
                              .lacks = {"mtu.cap limits"}},
                             {.name = "PeerUnknown",
                              .active = 2048,
                              .peer = 0,
                              .mtu = 2048,
                              .local_active = 2048,
                              .peer_active = 0,
                              .applied_cap = 4096,
                              .contains = {"peer unknown"}},
                             {.name = "LocalUnknownFallsBackToMax",
                              .active = 0,
                              .max = 2048,
                              .mtu = 2048,
                              .local_active = 2048,
                              .peer_active = 4096,
                              .applied_cap = 4096,
                              .contains = {"local active MTU unknown (assuming 2048)"}},
                             {.name = "LocalAndMaxUnknownAssume1024",
                              .active = 0,
                              .max = 0,
                              .mtu = 1024,
                              .local_active = 1024,
                              .peer_active = 4096,
                              .applied_cap = 4096,
                              .contains = {"local active MTU unknown (assuming 1024)"}},
                             {.name = "LocalNotAnIbMtuRoundsDown",
                              .active = 1500,
                              .mtu = 1024,
                              .local_active = 1024,
                              .peer_active = 4096,
                              .applied_cap = 4096,
                              .contains = {"local active MTU 1500 (not an IB MTU; using 1024)"}},
                             {.name = "PeerNotAnIbMtuRoundsDown",
                              .peer = 3000,
                              .mtu = 2048,
                              .local_active = 4096,
                              .peer_active = 2048,
                              .applied_cap = 4096,
                              .contains = {"peer 3000 (not an IB MTU; using 2048)"}},
                             {.name = "CapNotAnIbMtuRoundsDown",
                              .cap = 3000,
                              .mtu = 2048,
                              .local_active = 4096,
                              .peer_active = 4096,
                              .applied_cap = 2048,
                              .contains = {"cap 2048 (mtu.cap 3000)"}},
                             {.name = "CapZeroMeansNoCap",
                              .cap = 0,
                              .mtu = 4096,
                              .local_active = 4096,
                              .peer_active = 4096,
                              .applied_cap = 4096},
                             {.name = "TinyValuesGive256",
                              .active = 300,
                              .peer = 256,
                              .cap = 256,
                              .mtu = 256,
                              .local_active = 256,
                              .peer_active = 256,
                              .applied_cap = 256},
                         }),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace rdmad
