// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/policy/gid_policy.h"

#include <arpa/inet.h>
#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <tuple>

namespace rdmad {
namespace {

bool HasPrefix(const IpAddress& ip, std::initializer_list<uint8_t> base, int bits) {
  IpAddress net;
  net.v6 = ip.v6;
  std::copy(base.begin(), base.end(), net.bytes.begin());
  return InSubnet(ip, Subnet{net, bits});
}

bool IsZero(const IpAddress& ip) {
  int n = ip.v6 ? 16 : 4;
  return std::all_of(ip.bytes.begin(), ip.bytes.begin() + n, [](uint8_t b) { return b == 0; });
}

// The first overlay glob matching netdev, or nullptr.
const std::string* OverlayGlob(const GidPreferences& prefs, const std::string& netdev) {
  if (netdev.empty()) return nullptr;
  for (const std::string& glob : prefs.overlay_globs) {
    if (fnmatch(glob.c_str(), netdev.c_str(), 0) == 0) return &glob;
  }
  return nullptr;
}

// Why the GID cannot serve the peer, or "" if it can.
std::string RejectReason(const GidEntry& gid, const IpAddress& ip, bool iwarp,
                         const GidPreferences& prefs) {
  if (IsZero(ip)) return "null GID";
  if (!iwarp) {
    bool v2 = gid.type == GidType::kRoceV2;
    if (v2 && !prefs.allow_v2) {
      return "RoCE v2 (gid.roce_version " + prefs.roce_version + ")";
    }
    if (!v2 && !prefs.allow_v1) {
      return "RoCE v1 (gid.roce_version " + prefs.roce_version + ")";
    }
  }
  if (ip.v6 != prefs.want_v6) {
    std::string why = ip.v6 ? "IPv6 address, " : "IPv4 address, ";
    if (prefs.family_forced) {
      return why + "gid.family is " + (prefs.want_v6 ? "ipv6" : "ipv4");
    }
    return why + "the peer " + FormatIpAddress(prefs.peer) + " is " +
           (prefs.want_v6 ? "IPv6" : "IPv4");
  }
  if (ClassifyAddress(ip) == AddressScope::kLinkLocal &&
      ClassifyAddress(prefs.peer) != AddressScope::kLinkLocal) {
    return "link-local address, the peer " + FormatIpAddress(prefs.peer) + " is routable";
  }
  if (prefs.subnet && !InSubnet(ip, *prefs.subnet)) {
    return "outside gid.subnet " + prefs.subnet_text;
  }
  return "";
}

// Fills scope_rank and scope_text.
void Classify(const GidPreferences& prefs, const std::string& netdev, GidCandidate* c) {
  if (const std::string* glob = OverlayGlob(prefs, netdev)) {
    c->scope_rank = 2;
    c->scope_text =
        "an address on overlay netdev " + netdev + " (gid.overlay_netdevs \"" + *glob + "\")";
    return;
  }
  switch (ClassifyAddress(c->ip)) {
    case AddressScope::kRoutable:
      c->scope_rank = 0;
      c->scope_text = "a routable address";
      return;
    case AddressScope::kPrivate:
      c->scope_rank = 1;
      c->scope_text = "a private address";
      return;
    default:
      c->scope_rank = 2;
      c->scope_text = "a link-local address";
      return;
  }
}

}  // namespace

std::optional<IpAddress> ParseIpAddress(std::string_view text) {
  std::string s(text.substr(0, text.find('%')));
  IpAddress ip;
  if (inet_pton(AF_INET, s.c_str(), ip.bytes.data()) == 1) return ip;
  if (inet_pton(AF_INET6, s.c_str(), ip.bytes.data()) != 1) {
    return std::nullopt;
  }
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(ip.bytes.data(), kMapped, sizeof(kMapped)) == 0) {
    std::memmove(ip.bytes.data(), ip.bytes.data() + 12, 4);
    std::fill(ip.bytes.begin() + 4, ip.bytes.end(), 0);
    return ip;
  }
  ip.v6 = true;
  return ip;
}

std::string FormatIpAddress(const IpAddress& ip) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(ip.v6 ? AF_INET6 : AF_INET, ip.bytes.data(), buf, sizeof(buf));
  return buf;
}

std::optional<Subnet> ParseSubnet(std::string_view cidr) {
  size_t slash = cidr.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::optional<IpAddress> base = ParseIpAddress(cidr.substr(0, slash));
  std::string_view bits = cidr.substr(slash + 1);
  int prefix = -1;
  auto [end, ec] = std::from_chars(bits.data(), bits.data() + bits.size(), prefix);
  if (!base || ec != std::errc() || end != bits.data() + bits.size() || bits.empty() ||
      prefix < 0 || prefix > (base->v6 ? 128 : 32)) {
    return std::nullopt;
  }
  return Subnet{*base, prefix};
}

bool InSubnet(const IpAddress& ip, const Subnet& subnet) {
  if (ip.v6 != subnet.base.v6) return false;
  int bits = subnet.prefix;
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((ip.bytes[i] & mask) != (subnet.base.bytes[i] & mask)) return false;
  }
  return true;
}

