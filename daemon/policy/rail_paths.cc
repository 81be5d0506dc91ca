// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/policy/rail_paths.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "daemon/policy/device_filter.h"
#include "daemon/policy/gid_policy.h"

namespace rdmad {
namespace {

constexpr int kPortActive = 4;  // IBV_PORT_ACTIVE

bool IsIb(const PortInfo& port) { return port.link_layer == LinkLayer::kInfiniBand; }

// The device's first port that can be a further rail beside primary, with
// the GID it would use; nullopt (and why, in *why) when none can.
std::optional<RailPathDecision> RailOn(const Config& config, const DeviceInfo& device,
                                       const PathDecision& primary, std::string* why) {
  bool primary_ib = primary.transport == Transport::kInfiniBand;
  for (const PortInfo& port : device.ports) {
    if (!DeviceSelected(config.devices, device.name, port.port)) {
      *why = "excluded by devices.include/exclude";
      continue;
    }
    if (port.state != kPortActive) {
      *why = "port " + std::to_string(port.port) + " is " + port.state_name;
      continue;
    }
    if (IsIb(port) != primary_ib) {
      *why = "its link layer differs from " + primary.device + "'s";
      continue;
    }
    if (port.transport == Transport::kIwarp || device.node_type == NodeType::kRnic) {
      *why = "iWARP (no RC QP addressed by GID)";
      continue;
    }
    std::optional<GidEntry> gid = PreferredGid(config.gid, port, /*iwarp=*/false);
    if (!gid || gid->type != primary.gid_type) {
      *why = "no " + std::string(GidTypeName(primary.gid_type)) + " GID on port " +
             std::to_string(port.port);
      continue;
    }
    RailPathDecision rail;
    rail.device = device.name;
    rail.port = port.port;
    rail.gid_index = gid->index;
    rail.gid = gid->gid;
    rail.gid_type = gid->type;
    rail.source_ip = gid->ip;
    rail.netdev = port.netdev;
    rail.active_mtu = port.active_mtu;
    rail.weight = RailWeight(port.rate_gbps);
    return rail;
  }
  return std::nullopt;
}

}  // namespace

uint32_t RailWeight(double rate_gbps) {
  if (!(rate_gbps >= 1)) return 1;
  return static_cast<uint32_t>(std::min(100000.0, std::floor(rate_gbps)));
}

ChannelRails ChannelRailsFor(const Inventory& inventory, const Config& config,
                             const PathDecision& primary, const std::vector<std::string>& preferred,
                             const SourceAddressLookup* lookup) {
  ChannelRails out;
  if (const DeviceInfo* d = inventory.Find(primary.device)) {
    for (const PortInfo& port : d->ports) {
      if (port.port == primary.port) out.weight = RailWeight(port.rate_gbps);
    }
  }
  std::vector<RailPathDecision>& rails = out.further;
  int wanted = config.rails.per_channel == 0 ? kMaxFurtherRails + 1 : config.rails.per_channel;
  if (wanted <= 1 || primary.gid_index < 0 || primary.transport == Transport::kIwarp) return out;
  // The plan's devices in its order; without a plan, the inventory's by name.
  std::vector<const DeviceInfo*> order;
  for (const std::string& name : preferred) {
    const DeviceInfo* d = inventory.Find(name);
    if (d != nullptr && std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  }
  const bool planned = !order.empty();
  if (!planned) {
    for (const DeviceInfo& d : inventory.devices) order.push_back(&d);
    std::sort(order.begin(), order.end(),
              [](const DeviceInfo* a, const DeviceInfo* b) { return a->name < b->name; });
  }
  for (const DeviceInfo* device : order) {
    if (device->name == primary.device) continue;
    if (static_cast<int>(rails.size()) + 1 >= wanted) break;
    std::string why;
    std::optional<RailPathDecision> rail = RailOn(config, *device, primary, &why);
    if (!rail) continue;
    if (lookup != nullptr && !rail->source_ip.empty()) {
      rail->prefix_len = lookup->PrefixLength(rail->source_ip).value_or(0);
    }
    rail->reason = device->name + " port " + std::to_string(rail->port) + " GID index " +
                   std::to_string(rail->gid_index) + " (" +
                   std::string(GidTypeName(rail->gid_type)) +
                   (rail->source_ip.empty() ? "" : ", " + rail->source_ip) +
                   "): " + (planned ? "in the process's rail plan" : "another usable device") +
                   ", weight " + std::to_string(rail->weight);
    rails.push_back(std::move(*rail));
  }
  if (planned && !rails.empty() &&
      std::find(preferred.begin(), preferred.end(), primary.device) == preferred.end()) {
    out.first_striped = false;
    out.first_reason = primary.device +
                       " (the path policy's) is not in the process's rail plan: it carries the "
                       "messages, and large transfers only while no rail of the plan is up";
  }
  return out;
}

}  // namespace rdmad
