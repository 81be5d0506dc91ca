// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/topology/topology.h"

#include <algorithm>

namespace rdmad {

std::string_view PathTypeName(PathType type) {
  switch (type) {
    case PathType::kSelf: return "X";
    case PathType::kPix: return "PIX";
    case PathType::kPxb: return "PXB";
    case PathType::kPhb: return "PHB";
    case PathType::kNode: return "NODE";
    case PathType::kSys: return "SYS";
  }
  return "SYS";
}

// The bridges both places share, from the host bridge down, decide: none
// (two host bridges) is NODE or SYS by NUMA node; only the host bridge is
// PHB; below it, one switch (each device at most one bridge under the
// shared one, as a switch's downstream ports are) is PIX, more is PXB.
PathType PathBetween(const PciPlace& a, const PciPlace& b) {
  if (a.bridges.empty() || b.bridges.empty()) {
    if (!a.address.empty() && a.address == b.address) return PathType::kSelf;
    return PathType::kSys;
  }
  if (!a.address.empty() && a.address == b.address) return PathType::kSelf;
  size_t shared = 0;
  while (shared < a.bridges.size() && shared < b.bridges.size() &&
         a.bridges[shared] == b.bridges[shared]) {
    ++shared;
  }
  if (shared == 0) {
    return a.numa_node >= 0 && a.numa_node == b.numa_node ? PathType::kNode : PathType::kSys;
  }
  if (shared == 1) return PathType::kPhb;
  size_t below = std::max(a.bridges.size(), b.bridges.size()) - shared;
  return below <= 1 ? PathType::kPix : PathType::kPxb;
}

const TopoNic* Topology::FindNic(std::string_view name) const {
  for (const TopoNic& nic : nics) {
    if (nic.name == name) return &nic;
  }
  return nullptr;
}

const TopoGpu* Topology::FindGpu(std::string_view pci_address) const {
  for (const TopoGpu& gpu : gpus) {
    if (gpu.place.address == pci_address) return &gpu;
  }
  return nullptr;
}

bool IsGpuClass(uint16_t class_id, uint16_t vendor_id) {
  constexpr uint16_t kVga = 0x0300, k3d = 0x0302, kDisplayOther = 0x0380, kAccel = 0x1200;
  constexpr uint16_t kAspeed = 0x1a03, kMatrox = 0x102b;
  if (class_id == kVga) return vendor_id != kAspeed && vendor_id != kMatrox;
  return class_id == k3d || class_id == kDisplayOther || class_id == kAccel;
}

}  // namespace rdmad
