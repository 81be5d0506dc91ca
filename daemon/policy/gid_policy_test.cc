// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The IP helpers, MakeGidPreferences and RankPortGids, table by table.

#include "daemon/policy/gid_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rdmad {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---------------------------------------------------------------------------
// The IP helpers. Each table row names its case.

TEST(IpAddressTest, ParseAndFormat) {
  struct Case {
    std::string name, text;
    std::optional<std::string> formatted;  // nullopt: does not parse
    bool v6 = false;
  };
  const std::string v4_gid = "0000:0000:0000:0000:0000:ffff:0a01:0005";
  for (const Case& c : std::vector<Case>{
           {"Ipv4", "192.0.2.1", "192.0.2.1"},
           {"Ipv6", "2001:db8::1", "2001:db8::1", true},
           {"Ipv6ScopeDropped", "fe80::1%eth0", "fe80::1", true},
           {"V4MappedIsIpv4", "::ffff:192.0.2.1", "192.0.2.1"},
           {"SysfsV4MappedGid", v4_gid, "10.1.0.5"},
           {"SysfsLinkLocalGid", "fe80:0000:0000:0000:bace:f6ff:fea1:2b3c",
            "fe80::bace:f6ff:fea1:2b3c", true},
           {"SysfsGlobalGid", "2001:0db8:0001:0000:0000:0000:0000:0005", "2001:db8:1::5", true},
           {"NullGid", "0000:0000:0000:0000:0000:0000:0000:0000", "::", true},
           {"Empty", "", std::nullopt},
           {"HostName", "host.example", std::nullopt},
           {"ThreeOctets", "192.0.2", std::nullopt},
           {"OctetTooBig", "192.0.2.256", std::nullopt},
           {"TwoDoubleColons", "2001:db8::1::2", std::nullopt},
           {"Cidr", "10.0.0.1/8", std::nullopt},
           {"WithPort", "192.0.2.1:7581", std::nullopt}}) {
    SCOPED_TRACE(c.name);
    std::optional<IpAddress> ip = ParseIpAddress(c.text);
    ASSERT_EQ(ip.has_value(), c.formatted.has_value());
    if (!ip) continue;
    EXPECT_EQ(ip->v6, c.v6);
    EXPECT_EQ(FormatIpAddress(*ip), *c.formatted);
    EXPECT_EQ(ParseIpAddress(*c.formatted), ip);  // round trip
  }
}

TEST(IpAddressTest, Ipv4UsesTheFirstFourBytes) {
  std::optional<IpAddress> ip = ParseIpAddress("192.0.2.1");
  ASSERT_TRUE(ip);
  EXPECT_EQ(ip->bytes[0], 192);
  EXPECT_EQ(ip->bytes[3], 1);
  for (size_t i = 4; i < ip->bytes.size(); ++i) EXPECT_EQ(ip->bytes[i], 0);
  EXPECT_EQ(ParseIpAddress("::ffff:192.0.2.1"), ip);
  EXPECT_NE(ParseIpAddress("::192.0.2.1"), ip);  // IPv4-compatible: IPv6
}

TEST(IpSubnetTest, ParseSubnet) {
  struct Case {
    std::string name, cidr;
    int prefix;  // -1: malformed
  };
  for (const Case& c : std::vector<Case>{{"V4", "10.1.0.0/16", 16},
                                         {"V4All", "0.0.0.0/0", 0},
                                         {"V4Host", "192.0.2.7/32", 32},
                                         {"V6", "2001:db8::/32", 32},
                                         {"V6Host", "::/128", 128},
                                         {"NoSlash", "10.1.0.0", -1},
                                         {"NoBits", "10.1.0.0/", -1},
                                         {"V4Too", "10.1.0.0/33", -1},
                                         {"V6Too", "2001:db8::/129", -1},
                                         {"Neg", "10.1.0.0/-1", -1},
                                         {"Trailing", "10.1.0.0/16x", -1},
                                         {"BadBase", "10.1.0/16", -1},
                                         {"NoBase", "/16", -1}}) {
    SCOPED_TRACE(c.name);
    std::optional<Subnet> subnet = ParseSubnet(c.cidr);
    ASSERT_EQ(subnet.has_value(), c.prefix >= 0);
    if (subnet) {
      EXPECT_EQ(subnet->prefix, c.prefix);
    }
  }
}

