// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A channel's further rails (docs/topology.md, "Rails in a channel"):
// besides the device the path policy chose, the other devices of this host
// the channel may stripe over. A further rail is a device the filter
// admits, with an ACTIVE port of the first rail's link layer and a GID of
// its type (gid_policy.h's preferred one), at most rails.per_channel - 1 of
// them (0: up to kMaxFurtherRails): the devices of the process's rail plan
// in its order when it has one (the host-wide balance holds for its
// channels too), else every such device by name. The client library pairs
// them with the peer's by subnet in the handshake.
//
// Thread safety: pure functions over values; the SourceAddressLookup is
// called on the caller's thread.

#ifndef RDMAD_DAEMON_POLICY_RAIL_PATHS_H_
#define RDMAD_DAEMON_POLICY_RAIL_PATHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/discovery/inventory.h"
#include "daemon/discovery/route_lookup.h"
#include "daemon/policy/path_policy.h"

namespace rdmad {

inline constexpr int kMaxFurtherRails = 7;  // 8 rails per channel in all

struct RailPathDecision {
  std::string device;
  int port = 1;
  int gid_index = 0;
  std::string gid;  // sysfs text
  GidType gid_type = GidType::kIb;
  std::string source_ip;  // "" for IB
  int prefix_len = 0;     // of source_ip on netdev; 0: unknown
  std::string netdev;
  int active_mtu = 0;
  uint32_t weight = 1;  // the port's rate in Gb/s (RailWeight)
  std::string reason;   // one line
};

// A rail's share of a striped transfer: its rate in whole Gb/s, at least 1.
uint32_t RailWeight(double rate_gbps);

// A channel's rails: the first one's weight, whether it takes a share of
// striped transfers, and the further ones.
struct ChannelRails {
  uint32_t weight = 1;
  bool first_striped = true;
  std::string first_reason;  // why not, in one line
  std::vector<RailPathDecision> further;
};

// The rails for a channel whose first rail is primary. preferred: the
// devices of the caller's rail plan, in its order (may be empty). With a
// plan, only its devices are further rails, and a first rail outside it
// (the path policy's, which carries the messages) takes no share of
// striped transfers while one of them is up. lookup may be null (prefix
// lengths unknown).
ChannelRails ChannelRailsFor(const Inventory& inventory, const Config& config,
                             const PathDecision& primary, const std::vector<std::string>& preferred,
                             const SourceAddressLookup* lookup);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_POLICY_RAIL_PATHS_H_
