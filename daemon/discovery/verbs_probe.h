// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What only libibverbs knows of a device: port MTUs (max and active), the
// device's limits, and the capabilities that matter to the data path
// (relaxed ordering, dma-buf registration). The sysfs reader fills the rest.
//
// Thread safety: the functions are reentrant; libibverbs is thread-safe.

#ifndef RDMAD_DAEMON_DISCOVERY_VERBS_PROBE_H_
#define RDMAD_DAEMON_DISCOVERY_VERBS_PROBE_H_

#include <optional>
#include <string>
#include <vector>

#include "daemon/discovery/inventory.h"
#include "daemon/discovery/sysfs_reader.h"
#include "rdmad/status.h"

struct ibv_context;

namespace rdmad {

// Opens device->name with libibverbs and fills max_qp/max_mr/max_cq,
// relaxed_ordering, dmabuf and each port's max_mtu/active_mtu (and state,
// LIDs when sysfs had none). NOT_FOUND when verbs does not list the device.
Status ProbeVerbs(DeviceInfo* device);
// The same with a context the caller holds open (the device monitor's).
Status ProbeVerbsWith(ibv_context* ctx, DeviceInfo* device);

// Converts an enum ibv_mtu value (1..5) to bytes (256..4096); 0 if invalid.
int IbvMtuToBytes(int ibv_mtu);

// A port's valid GIDs from one ibv_query_gid_table call, in the sysfs
// text form; nullopt when verbs cannot say (then sysfs is read).
std::optional<std::vector<GidEntry>> QueryGidTable(ibv_context* ctx, const PortInfo& port,
                                                   NodeType node_type);

// Reads every device from sysfs_root, without verbs; gids (may be null)
// supplies GID tables faster than sysfs.
StatusOr<Inventory> ReadSysfsInventory(const std::string& sysfs_root,
                                       const GidTableSource* gids = nullptr);

// Reads every device from sysfs_root and completes each with ProbeVerbs.
// A device verbs cannot open is kept with its sysfs facts (and logged).
StatusOr<Inventory> ReadInventory(const std::string& sysfs_root);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_DISCOVERY_VERBS_PROBE_H_