AddressScope ClassifyAddress(const IpAddress& ip) {
  if (IsZero(ip)) return AddressScope::kUnspecified;
  if (ip.v6) {
    if (HasPrefix(ip, {0xfe, 0x80}, 10)) return AddressScope::kLinkLocal;
    if (HasPrefix(ip, {0xfc}, 7)) return AddressScope::kPrivate;
    return AddressScope::kRoutable;
  }
  if (HasPrefix(ip, {169, 254}, 16)) return AddressScope::kLinkLocal;
  if (HasPrefix(ip, {10}, 8) || HasPrefix(ip, {172, 16}, 12) || HasPrefix(ip, {100, 64}, 10) ||
      HasPrefix(ip, {192, 168}, 16)) {
    return AddressScope::kPrivate;
  }
  return AddressScope::kRoutable;
}

StatusOr<GidPreferences> MakeGidPreferences(const Config::Gid& gid, const IpAddress& peer) {
  GidPreferences p;
  p.peer = peer;
  std::string family = gid.family.empty() ? "auto" : gid.family;
  if (family != "auto" && family != "ipv4" && family != "ipv6") {
    return Status::InvalidArgument("gid.family \"" + family + "\" is not auto, ipv4 or ipv6");
  }
  p.family_forced = family != "auto";
  p.want_v6 = p.family_forced ? family == "ipv6" : peer.v6;
  p.roce_version = gid.roce_version.empty() ? "v2" : gid.roce_version;
  if (p.roce_version == "v1") {
    p.allow_v2 = false;
    p.allow_v1 = true;
  } else if (p.roce_version == "prefer-v2") {
    p.allow_v1 = p.v1_is_fallback = true;
  } else if (p.roce_version != "v2") {
    return Status::InvalidArgument("gid.roce_version \"" + p.roce_version +
                                   "\" is not v2, v1 or prefer-v2");
  }
  if (!gid.subnet.empty()) {
    p.subnet = ParseSubnet(gid.subnet);
    if (!p.subnet) {
      return Status::InvalidArgument("gid.subnet \"" + gid.subnet +
                                     "\" is not a CIDR such as 10.1.0.0/16");
    }
    p.subnet_text = gid.subnet;
  }
  p.overlay_globs = gid.overlay_netdevs;
  return p;
}

bool RanksBefore(const GidCandidate& a, const GidCandidate& b) {
  auto key = [](const GidCandidate& c) {
    return std::make_tuple(c.v1_fallback, !c.kernel_source, c.scope_rank, c.gid.index);
  };
  return key(a) < key(b);
}

PortGids RankPortGids(const PortInfo& port, bool iwarp, const GidPreferences& prefs,
                      const std::optional<IpAddress>& kernel_source) {
  PortGids out;
  for (const GidEntry& gid : port.gids) {
    std::optional<IpAddress> ip = GidIpAddress(gid);
    std::string why =
        ip ? RejectReason(gid, *ip, iwarp, prefs) : "no IP address in \"" + gid.gid + "\"";
    if (!why.empty()) {
      out.rejected.push_back(DescribeGid(gid) + ": " + why);
      continue;
    }
    GidCandidate c;
    c.gid = gid;
    c.ip = *ip;
    c.kernel_source = kernel_source && *kernel_source == *ip;
    c.v1_fallback = !iwarp && prefs.v1_is_fallback && gid.type != GidType::kRoceV2;
    Classify(prefs, gid.netdev.empty() ? port.netdev : gid.netdev, &c);
    out.candidates.push_back(std::move(c));
  }
  std::stable_sort(out.candidates.begin(), out.candidates.end(), RanksBefore);
  return out;
}

std::optional<IpAddress> GidIpAddress(const GidEntry& gid) {
  if (!gid.ip.empty()) return ParseIpAddress(gid.ip);
  if (gid.type == GidType::kIb) return std::nullopt;
  return ParseIpAddress(gid.gid);
}

std::string DescribeGid(const GidEntry& gid) {
  std::string text = "GID " + std::to_string(gid.index) + " (" +
                     std::string(GidTypeName(gid.type)) + ", " +
                     (gid.ip.empty() ? gid.gid : gid.ip);
  if (!gid.netdev.empty()) text += " on " + gid.netdev;
  return text + ")";
}

std::optional<GidEntry> PreferredGid(const Config::Gid& gid, const PortInfo& port, bool iwarp) {
  auto index_of = [&](int index) -> std::optional<GidEntry> {
    for (const GidEntry& g : port.gids) {
      if (g.index == index) return g;
    }
    return std::nullopt;
  };
  if (gid.index >= 0) return index_of(gid.index);
  if (port.link_layer == LinkLayer::kInfiniBand) return index_of(0);
  for (const char* peer : {"192.0.2.1", "2001:db8::1"}) {
    StatusOr<GidPreferences> prefs = MakeGidPreferences(gid, *ParseIpAddress(peer));
    if (!prefs.ok()) return std::nullopt;
    PortGids ranked = RankPortGids(port, iwarp, *prefs, std::nullopt);
    if (!ranked.candidates.empty()) return ranked.candidates.front().gid;
  }
  return std::nullopt;
}

}  // namespace rdmad
