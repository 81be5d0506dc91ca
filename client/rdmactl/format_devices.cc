// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The human output of `rdmactl devices` and `rdmactl gids`.

#include <cstdio>

#include "client/rdmactl/format.h"

namespace rdmactl {
namespace {

// A number the verbs probe fills; 0 means it is unknown.
std::string Known(uint32_t value) { return value == 0 ? "?" : std::to_string(value); }

std::string Hex(uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%04x", value);
  return buf;
}

std::string YesNo(bool value) { return value ? "yes" : "no"; }

std::string NumaText(int32_t numa) { return numa < 0 ? "-" : std::to_string(numa); }

// "0000:3b:00.0", or "netdev veth0" for rxe/siw.
std::string Location(const rdmad::Device& d) {
  if (!d.parent_netdev.empty()) return "netdev " + d.parent_netdev;
  return Dash(d.pci_address);
}

std::string PortsText(const rdmad::Device& d) {
  return std::to_string(ActivePorts(d)) + "/" + std::to_string(d.ports.size());
}

std::string MtuText(const rdmad::Port& p) {
  if (p.active_mtu == 0 && p.max_mtu == 0) return "MTU unknown";
  return "MTU " + Known(p.active_mtu) + " active / " + Known(p.max_mtu) + " max";
}

// "Ethernet/RoCE v2", or "InfiniBand" when both are the same.
std::string LinkText(const rdmad::Port& p) {
  if (p.link_layer == p.transport) return Dash(p.link_layer);
  return Dash(p.link_layer) + "/" + Dash(p.transport);
}

std::string StateText(const rdmad::Port& p) {
  std::string text = p.state.empty() ? "state " + std::to_string(p.state_code) : p.state;
  return p.phys_state.empty() ? text : text + " (" + p.phys_state + ")";
}

std::string GidCount(const rdmad::Port& p) {
  return std::to_string(p.gids.size()) + (p.gids.size() == 1 ? " GID" : " GIDs");
}

Table GidTable(bool with_port) {
  if (with_port) return Table({"DEV", "PORT", "INDEX", "GID", "TYPE", "NETDEV", "IP"});
  return Table({"INDEX", "GID", "TYPE", "NETDEV", "IP"});
}

std::vector<std::string> GidCells(const rdmad::Gid& g) {
  return {std::to_string(g.index), g.gid, Dash(g.type), Dash(g.netdev), Dash(g.ip)};
}

// The key/value lines of `devices DEV`.
std::string DeviceFields(const rdmad::Device& d) {
  Table t({});
  t.AddRow({"node GUID", Dash(d.node_guid)});
  t.AddRow({"vendor", Dash(d.vendor) + " (vendor id " + Hex(d.vendor_id) + ", part " +
                          Hex(d.vendor_part_id) + ")"});
  t.AddRow({"driver", Dash(d.driver)});
  t.AddRow({"node type", Dash(d.node_type)});
  t.AddRow({"firmware", Dash(d.fw_ver) + " (hw rev " + Dash(d.hw_rev) + ")"});
  t.AddRow({"NUMA node", NumaText(d.numa_node)});
  t.AddRow({"PCI address", Dash(d.pci_address)});
  t.AddRow({"parent netdev", Dash(d.parent_netdev)});
  t.AddRow(
      {"max QPs/MRs/CQs", Known(d.max_qp) + " / " + Known(d.max_mr) + " / " + Known(d.max_cq)});
  t.AddRow({"relaxed ordering", YesNo(d.relaxed_ordering)});
  t.AddRow({"dma-buf", YesNo(d.dmabuf)});
  return t.Render();
}

}  // namespace

std::string FormatPortLine(const rdmad::Port& p) {
  std::string text = "port " + std::to_string(p.port) + ": " + StateText(p) + ", " + LinkText(p) +
                     ", " + Dash(p.rate) + ", " + MtuText(p);
  if (!p.netdev.empty()) {
    text += ", netdev " + p.netdev + " (MTU " + Known(p.netdev_mtu) + ")";
  }
  if (p.link_layer == "InfiniBand") {
    text += ", LID " + std::to_string(p.lid) + ", SM LID " + std::to_string(p.sm_lid);
  }
  return text + ", " + GidCount(p);
}

std::string FormatDevices(const std::vector<rdmad::Device>& devices) {
  if (devices.empty()) return std::string(kNoDevicesLine) + "\n";
  Table table({"DEVICE", "VENDOR", "DRIVER", "NODE", "TRANSPORT", "ACTIVE/PORTS", "FIRMWARE",
               "NUMA", "PCI/NETDEV"});
  for (const rdmad::Device& d : devices) {
    table.AddRow({d.name, Dash(d.vendor), Dash(d.driver), Dash(d.node_type), DeviceTransports(d),
                  PortsText(d), Dash(d.fw_ver), NumaText(d.numa_node), Location(d)});
    for (const rdmad::Port& p : d.ports) table.AddDetail("  " + FormatPortLine(p));
  }
  return table.Render();
}

std::string FormatDevice(const rdmad::Device& d) {
  std::string text = d.name + ": " + Dash(d.vendor) + " " + Dash(d.node_type) + ", " +
                     DeviceTransports(d) + ", " + PortsText(d) + " ports active\n";
  text += Indent(DeviceFields(d), "  ");
  for (const rdmad::Port& p : d.ports) {
    text += "  " + FormatPortLine(p) + "\n";
    if (p.gids.empty()) continue;
    Table gids = GidTable(false);
    for (const rdmad::Gid& g : p.gids) gids.AddRow(GidCells(g));
    text += Indent(gids.Render(), "    ");
  }
  return text;
}

std::string FormatGids(const std::vector<rdmad::Device>& devices) {
  if (devices.empty()) return std::string(kNoDevicesLine) + "\n";
  Table table = GidTable(true);
  bool any = false;
  for (const rdmad::Device& d : devices) {
    for (const rdmad::Port& p : d.ports) {
      for (const rdmad::Gid& g : p.gids) {
        std::vector<std::string> cells{d.name, std::to_string(p.port)};
        for (std::string& cell : GidCells(g)) cells.push_back(std::move(cell));
        table.AddRow(std::move(cells));
        any = true;
      }
    }
  }
  return any ? table.Render() : "no GIDs\n";
}

}  // namespace rdmactl