TEST(IpSubnetTest, InSubnet) {
  struct Case {
    std::string name, ip, cidr;
    bool inside;
  };
  for (const Case& c :
       std::vector<Case>{{"Inside16", "10.1.200.3", "10.1.0.0/16", true},
                         {"Outside16", "10.2.0.3", "10.1.0.0/16", false},
                         {"OddPrefixInside", "172.31.255.255", "172.16.0.0/12", true},
                         {"OddPrefixOutside", "172.32.0.0", "172.16.0.0/12", false},
                         {"HostBitsInBaseIgnored", "10.1.9.9", "10.1.2.3/16", true},
                         {"Slash32Exact", "192.0.2.7", "192.0.2.7/32", true},
                         {"Slash32Other", "192.0.2.8", "192.0.2.7/32", false},
                         {"ZeroPrefixSameFamily", "203.0.113.1", "0.0.0.0/0", true},
                         {"ZeroPrefixOtherFamily", "2001:db8::1", "0.0.0.0/0", false},
                         {"Ipv6Inside", "2001:db8:1::5", "2001:db8::/32", true},
                         {"Ipv6Outside", "2001:db9::5", "2001:db8::/32", false},
                         {"Ipv6Slash128", "2001:db8::5", "2001:db8::5/128", true},
                         {"Ipv4NotInIpv6", "10.1.0.5", "::/0", false},
                         {"MappedGidInIpv4", "::ffff:10.1.0.5", "10.1.0.0/16", true}}) {
    SCOPED_TRACE(c.name);
    std::optional<IpAddress> ip = ParseIpAddress(c.ip);
    std::optional<Subnet> subnet = ParseSubnet(c.cidr);
    ASSERT_TRUE(ip && subnet);
    EXPECT_EQ(InSubnet(*ip, *subnet), c.inside);
  }
}

// Rows are named by the address, at the edges of each range.
TEST(IpClassifyTest, ScopesAndTheirEdges) {
  using S = AddressScope;
  struct Case {
    std::string ip;
    AddressScope scope;
  };
  for (const Case& c :
       std::vector<Case>{{"0.0.0.0", S::kUnspecified},       {"::", S::kUnspecified},
                         {"10.0.0.0", S::kPrivate},          {"10.255.255.255", S::kPrivate},
                         {"9.255.255.255", S::kRoutable},    {"11.0.0.0", S::kRoutable},
                         {"172.16.0.1", S::kPrivate},        {"172.31.255.255", S::kPrivate},
                         {"172.15.255.255", S::kRoutable},   {"172.32.0.0", S::kRoutable},
                         {"100.64.0.1", S::kPrivate},        {"100.127.255.255", S::kPrivate},
                         {"100.63.255.255", S::kRoutable},   {"100.128.0.0", S::kRoutable},
                         {"192.168.0.1", S::kPrivate},       {"192.169.0.1", S::kRoutable},
                         {"169.254.3.3", S::kLinkLocal},     {"169.253.3.3", S::kRoutable},
                         {"192.0.2.1", S::kRoutable},        {"203.0.113.5", S::kRoutable},
                         {"fe80::1", S::kLinkLocal},         {"febf:ffff::1", S::kLinkLocal},
                         {"fec0::1", S::kRoutable},          {"fc00::1", S::kPrivate},
                         {"fdff:ffff::1", S::kPrivate},      {"fe00::1", S::kRoutable},
                         {"fbff::1", S::kRoutable},          {"2001:db8::1", S::kRoutable},
                         {"::ffff:192.168.1.1", S::kPrivate}}) {
    std::optional<IpAddress> ip = ParseIpAddress(c.ip);
    ASSERT_TRUE(ip) << c.ip;
    EXPECT_EQ(ClassifyAddress(*ip), c.scope) << c.ip;
  }
}

// ---------------------------------------------------------------------------
// MakeGidPreferences

IpAddress Ip(const std::string& text) {
  std::optional<IpAddress> ip = ParseIpAddress(text);
  EXPECT_TRUE(ip) << text;
  return ip.value_or(IpAddress{});
}

