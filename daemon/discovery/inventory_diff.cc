// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/discovery/inventory_diff.h"

#include "fmt/format.h"

namespace rdmad {
namespace {

using Kind = InventoryChange::Kind;

std::string DescribeDevice(const DeviceInfo& d) {
  std::string transport =
      d.ports.empty() ? "no ports" : std::string(TransportName(d.ports[0].transport));
  return fmt::format("{} ({}, {}, {} port{})", d.name, d.vendor, transport, d.ports.size(),
                     d.ports.size() == 1 ? "" : "s");
}

std::string DescribeGid(const GidEntry& g) {
  return fmt::format("GID {} {} ({}{}{})", g.index, g.gid, GidTypeName(g.type),
                     g.ip.empty() ? "" : ", " + g.ip, g.netdev.empty() ? "" : " on " + g.netdev);
}

const PortInfo* FindPort(const DeviceInfo& d, int port) {
  for (const PortInfo& p : d.ports) {
    if (p.port == port) return &p;
  }
  return nullptr;
}

const GidEntry* FindGid(const PortInfo& p, const GidEntry& like) {
  for (const GidEntry& g : p.gids) {
    if (g.index == like.index && g.gid == like.gid && g.type == like.type) return &g;
  }
  return nullptr;
}

void DiffGids(const DeviceInfo& d, const PortInfo& before, const PortInfo& after,
              std::vector<InventoryChange>* out) {
  for (const GidEntry& g : before.gids) {
    if (!FindGid(after, g)) {
      out->push_back({Kind::kGidRemoved, d.name, after.port,
                      fmt::format("{} port {}: {} removed", d.name, after.port, DescribeGid(g)),
                      g.gid});
    }
  }
  for (const GidEntry& g : after.gids) {
    if (!FindGid(before, g)) {
      out->push_back({Kind::kGidAdded, d.name, after.port,
                      fmt::format("{} port {}: {} added", d.name, after.port, DescribeGid(g)),
                      g.gid});
    }
  }
}

void DiffPorts(const DeviceInfo& before, const DeviceInfo& after,
               std::vector<InventoryChange>* out) {
  for (const PortInfo& p : after.ports) {
    const PortInfo* old = FindPort(before, p.port);
    if (old == nullptr) continue;
    if (old->state != p.state || old->phys_state != p.phys_state) {
      out->push_back(
          {Kind::kPortStateChanged, after.name, p.port,
           fmt::format("{} port {}: {} ({}) -> {} ({})", after.name, p.port, old->state_name,
                       old->phys_state_name, p.state_name, p.phys_state_name),
           ""});
    }
    DiffGids(after, *old, p, out);
  }
}

}  // namespace

std::vector<InventoryChange> DiffInventory(const Inventory& before, const Inventory& after) {
  std::vector<InventoryChange> out;
  for (const DeviceInfo& d : before.devices) {
    if (!after.Find(d.name)) {
      out.push_back({Kind::kDeviceRemoved, d.name, 0, d.name + " removed", ""});
    }
  }
  for (const DeviceInfo& d : after.devices) {
    const DeviceInfo* old = before.Find(d.name);
    if (old == nullptr) {
      out.push_back({Kind::kDeviceAdded, d.name, 0, DescribeDevice(d) + " added", ""});
    } else {
      DiffPorts(*old, d, &out);
    }
  }
  return out;
}

}  // namespace rdmad
