// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The daemon's rails: which devices they may use, and the host-wide plan
// (topology/rail_plan.h) over the current topology.

#include <spdlog/spdlog.h>

#include "daemon/discovery/route_lookup.h"
#include "daemon/lifecycle/daemon.h"
#include "daemon/policy/device_filter.h"
#include "daemon/policy/gid_policy.h"
#include "daemon/policy/rail_paths.h"

namespace rdmad {
namespace {

constexpr int kPortActive = 4;  // IBV_PORT_ACTIVE

// A rail's port (the first ACTIVE one the filter admits) and the GID the
// policy prefers there, from the inventory; a device it lacks keeps port 1
// and no GID.
void Describe(const Config& config, const Inventory& inventory, PlannedRail* rail) {
  const DeviceInfo* device = inventory.Find(rail->device);
  if (device == nullptr) return;
  for (const PortInfo& port : device->ports) {
    if (port.state != kPortActive || !DeviceSelected(config.devices, device->name, port.port)) {
      continue;
    }
    rail->port = port.port;
    if (!port.netdev.empty()) rail->netdev = port.netdev;
    bool iwarp = port.transport == Transport::kIwarp || device->node_type == NodeType::kRnic;
    if (std::optional<GidEntry> gid = PreferredGid(config.gid, port, iwarp)) {
      rail->gid_index = gid->index;
      rail->gid_type = std::string(GidTypeName(gid->type));
    }
    return;
  }
}

}  // namespace

// A device of the inventory with an ACTIVE port the device filter admits.
// A device only the XML topology names (rails.topology_xml stands for
// another machine, or one whose devices this daemon cannot open) is taken
// as usable when the filter admits it.
std::vector<std::string> Daemon::UsableRailDevices(const Topology& topology) const {
  std::shared_ptr<const Config> cfg = config();
  std::shared_ptr<const Inventory> inv = inventory();
  std::vector<std::string> usable;
  for (const TopoNic& nic : topology.nics) {
    const DeviceInfo* device = inv->Find(nic.name);
    if (device == nullptr) {
      if (topology.source != "sysfs" && DeviceSelected(cfg->devices, nic.name, 1)) {
        usable.push_back(nic.name);
      }
      continue;
    }
    for (const PortInfo& port : device->ports) {
      if (port.state == kPortActive && DeviceSelected(cfg->devices, nic.name, port.port)) {
        usable.push_back(nic.name);
        break;
      }
    }
  }
  return usable;
}

StatusOr<RailPlan> Daemon::PlanRails(const RailRequest& request, pid_t pid, uid_t uid) {
  std::shared_ptr<const Topology> topology = topology_.current();
  auto plan = rails_.Plan(*topology, UsableRailDevices(*topology), request, pid, uid);
  if (!plan.ok()) return plan;
  std::shared_ptr<const Config> cfg = config();
  std::shared_ptr<const Inventory> inv = inventory();
  for (PlannedRail& rail : plan->rails) Describe(*cfg, *inv, &rail);
  plan->traffic_class = cfg->qp.traffic_class;
  if (pid > 0) {
    std::string devices;
    for (const PlannedRail& rail : plan->rails)
      devices += (devices.empty() ? "" : ", ") + rail.device;
    spdlog::info("rails for pid {}: {} ({})", pid, devices, plan->reason);
  }
  return plan;
}

ChannelRails Daemon::RailsFor(const PathDecision& primary, pid_t pid) {
  std::vector<std::string> preferred;
  if (pid > 0) {
    for (const RailAssignment& a : rails_.Snapshot().plans) {
      if (a.pid != pid) continue;
      for (const PlannedRail& rail : a.plan.rails) preferred.push_back(rail.device);
    }
  }
  return ChannelRailsFor(*inventory(), *config(), primary, preferred, &KernelSourceAddresses());
}

RailState Daemon::Rails() {
  std::shared_ptr<const Topology> topology = topology_.current();
  RailState state = rails_.Snapshot();
  state.usable = UsableRailDevices(*topology);
  return state;
}

}  // namespace rdmad