TEST(GidPolicyTest, PreferencesFromTheDefaultConfig) {
  StatusOr<GidPreferences> p = MakeGidPreferences(DefaultConfig().gid, Ip("192.0.2.2"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->peer, Ip("192.0.2.2"));
  EXPECT_FALSE(p->want_v6);
  EXPECT_FALSE(p->family_forced);
  EXPECT_TRUE(p->allow_v2);
  EXPECT_FALSE(p->allow_v1);
  EXPECT_FALSE(p->v1_is_fallback);
  EXPECT_EQ(p->roce_version, "v2");
  EXPECT_FALSE(p->subnet);
  EXPECT_EQ(p->overlay_globs, (std::vector<std::string>{"docker*", "cni*", "flannel*", "calico*",
                                                        "vxlan*", "tunl0"}));
}

TEST(GidPolicyTest, PreferencesTable) {
  struct Case {
    std::string name;
    std::string family = "", roce_version = "", subnet = "", peer = "";
    // Expected on success:
    bool want_v6 = false, forced = false, v2 = true, v1 = false, fallback = false;
    std::string error = "";  // non-empty: INVALID_ARGUMENT, this message
  };
  for (const Case& c : std::vector<Case>{
           {.name = "EmptyMeansAutoV2", .peer = "192.0.2.2"},
           {.name = "AutoFamilyFollowsIpv6Peer",
           .family = "auto",
           .peer = "2001:db8::2",
           .want_v6 = true},
           {.name = "ForcedIpv6",
           .family = "ipv6",
           .peer = "192.0.2.2",
           .want_v6 = true,
           .forced = true},
           {.name = "ForcedIpv4", .family = "ipv4", .peer = "2001:db8::2", .forced = true},
           {.name = "V1Only", .roce_version = "v1", .peer = "192.0.2.2", .v2 = false, .v1 = true},
           {.name = "PreferV2",
           .roce_version = "prefer-v2",
           .peer = "192.0.2.2",
           .v1 = true,
           .fallback = true},
           {.name = "Subnet", .subnet = "10.1.0.0/16", .peer = "10.1.0.9"},
           {.name = "BadFamily",
           .family = "inet",
           .peer = "192.0.2.2",
           .error = "gid.family \"inet\" is not auto, ipv4 or ipv6"},
           {.name = "BadRoceVersion",
           .roce_version = "v3",
           .peer = "192.0.2.2",
           .error = "gid.roce_version \"v3\" is not v2, v1 or prefer-v2"},
           {.name = "BadSubnet",
           .subnet = "10.1.0.0",
           .peer = "192.0.2.2",
           .error = "gid.subnet \"10.1.0.0\" is not a CIDR such as "
                    "10.1.0.0/16"}}) {
    SCOPED_TRACE(c.name);
    Config::Gid gid;  // empty strings: the defaults
    gid.family = c.family;
    gid.roce_version = c.roce_version;
    gid.subnet = c.subnet;
    StatusOr<GidPreferences> p = MakeGidPreferences(gid, Ip(c.peer));
    if (!c.error.empty()) {
      ASSERT_FALSE(p.ok());
      EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(p.status().message(), c.error);
      continue;
    }
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->want_v6, c.want_v6);
    EXPECT_EQ(p->family_forced, c.forced);
    EXPECT_EQ(p->allow_v2, c.v2);
    EXPECT_EQ(p->allow_v1, c.v1);
    EXPECT_EQ(p->v1_is_fallback, c.fallback);
    EXPECT_EQ(p->subnet.has_value(), !c.subnet.empty());
  }
}

// ---------------------------------------------------------------------------
// RankPortGids

// A RoCE GID as the reader fills it: ip set (the GID text is only shown).
GidEntry Roce(int index, GidType type, const std::string& ip, const std::string& netdev = "eth0") {
  std::string text = Ip(ip).v6 ? ip : "::ffff:" + ip;
  return GidEntry{index, text, type, netdev, ip};
}
GidEntry V2(int index, const std::string& ip, const std::string& netdev = "eth0") {
  return Roce(index, GidType::kRoceV2, ip, netdev);
}
GidEntry V1(int index, const std::string& ip, const std::string& netdev = "eth0") {
  return Roce(index, GidType::kRoceV1, ip, netdev);
}

