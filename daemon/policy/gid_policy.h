// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// GID selection on one port. The config's gid.* settings become
// GidPreferences for a peer; RankPortGids then drops the GIDs that cannot
// serve the peer (wrong RoCE version or family, null, link-local for a
// routable peer, outside gid.subnet), each with a reason, and ranks the rest:
// the GID holding the kernel's source address for the peer first, then
// routable > private (10/8, 172.16/12, 100.64/10, 192.168/16, fc00::/7) >
// overlay (gid.overlay_netdevs globs) or link-local; ties go to the lowest
// index. Under gid.roce_version prefer-v2, RoCE v1 GIDs rank after every
// RoCE v2 GID. Also the small IP address helpers the policy needs.
//
// Thread safety: pure functions over values, safe from any thread.

#ifndef RDMAD_DAEMON_POLICY_GID_POLICY_H_
#define RDMAD_DAEMON_POLICY_GID_POLICY_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/discovery/inventory.h"
#include "rdmad/status.h"

namespace rdmad {

// An IPv4 or IPv6 address. IPv4-mapped IPv6 addresses are stored as IPv4.
struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4 uses the first 4
  friend bool operator==(const IpAddress&, const IpAddress&) = default;
};

// Parses "192.0.2.1", "2001:db8::1", "fe80::1%eth0" (the scope is dropped),
// "::ffff:192.0.2.1" (as IPv4) and sysfs GID text "fe80:0000:...:0001".
std::optional<IpAddress> ParseIpAddress(std::string_view text);

// "192.0.2.1", "2001:db8::1".
std::string FormatIpAddress(const IpAddress& ip);

struct Subnet {
  IpAddress base;
  int prefix = 0;
};

// Parses "10.1.0.0/16" or "2001:db8::/32"; nullopt when malformed.
std::optional<Subnet> ParseSubnet(std::string_view cidr);

bool InSubnet(const IpAddress& ip, const Subnet& subnet);

enum class AddressScope { kRoutable, kPrivate, kLinkLocal, kUnspecified };

// Link-local: 169.254/16, fe80::/10. Private: 10/8, 172.16/12, 100.64/10,
// 192.168/16, fc00::/7. Unspecified: 0.0.0.0, ::. Else routable.
AddressScope ClassifyAddress(const IpAddress& ip);

// The gid.* settings applied to one peer.
struct GidPreferences {
  IpAddress peer;
  bool want_v6 = false;        // the GID address family
  bool family_forced = false;  // gid.family ipv4|ipv6 rather than the peer's
  bool allow_v2 = true;
  bool allow_v1 = false;
  bool v1_is_fallback = false;  // prefer-v2
  std::string roce_version;     // v2|v1|prefer-v2
  std::optional<Subnet> subnet;
  std::string subnet_text;
  std::vector<std::string> overlay_globs;
};

// INVALID_ARGUMENT for a gid.family, gid.roce_version or gid.subnet the
// config layer should have refused (defence in depth).
StatusOr<GidPreferences> MakeGidPreferences(const Config::Gid& gid, const IpAddress& peer);

// A usable GID of one port, with what ranks it.
struct GidCandidate {
  GidEntry gid;
  IpAddress ip;
  bool kernel_source = false;  // holds the kernel's source address
  bool v1_fallback = false;    // RoCE v1 under prefer-v2
  int scope_rank = 0;          // 0 routable, 1 private, 2 overlay/link-local
  std::string scope_text;      // "a private address", "overlay netdev ..."
};

// Whether a ranks strictly before b: fallback last, kernel source first,
// then scope, then the lowest index.
bool RanksBefore(const GidCandidate& a, const GidCandidate& b);

// The outcome for one port: usable GIDs best first, and one reason per
// dropped GID ("GID 0 (fe80::1): link-local, the peer is routable").
struct PortGids {
  std::vector<GidCandidate> candidates;
  std::vector<std::string> rejected;
};

// Ranks the GIDs of an Ethernet (RoCE or iWARP) port. For iWARP the RoCE
// version is ignored: any GID with an address counts. kernel_source is the
// address the kernel would send from to reach the peer, if known.
PortGids RankPortGids(const PortInfo& port, bool iwarp, const GidPreferences& prefs,
                      const std::optional<IpAddress>& kernel_source);

// The IP address a GID maps: its ip field, else for a RoCE GID the GID text
// itself; nullopt for IB-type GIDs (InfiniBand subnet prefix + GUID, iWARP
// MAC-based), whose text only looks like an IPv6 address.
std::optional<IpAddress> GidIpAddress(const GidEntry& gid);

// "GID 3 (RoCE v2, 10.1.0.5 on enp59s0f0np0)".
std::string DescribeGid(const GidEntry& gid);

// The GID this policy prefers on port with no peer in view, for tools that
// take one index (NCCL_IB_GID_INDEX, UCX_IB_GID_INDEX): gid.index when
// pinned, an InfiniBand port's GID 0, else the best IPv4 candidate, else
// the best IPv6 one (gid.family forces one); nullopt when none fits.
std::optional<GidEntry> PreferredGid(const Config::Gid& gid, const PortInfo& port, bool iwarp);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_POLICY_GID_POLICY_H_
