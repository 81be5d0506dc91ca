// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/policy/rail_paths.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rdmad {
namespace {

// A RoCE device with one port: ACTIVE or not, with a RoCE v2 GID for ip.
DeviceInfo Roce(const std::string& name, const std::string& ip, int state = 4, double rate = 100) {
  DeviceInfo d;
  d.name = name;
  PortInfo p;
  p.port = 1;
  p.state = state;
  p.state_name = state == 4 ? "ACTIVE" : "DOWN";
  p.link_layer = LinkLayer::kEthernet;
  p.transport = Transport::kRoceV2;
  p.rate_gbps = rate;
  p.active_mtu = 1024;
  p.netdev = "eth_" + name;
  GidEntry g;
  g.index = 1;
  g.gid = "0000:0000:0000:0000:0000:ffff:c000:0201";
  g.type = GidType::kRoceV2;
  g.netdev = p.netdev;
  g.ip = ip;
  p.gids.push_back(g);
  d.ports.push_back(p);
  return d;
}

PathDecision Primary(const std::string& device) {
  PathDecision p;
  p.device = device;
  p.port = 1;
  p.transport = Transport::kRoceV2;
  p.gid_index = 1;
  p.gid_type = GidType::kRoceV2;
  p.source_ip = "192.0.2.1";
  return p;
}

class Prefixes final : public SourceAddressLookup {
 public:
  std::optional<std::string> SourceAddressFor(const std::string&) const override {
    return std::nullopt;
  }
  std::optional<int> PrefixLength(const std::string& ip) const override {
    auto it = prefixes.find(ip);
    if (it == prefixes.end()) return std::nullopt;
    return it->second;
  }
  std::map<std::string, int> prefixes;
};

std::vector<std::string> Devices(const ChannelRails& rails) {
  std::vector<std::string> out;
  for (const RailPathDecision& r : rails.further) out.push_back(r.device);
  return out;
}

TEST(ChannelRailsTest, EveryOtherUsableDeviceOfTheSameKindIsARail) {
  Inventory inv;
  inv.devices = {Roce("rxe0", "192.0.2.1", 4, 25), Roce("rxe2", "192.0.2.200"),
                 Roce("rxe1", "192.0.2.129"), Roce("rxe3", "192.0.2.140", /*state=*/1)};
  DeviceInfo ib = Roce("mlx5_0", "");
  ib.ports[0].link_layer = LinkLayer::kInfiniBand;
  ib.ports[0].transport = Transport::kInfiniBand;
  ib.ports[0].gids[0].type = GidType::kIb;
  inv.devices.push_back(ib);
  Config config;
  Prefixes lookup;
  lookup.prefixes["192.0.2.129"] = 25;
  ChannelRails rails = ChannelRailsFor(inv, config, Primary("rxe0"), {}, &lookup);
  EXPECT_EQ(rails.weight, 25u);
  // By name; not the first rail, not a DOWN port, not InfiniBand beside RoCE.
  EXPECT_EQ(Devices(rails), (std::vector<std::string>{"rxe1", "rxe2"}));
  const RailPathDecision& r = rails.further[0];
  EXPECT_EQ(r.port, 1);
  EXPECT_EQ(r.gid_index, 1);
  EXPECT_EQ(r.gid_type, GidType::kRoceV2);
  EXPECT_EQ(r.source_ip, "192.0.2.129");
  EXPECT_EQ(r.prefix_len, 25);
  EXPECT_EQ(r.weight, 100u);
  EXPECT_EQ(r.netdev, "eth_rxe1");
  EXPECT_NE(r.reason.find("another usable device"), std::string::npos) << r.reason;
  EXPECT_EQ(rails.further[1].prefix_len, 0);  // not known
}

TEST(ChannelRailsTest, ThePlanChoosesTheRailsAndTheConfigBounds) {
  Inventory inv;
  inv.devices = {Roce("rxe0", "192.0.2.1"), Roce("rxe1", "192.0.2.129"),
                 Roce("rxe2", "192.0.2.200"), Roce("rxe3", "192.0.2.220")};
  Config config;
  // Only the plan's devices, in its order; the first rail, outside the
  // plan, keeps the messages and takes no share of striped transfers.
  ChannelRails planned =
      ChannelRailsFor(inv, config, Primary("rxe0"), {"rxe3", "gone", "rxe1"}, nullptr);
  EXPECT_EQ(Devices(planned), (std::vector<std::string>{"rxe3", "rxe1"}));
  EXPECT_NE(planned.further[0].reason.find("in the process's rail plan"), std::string::npos);
  EXPECT_FALSE(planned.first_striped);
  EXPECT_NE(planned.first_reason.find("rxe0"), std::string::npos) << planned.first_reason;
  // The first rail in the plan: it stripes with the plan's others.
  planned = ChannelRailsFor(inv, config, Primary("rxe0"), {"rxe0", "rxe2"}, nullptr);
  EXPECT_EQ(Devices(planned), (std::vector<std::string>{"rxe2"}));
  EXPECT_TRUE(planned.first_striped);
  // A plan of the first rail alone: no further rail.
  planned = ChannelRailsFor(inv, config, Primary("rxe0"), {"rxe0"}, nullptr);
  EXPECT_TRUE(planned.further.empty());
  EXPECT_TRUE(planned.first_striped);
  // A plan whose devices are all gone: as without one.
  EXPECT_EQ(Devices(ChannelRailsFor(inv, config, Primary("rxe0"), {"gone"}, nullptr)),
            (std::vector<std::string>{"rxe1", "rxe2", "rxe3"}));

  config.rails.per_channel = 2;  // the first and one more
  EXPECT_EQ(Devices(ChannelRailsFor(inv, config, Primary("rxe0"), {}, nullptr)),
            (std::vector<std::string>{"rxe1"}));
  config.rails.per_channel = 1;
  EXPECT_TRUE(ChannelRailsFor(inv, config, Primary("rxe0"), {}, nullptr).further.empty());
  config.rails.per_channel = 0;
  config.devices.exclude = {DeviceSpec{"rxe1", true, 0}};
  EXPECT_EQ(Devices(ChannelRailsFor(inv, config, Primary("rxe0"), {}, nullptr)),
            (std::vector<std::string>{"rxe2", "rxe3"}));
  // The filter rules over the plan too.
  EXPECT_EQ(Devices(ChannelRailsFor(inv, config, Primary("rxe0"), {"rxe1", "rxe3"}, nullptr)),
            (std::vector<std::string>{"rxe3"}));
}

TEST(ChannelRailsTest, NoRailsForIwarpOrWithoutAGid) {
  Inventory inv;
  inv.devices = {Roce("rxe0", "192.0.2.1"), Roce("rxe1", "192.0.2.129")};
  Config config;
  PathDecision iwarp = Primary("rxe0");
  iwarp.transport = Transport::kIwarp;
  iwarp.gid_index = -1;
  EXPECT_TRUE(ChannelRailsFor(inv, config, iwarp, {}, nullptr).further.empty());
  // A RoCE v1 first rail takes no v2-only device.
  PathDecision v1 = Primary("rxe0");
  v1.gid_type = GidType::kRoceV1;
  v1.transport = Transport::kRoceV1;
  EXPECT_TRUE(ChannelRailsFor(inv, config, v1, {}, nullptr).further.empty());
}

TEST(ChannelRailsTest, AWeightIsTheRateInWholeGbps) {
  EXPECT_EQ(RailWeight(0), 1u);
  EXPECT_EQ(RailWeight(0.5), 1u);
  EXPECT_EQ(RailWeight(200), 200u);
  EXPECT_EQ(RailWeight(12.5), 12u);
  EXPECT_EQ(RailWeight(1e9), 100000u);
}

}  // namespace
}  // namespace rdmad