struct RankCase {
  std::string name;
  std::vector<GidEntry> gids;
  std::string peer;
  std::string kernel_source = "";  // "" none
  std::string roce_version = "v2";
  std::string family = "auto";
  std::string subnet = "";
  std::vector<std::string> overlay = {"docker*", "cni*", "flannel*", "calico*", "vxlan*", "tunl0"};
  bool iwarp = false;
  std::string port_netdev = "eth0";
  std::vector<int> ranked;                   // candidate indices, best first
  std::map<int, std::string> rejected = {};  // GID index -> reason text
};
void PrintTo(const RankCase& c, std::ostream* os) { *os << c.name; }

class GidPolicyRankTest : public ::testing::TestWithParam<RankCase> {};

TEST_P(GidPolicyRankTest, Ranks) {
  const RankCase& c = GetParam();
  Config::Gid gid;
  gid.family = c.family;
  gid.roce_version = c.roce_version;
  gid.subnet = c.subnet;
  gid.overlay_netdevs = c.overlay;
  StatusOr<GidPreferences> prefs = MakeGidPreferences(gid, Ip(c.peer));
  ASSERT_TRUE(prefs.ok()) << prefs.status().ToString();
  PortInfo port;
  port.netdev = c.port_netdev;
  port.gids = c.gids;
  std::optional<IpAddress> source;
  if (!c.kernel_source.empty()) source = Ip(c.kernel_source);

  PortGids out = RankPortGids(port, c.iwarp, *prefs, source);

  std::vector<int> ranked;
  for (const GidCandidate& cand : out.candidates) {
    ranked.push_back(cand.gid.index);
    EXPECT_EQ(cand.kernel_source, source && *source == cand.ip);
    EXPECT_EQ(cand.v1_fallback,
              !c.iwarp && c.roce_version == "prefer-v2" && cand.gid.type == GidType::kRoceV1);
  }
  EXPECT_EQ(ranked, c.ranked);
  // One reason per dropped GID, naming the GID.
  ASSERT_EQ(out.rejected.size(), c.rejected.size());
  for (const std::string& why : out.rejected) {
    int index = std::stoi(why.substr(4));
    ASSERT_EQ(c.rejected.count(index), 1u) << why;
    EXPECT_THAT(why, StartsWith("GID " + std::to_string(index) + " ("));
    EXPECT_THAT(why, HasSubstr("): " + c.rejected.at(index)));
  }
}

const GidEntry kNull{7, "0000:0000:0000:0000:0000:0000:0000:0000", GidType::kRoceV2, "eth0", ""};

