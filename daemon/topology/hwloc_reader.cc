// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/topology/hwloc_reader.h"

#include <hwloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

namespace rdmad {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using HwlocTopology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

std::string PciAddress(hwloc_obj_t obj) {
  const auto& pci = obj->attr->pcidev;
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%01x", pci.domain, pci.bus, pci.dev, pci.func);
  return text;
}

std::string BridgeId(hwloc_obj_t bridge) {
  const auto& b = bridge->attr->bridge;
  if (b.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
    char text[48];
    std::snprintf(text, sizeof(text), "host:%04x:[%02x-%02x]", b.downstream.pci.domain,
                  b.downstream.pci.secondary_bus, b.downstream.pci.subordinate_bus);
    return text;
  }
  return PciAddress(bridge);
}

std::string CpuList(hwloc_const_cpuset_t set) {
  if (set == nullptr || hwloc_bitmap_iszero(set)) return "";
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || text == nullptr) return "";
  std::string out(text);
  std::free(text);
  return out;
}

// obj's place: the bridges above it and the NUMA node and CPUs of the
// normal object it hangs from.
PciPlace PlaceOf(hwloc_topology_t topology, hwloc_obj_t pci) {
  PciPlace place;
  place.address = PciAddress(pci);
  for (hwloc_obj_t up = pci->parent; up != nullptr && up->type == HWLOC_OBJ_BRIDGE;
       up = up->parent) {
    place.bridges.insert(place.bridges.begin(), BridgeId(up));
  }
  hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topology, pci);
  if (local != nullptr) {
    place.cpus = CpuList(local->cpuset);
    if (local->nodeset != nullptr && hwloc_bitmap_weight(local->nodeset) == 1 &&
        hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE) > 1) {
      place.numa_node = hwloc_bitmap_first(local->nodeset);
    } else if (hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE) == 1) {
      place.numa_node = 0;
    }
  }
  return place;
}

// The PCI device an OS device (mlx5_0, eth1) hangs from, if any.
hwloc_obj_t PciParent(hwloc_obj_t osdev) {
  hwloc_obj_t up = osdev->parent;
  return up != nullptr && up->type == HWLOC_OBJ_PCI_DEVICE ? up : nullptr;
}

hwloc_obj_t FindOsDev(hwloc_topology_t topology, std::string_view name,
                      hwloc_obj_osdev_type_e type) {
  for (hwloc_obj_t o = hwloc_get_next_osdev(topology, nullptr); o != nullptr;
       o = hwloc_get_next_osdev(topology, o)) {
    if (o->attr->osdev.type == type && o->name != nullptr && name == o->name) return o;
  }
  return nullptr;
}

hwloc_obj_t FindPci(hwloc_topology_t topology, std::string_view address) {
  for (hwloc_obj_t o = hwloc_get_next_pcidev(topology, nullptr); o != nullptr;
       o = hwloc_get_next_pcidev(topology, o)) {
    if (PciAddress(o) == address) return o;
  }
  return nullptr;
}

// The first Ethernet netdev beside an RDMA device (same PCI function).
std::string NetdevBeside(hwloc_obj_t pci) {
  for (hwloc_obj_t c = pci->io_first_child; c != nullptr; c = c->next_sibling) {
    if (c->type == HWLOC_OBJ_OS_DEVICE && c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK &&
        c->name != nullptr) {
      return c->name;
    }
  }
  return "";
}

