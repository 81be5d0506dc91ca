// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/discovery/inventory.h"

#include <cstdio>

namespace rdmad {

std::string_view NodeTypeName(NodeType t) {
  switch (t) {
    case NodeType::kCa: return "CA";
    case NodeType::kSwitch: return "Switch";
    case NodeType::kRouter: return "Router";
    case NodeType::kRnic: return "RNIC";
    case NodeType::kUnknown: break;
  }
  return "unknown";
}

std::string_view LinkLayerName(LinkLayer l) {
  switch (l) {
    case LinkLayer::kInfiniBand: return "InfiniBand";
    case LinkLayer::kEthernet: return "Ethernet";
    case LinkLayer::kUnknown: break;
  }
  return "unknown";
}

std::string_view TransportName(Transport t) {
  switch (t) {
    case Transport::kInfiniBand: return "InfiniBand";
    case Transport::kRoceV1: return "RoCE v1";
    case Transport::kRoceV2: return "RoCE v2";
    case Transport::kIwarp: return "iWARP";
    case Transport::kUnknown: break;
  }
  return "unknown";
}

std::string_view GidTypeName(GidType t) {
  switch (t) {
    case GidType::kIb: return "IB";
    case GidType::kRoceV1: return "RoCE v1";
    case GidType::kRoceV2: return "RoCE v2";
  }
  return "unknown";
}

const DeviceInfo* Inventory::Find(std::string_view name) const {
  for (const DeviceInfo& device : devices) {
    if (device.name == name) return &device;
  }
  return nullptr;
}

std::string VendorName(uint32_t vendor_id) {
  switch (vendor_id) {
    case 0x15b3: return "Mellanox/NVIDIA";
    case 0x10de: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x1da3: return "Habana";
    case 0x8086: return "Intel";
    case 0x14e4: return "Broadcom";
    case 0x1425: return "Chelsio";
    case 0x1077: return "QLogic/Marvell";
    case 0x1fc1: return "QLogic (InfiniPath)";
    case 0x19a2: return "Emulex";
    case 0x1924: return "Solarflare";
    case 0x1137: return "Cisco";
    case 0x1d0f: return "Amazon";
    case 0x1dd8: return "AMD Pensando";
    case 0x19e5: return "Huawei";
    case 0x15ad: return "VMware";
    case 0x1414: return "Microsoft";
    default: break;
  }
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%04x", vendor_id);
  return buf;
}

}  // namespace rdmad