INSTANTIATE_TEST_SUITE_P(
    Table, GidPolicyRankTest,
    ::testing::ValuesIn(std::vector<RankCase>{
        {.name = "DefaultV2DropsV1AndNull",
         .gids = {V1(2, "10.1.0.5"), V2(3, "10.1.0.5"), kNull},
         .peer = "10.1.0.9",
         .ranked = {3},
         .rejected = {{2, "RoCE v1 (gid.roce_version v2)"}, {7, "null GID"}}},
        {.name = "V1OnlyDropsV2",
         .gids = {V1(2, "10.1.0.5"), V2(3, "10.1.0.5")},
         .peer = "10.1.0.9",
         .roce_version = "v1",
         .ranked = {2},
         .rejected = {{3, "RoCE v2 (gid.roce_version v1)"}}},
        {.name = "PreferV2RanksV1AfterEveryV2",
         .gids = {V1(0, "203.0.113.5"), V2(5, "10.1.0.5"), V2(7, "172.17.0.1", "docker0")},
         .peer = "203.0.113.9",
         .kernel_source = "203.0.113.5",
         .roce_version = "prefer-v2",
         .ranked = {5, 7, 0}},
        {.name = "FamilyFollowsThePeer",
         .gids = {V2(3, "10.1.0.5"), V2(5, "2001:db8:1::5")},
         .peer = "10.1.0.9",
         .ranked = {3},
         .rejected = {{5, "IPv6 address, the peer 10.1.0.9 is IPv4"}}},
        {.name = "FamilyForced",
         .gids = {V2(3, "10.1.0.5"), V2(5, "2001:db8:1::5")},
         .peer = "10.1.0.9",
         .family = "ipv6",
         .ranked = {5},
         .rejected = {{3, "IPv4 address, gid.family is ipv6"}}},
        {.name = "LinkLocalDroppedForRoutablePeer",
         .gids = {V2(1, "fe80::bace:f6ff:fea1:2b3c"), V2(5, "2001:db8:1::5")},
         .peer = "2001:db8:1::9",
         .ranked = {5},
         .rejected = {{1,
                       "link-local address, the peer 2001:db8:1::9 is "
                       "routable"}}},
        {.name = "LinkLocalDroppedForPrivatePeer",
         .gids = {V2(1, "169.254.3.3"), V2(3, "10.1.0.5")},
         .peer = "10.1.0.9",
         .ranked = {3},
         .rejected = {{1, "link-local address"}}},
        {.name = "LinkLocalKeptForLinkLocalPeer",
         .gids = {V2(1, "fe80::bace:f6ff:fea1:2b3c"), V2(5, "2001:db8:1::5")},
         .peer = "fe80::2%eth0",
         .ranked = {5, 1}},
        {.name = "OutsideSubnet",
         .gids = {V2(3, "10.1.0.5"), V2(5, "10.2.0.5")},
         .peer = "10.2.0.9",
         .subnet = "10.1.0.0/16",
         .ranked = {3},
         .rejected = {{5, "outside gid.subnet 10.1.0.0/16"}}},
        {.name = "RoutableThenPrivateThenOverlay",
         .gids = {V2(1, "10.1.0.5"), V2(2, "172.17.0.1", "docker0"), V2(3, "203.0.113.5"),
                  V2(4, "192.168.1.5")},
         .peer = "198.51.100.9",
         .ranked = {3, 1, 4, 2}},
        {.name = "KernelSourceFirst",
         .gids = {V2(1, "10.1.0.5"), V2(2, "172.17.0.1", "docker0"), V2(3, "203.0.113.5"),
                  V2(4, "192.168.1.5")},
         .peer = "198.51.100.9",
         .kernel_source = "192.168.1.5",
         .ranked = {4, 3, 1, 2}},
        {.name = "TiesGoToTheLowestIndex",
         .gids = {V2(9, "10.9.0.5"), V2(4, "10.4.0.5"), V2(6, "10.6.0.5")},
         .peer = "10.1.0.9",
         .ranked = {4, 6, 9}},
        {.name = "OverlayGlobsAreConfigurable",
         .gids = {V2(1, "10.1.0.5"), V2(2, "10.244.1.5", "macvlan0"), V2(3, "10.3.0.5", "docker0")},
         .peer = "10.1.0.9",
         .overlay = {"macvlan*"},
         .ranked = {1, 3, 2}},
        {.name = "OverlayRanksWithLinkLocal",
         .gids = {V2(5, "fe80::1"), V2(2, "2001:db8::5", "vxlan.calico"), V2(3, "fd00::5", "tunl0"),
                  V2(4, "2001:db8::7")},
         .peer = "fe80::2",
         .ranked = {4, 2, 3, 5}},
        {.name = "OverlayFallsBackToThePortNetdev",
         .gids = {V2(1, "10.1.0.5", ""), V2(2, "10.2.0.5", "eth1")},
         .peer = "10.1.0.9",
         .port_netdev = "flannel.1",
         .ranked = {2, 1}},
        {.name = "IwarpIgnoresTheGidType",
         .gids = {GidEntry{0, "::ffff:10.5.0.2", GidType::kIb, "", "10.5.0.2"}},
         .peer = "10.5.0.9",
         .iwarp = true,
         .ranked = {0}},
        {.name = "IwarpMacGidIsNoAddress",
         .gids = {GidEntry{0, "0007:4356:1a30:0000:0000:0000:0000:0000", GidType::kIb, "", ""}},
         .peer = "2001:db8::9",
         .iwarp = true,
         .ranked = {},
         .rejected = {{0, "no IP address in"}}},
        {.name = "GidWithoutIpTextUsesTheGid",
         .gids = {GidEntry{3, "0000:0000:0000:0000:0000:ffff:0a01:0005", GidType::kRoceV2, "eth0",
                           ""}},
         .peer = "10.1.0.9",
         .ranked = {3}},
    }),
    [](const auto& info) { return info.param.name; });