void AddNics(hwloc_topology_t topology, const Inventory& inventory, Topology* out) {
  for (hwloc_obj_t o = hwloc_get_next_osdev(topology, nullptr); o != nullptr;
       o = hwloc_get_next_osdev(topology, o)) {
    if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS || o->name == nullptr) continue;
    TopoNic nic;
    nic.name = o->name;
    if (hwloc_obj_t pci = PciParent(o)) {
      nic.place = PlaceOf(topology, pci);
      nic.netdev = NetdevBeside(pci);
    }
    out->nics.push_back(std::move(nic));
  }
  // The inventory's devices hwloc does not list or cannot place (software
  // ones: rxe, siw): by their netdev's PCI device, else by the PCI address
  // the inventory read.
  for (const DeviceInfo& device : inventory.devices) {
    TopoNic* nic = nullptr;
    for (TopoNic& known : out->nics) {
      if (known.name == device.name) nic = &known;
    }
    if (nic == nullptr) {
      nic = &out->nics.emplace_back();
      nic->name = device.name;
    }
    if (nic->netdev.empty()) nic->netdev = device.parent_netdev;
    if (!nic->place.address.empty()) continue;
    hwloc_obj_t pci = nullptr;
    if (!device.parent_netdev.empty()) {
      if (hwloc_obj_t net = FindOsDev(topology, device.parent_netdev, HWLOC_OBJ_OSDEV_NETWORK)) {
        pci = PciParent(net);
      }
    }
    if (pci == nullptr && !device.pci_address.empty()) pci = FindPci(topology, device.pci_address);
    if (pci != nullptr) nic->place = PlaceOf(topology, pci);
  }
  std::sort(out->nics.begin(), out->nics.end(),
            [](const TopoNic& a, const TopoNic& b) { return a.name < b.name; });
}

std::string GpuModel(hwloc_obj_t pci) {
  for (hwloc_obj_t c = pci->io_first_child; c != nullptr; c = c->next_sibling) {
    if (c->type != HWLOC_OBJ_OS_DEVICE) continue;
    if (const char* model = hwloc_obj_get_info_by_name(c, "GPUModel")) return model;
  }
  if (const char* name = hwloc_obj_get_info_by_name(pci, "PCIDevice")) return name;
  return "";
}

void AddGpus(hwloc_topology_t topology, Topology* out) {
  for (hwloc_obj_t o = hwloc_get_next_pcidev(topology, nullptr); o != nullptr;
       o = hwloc_get_next_pcidev(topology, o)) {
    const auto& pci = o->attr->pcidev;
    if (!IsGpuClass(pci.class_id, pci.vendor_id)) continue;
    out->gpus.push_back(TopoGpu{.index = 0,
                                .vendor_id = pci.vendor_id,
                                .device_id = pci.device_id,
                                .class_id = pci.class_id,
                                .vendor = VendorName(pci.vendor_id),
                                .model = GpuModel(o),
                                .place = PlaceOf(topology, o)});
  }
  std::sort(out->gpus.begin(), out->gpus.end(),
            [](const TopoGpu& a, const TopoGpu& b) { return a.place.address < b.place.address; });
  for (size_t i = 0; i < out->gpus.size(); ++i) out->gpus[i].index = int(i);
}

}  // namespace

StatusOr<Topology> ReadTopology(const std::string& xml_path, const Inventory& inventory) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return Status::Internal("hwloc: cannot start a topology");
  HwlocTopology topology(raw);
  // PCI devices and bridges are what rails need; caches are not.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_topology_set_cache_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_icache_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_NONE);
  const std::string where = xml_path.empty() ? std::string("this host") : xml_path;
  if (!xml_path.empty() && hwloc_topology_set_xml(raw, xml_path.c_str()) != 0) {
    return Status::InvalidArgument("topology " + xml_path +
                                   ": hwloc cannot read it as XML (lstopo --of xml writes one)");
  }
  if (hwloc_topology_load(raw) != 0) {
    return Status::Unavailable("topology of " + where + ": hwloc could not load it");
  }
  Topology out;
  out.source = xml_path.empty() ? "sysfs" : xml_path;
  out.numa_nodes = std::max(1, hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_NUMANODE));
  if (const char* product = hwloc_obj_get_info_by_name(hwloc_get_root_obj(raw), "DMIProductName")) {
    out.machine = product;
  }
  AddNics(raw, inventory, &out);
  AddGpus(raw, &out);
  return out;
}

}  // namespace rdmad
