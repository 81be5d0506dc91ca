// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What rdmad reports about the host's RDMA devices and the path it plans to
// a peer. Plain values returned by rdmad::Client.
//
// Thread safety: values.

#ifndef RDMAD_DEVICES_H_
#define RDMAD_DEVICES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rdmad {

struct Gid {
  uint32_t index = 0;
  std::string gid;
  std::string type;  // "IB", "RoCE v1", "RoCE v2"
  std::string netdev;
  std::string ip;  // the address the GID maps, "" for IB GIDs
};

struct Port {
  uint32_t port = 0;
  std::string state;        // "ACTIVE", "DOWN", ...
  uint32_t state_code = 0;  // ibv_port_state
  std::string phys_state;   // "LinkUp", ...
  std::string link_layer;   // "InfiniBand", "Ethernet"
  std::string transport;    // "InfiniBand", "RoCE v1", "RoCE v2", "iWARP"
  double rate_gbps = 0;
  std::string rate;
  uint32_t max_mtu = 0;
  uint32_t active_mtu = 0;
  uint32_t lid = 0;
  uint32_t sm_lid = 0;
  std::string netdev;
  uint32_t netdev_mtu = 0;
  std::vector<Gid> gids;
};

struct Device {
  std::string name;
  std::string node_guid;
  uint32_t vendor_id = 0;
  uint32_t vendor_part_id = 0;
  std::string vendor;
  std::string driver;
  std::string fw_ver;
  std::string hw_rev;
  std::string node_type;  // "CA", "RNIC", ...
  int32_t numa_node = -1;
  std::string pci_address;
  std::string parent_netdev;
  uint32_t max_qp = 0;
  uint32_t max_mr = 0;
  uint32_t max_cq = 0;
  bool relaxed_ordering = false;
  bool dmabuf = false;
  std::vector<Port> ports;
};

struct QpAttributes {
  std::string type;
  uint32_t timeout = 0;
  uint32_t retry_cnt = 0;
  uint32_t rnr_retry = 0;
  uint32_t min_rnr_timer = 0;
  uint32_t traffic_class = 0;
  uint32_t service_level = 0;
  uint32_t hop_limit = 0;
  uint32_t max_inline = 0;
  uint32_t send_depth = 0;
  uint32_t recv_depth = 0;
  uint32_t qps_per_channel = 0;
  uint32_t spin_us = 0;           // the library polls this long, then sleeps
  uint32_t relaxed_ordering = 0;  // 0 off, 1 on if supported, 2 auto
  uint32_t slot_size = 0;         // bytes per receive slot
};

// The path rdmad plans to a peer address, with one reason per decision.
struct Path {
  std::string device;
  uint32_t port = 0;
  std::string transport;
  uint32_t gid_index = 0;
  std::string gid;
  std::string gid_type;
  std::string source_ip;
  std::string netdev;
  uint32_t lid = 0;
  uint32_t mtu = 0;
  uint32_t local_active_mtu = 0;
  uint32_t peer_active_mtu = 0;
  uint32_t mtu_cap = 0;
  QpAttributes qp;
  std::vector<std::string> reasons;
};

using PortCounters = std::map<std::string, uint64_t>;

}  // namespace rdmad

#endif  // RDMAD_DEVICES_H_
