// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The path policy: for a peer IP address, which local device, port and GID
// index to use, the MTU and the QP attributes - each with a one-line reason
// for logs and the API. Among the ACTIVE ports the device filter selects,
// the port holding the kernel's source address for the peer wins; else the
// best-ranked GID over all ports (gid_policy.h); ties go to the device name,
// then the port number. gid.index >= 0 pins the index on the chosen port.
// InfiniBand ports use GID index 0 (or the pinned one) and their LID; iWARP
// ports need no GID index (rdma_cm addresses them by IP).
//
// Thread safety: pure functions over values, safe from any thread; the
// SourceAddressLookup is called at most once per ResolvePath, on the
// caller's thread.

#ifndef RDMAD_DAEMON_POLICY_PATH_POLICY_H_
#define RDMAD_DAEMON_POLICY_PATH_POLICY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/discovery/inventory.h"
#include "daemon/discovery/route_lookup.h"
#include "daemon/policy/mtu_policy.h"
#include "daemon/policy/qp_policy.h"
#include "rdmad/status.h"

namespace rdmad {

struct PathRequest {
  std::string peer_ip;      // numeric IPv4 or IPv6 ("fe80::1%eth0" allowed)
  int peer_active_mtu = 0;  // 0: unknown
};

struct PathDecision {
  std::string device;  // "mlx5_0"
  int port = 0;
  Transport transport = Transport::kUnknown;  // of this path (v1 GID: RoCE v1)
  int gid_index = -1;                         // -1 for iWARP
  std::string gid;                            // sysfs text; "" for iWARP
  GidType gid_type = GidType::kIb;
  std::string source_ip;  // the local address; "" for InfiniBand
  std::string netdev;     // "" for InfiniBand
  uint32_t lid = 0;       // InfiniBand only
  MtuDecision mtu;
  QpPlan qp;
  // One line per decision, in this order: device, port, GID, MTU, QP.
  std::vector<std::string> reasons;
};

// Plans the path to request.peer_ip. lookup may be empty (no kernel hint).
// INVALID_ARGUMENT: the peer address or MTU is invalid, or a config value
// is out of range. FAILED_PRECONDITION: "no RDMA devices; channels will use
// TCP" when the inventory is empty; no usable port, with the reason each
// port was rejected; a pinned gid.index missing on the chosen port, naming
// the indices that exist.
StatusOr<PathDecision> ResolvePath(const Inventory& inventory, const Config& config,
                                   const PathRequest& request, const SourceAddressLookup* lookup);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_POLICY_PATH_POLICY_H_
