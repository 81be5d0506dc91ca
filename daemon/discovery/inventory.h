// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The RDMA inventory: what rdmad knows of each device, port and GID. Plain
// values filled from sysfs (sysfs_reader.h) and libibverbs (verbs_probe.h);
// the policy (path_policy.h) reads them, the RPC edge copies them out.
//
// Thread safety: values; share snapshots as std::shared_ptr<const Inventory>.

#ifndef RDMAD_DAEMON_DISCOVERY_INVENTORY_H_
#define RDMAD_DAEMON_DISCOVERY_INVENTORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad {

enum class NodeType { kUnknown, kCa, kSwitch, kRouter, kRnic };
enum class LinkLayer { kUnknown, kInfiniBand, kEthernet };
// How a port carries RDMA. A RoCE port is kRoceV2 when it has RoCE v2 GIDs.
enum class Transport { kUnknown, kInfiniBand, kRoceV1, kRoceV2, kIwarp };
enum class GidType { kIb, kRoceV1, kRoceV2 };

std::string_view NodeTypeName(NodeType t);    // "CA", "RNIC", ...
std::string_view LinkLayerName(LinkLayer l);  // "InfiniBand", "Ethernet"
std::string_view TransportName(Transport t);  // "InfiniBand", "RoCE v1", "RoCE v2", "iWARP"
std::string_view GidTypeName(GidType t);      // "IB", "RoCE v1", "RoCE v2"

struct GidEntry {
  int index = 0;
  std::string gid;  // "fe80:0000:...:0001" as sysfs writes it
  GidType type = GidType::kIb;
  std::string netdev;  // "" for InfiniBand GIDs
  // The IP address the GID maps: "192.0.2.1" for ::ffff:192.0.2.1, the
  // IPv6 address otherwise; "" for IB GIDs (subnet prefix + GUID).
  std::string ip;
  bool operator==(const GidEntry&) const = default;
};

struct PortInfo {
  int port = 1;
  int state = 0;                // ibv_port_state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE
  std::string state_name;       // "ACTIVE"
  int phys_state = 0;           // 5 LinkUp, 3 Disabled, ...
  std::string phys_state_name;  // "LinkUp"
  LinkLayer link_layer = LinkLayer::kUnknown;
  Transport transport = Transport::kUnknown;
  double rate_gbps = 0;  // speed x width
  std::string rate;      // sysfs text, e.g. "100 Gb/sec (4X EDR)"
  int max_mtu = 0;       // bytes (256..4096); 0 if unknown
  int active_mtu = 0;    // bytes
  uint32_t lid = 0;      // InfiniBand only
  uint32_t sm_lid = 0;
  std::string netdev;  // bound Ethernet netdev ("" for IB)
  int netdev_mtu = 0;
  std::vector<GidEntry> gids;  // only non-null entries
  bool operator==(const PortInfo&) const = default;
};

struct DeviceInfo {
  std::string name;       // "mlx5_0", "rxe0"
  std::string node_guid;  // "0c42:a103:0065:e8f4"
  uint32_t vendor_id = 0;
  uint32_t vendor_part_id = 0;
  std::string vendor;  // "Mellanox/NVIDIA", "software", ...
  std::string driver;  // "mlx5_core", "rdma_rxe", ...
  std::string fw_ver;
  std::string hw_rev;
  NodeType node_type = NodeType::kUnknown;
  int numa_node = -1;
  std::string pci_address;    // "0000:3b:00.0"; for rxe: the parent netdev's
  std::string parent_netdev;  // rxe/siw: the netdev the device sits on
  int max_qp = 0;
  int max_mr = 0;
  int max_cq = 0;
  bool relaxed_ordering = false;  // ibv_reg_mr_iova2 + IBV_ACCESS_RELAXED_ORDERING
  bool dmabuf = false;            // ibv_reg_dmabuf_mr supported
  std::vector<PortInfo> ports;
  bool operator==(const DeviceInfo&) const = default;
};

struct Inventory {
  std::vector<DeviceInfo> devices;
  const DeviceInfo* Find(std::string_view name) const;
};

// The vendor name for a PCI vendor id (NICs' and GPUs') ("software" is set by the readers for
// rxe/siw). Unknown ids give "0x1234".
std::string VendorName(uint32_t vendor_id);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_DISCOVERY_INVENTORY_H_