TEST(GidPolicyTest, ScopeTextNamesTheOverlayGlob) {
  StatusOr<GidPreferences> prefs = MakeGidPreferences(DefaultConfig().gid, Ip("10.1.0.9"));
  ASSERT_TRUE(prefs.ok());
  PortInfo port;
  port.gids = {V2(1, "10.1.0.5"), V2(2, "172.17.0.1", "docker0"), V2(3, "203.0.113.5")};
  PortGids out = RankPortGids(port, false, *prefs, std::nullopt);
  ASSERT_EQ(out.candidates.size(), 3u);
  EXPECT_EQ(out.candidates[0].scope_text, "a routable address");
  EXPECT_EQ(out.candidates[0].scope_rank, 0);
  EXPECT_EQ(out.candidates[1].scope_text, "a private address");
  EXPECT_EQ(out.candidates[1].scope_rank, 1);
  EXPECT_EQ(out.candidates[2].scope_rank, 2);
  EXPECT_THAT(out.candidates[2].scope_text, HasSubstr("overlay netdev docker0 (gid.overlay_netdevs "
                                                      "\"docker*\")"));
}

TEST(GidPolicyTest, DescribeGid) {
  EXPECT_EQ(DescribeGid(V2(3, "10.1.0.5", "enp59s0f0np0")),
            "GID 3 (RoCE v2, 10.1.0.5 on enp59s0f0np0)");
  EXPECT_EQ(DescribeGid(V1(2, "10.1.0.5", "")), "GID 2 (RoCE v1, 10.1.0.5)");
  EXPECT_EQ(
      DescribeGid(GidEntry{0, "fe80:0000:0000:0000:0c42:a103:0065:e8f4", GidType::kIb, "", ""}),
      "GID 0 (IB, fe80:0000:0000:0000:0c42:a103:0065:e8f4)");
}

TEST(GidPolicyTest, GidIpAddress) {
  EXPECT_EQ(GidIpAddress(V2(3, "10.1.0.5")), Ip("10.1.0.5"));
  EXPECT_EQ(GidIpAddress(GidEntry{3, "2001:0db8:0000:0000:0000:0000:0000:0005", GidType::kRoceV1,
                                  "eth0", ""}),
            Ip("2001:db8::5"));
  // IB and iWARP GIDs hold a subnet prefix + GUID or a MAC, no address.
  EXPECT_EQ(
      GidIpAddress(GidEntry{0, "fe80:0000:0000:0000:0c42:a103:0065:e8f4", GidType::kIb, "", ""}),
      std::nullopt);
}

// PreferredGid: one index for tools, no peer in view.

TEST(PreferredGidTest, RoceV2OverIpv4FirstThenIpv6AndAPinnedIndexWins) {
  Config::Gid gid;
  gid.family = "auto";
  gid.roce_version = "v2";
  PortInfo port;
  port.link_layer = LinkLayer::kEthernet;
  port.netdev = "eth0";
  port.gids = {V1(0, "fe80::1"), V2(1, "fe80::1"), V1(2, "192.0.2.7"), V2(3, "192.0.2.7")};
  auto chosen = PreferredGid(gid, port, false);
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->index, 3) << "RoCE v2 over the IPv4 address";
  port.gids = {V1(0, "fe80::1"), V2(1, "2001:db8::7")};
  chosen = PreferredGid(gid, port, false);
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->index, 1) << "no IPv4 GID: the IPv6 one";
  gid.index = 0;
  chosen = PreferredGid(gid, port, false);
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->index, 0) << "gid.index pins it";
  gid.index = 9;
  EXPECT_FALSE(PreferredGid(gid, port, false).has_value()) << "a pinned index the port lacks";
  gid.index = -1;
  port.gids = {V1(0, "192.0.2.7")};
  EXPECT_FALSE(PreferredGid(gid, port, false).has_value()) << "only RoCE v1 under roce_version v2";
}

}  // namespace
}  // namespace rdmad
