// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Reads the RDMA inventory from sysfs: /sys/class/infiniband/<dev> (GUID,
// node type, firmware, the PCI function behind the `device` link, the
// `parent` netdev of rxe/siw), its ports/<N> (state, rate, link layer, LIDs,
// the GID table with types and netdevs, counters) and the netdevs' MTUs
// under /sys/class/net. What sysfs does not show (MTUs, device limits) is
// left at its default for the verbs probe (verbs_probe.h) to fill.
//
// Every function takes the sysfs root ("/sys" in production, a fixture tree
// under tests/fixtures/sysfs/ in tests). Optional files that are missing or
// unreadable leave their fields at the default. A device that disappears
// while it is read (hot unplug, `rdma link delete`) is NOT_FOUND.
//
// Thread safety: free functions without shared state; safe to call from any
// thread (sysfs itself may of course change between two calls).

#ifndef RDMAD_DAEMON_DISCOVERY_SYSFS_READER_H_
#define RDMAD_DAEMON_DISCOVERY_SYSFS_READER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/discovery/inventory.h"
#include "rdmad/status.h"

namespace rdmad {

// A faster source of a port's GID table than its sysfs files (rxe has 1024
// GID slots, one file each): the device monitor answers from
// ibv_query_gid_table.
class GidTableSource {
 public:
  virtual ~GidTableSource() = default;
  // nullopt: read sysfs.
  virtual std::optional<std::vector<GidEntry>> GidTable(const std::string& device,
                                                        const PortInfo& port,
                                                        NodeType node_type) const = 0;
};

// Every device under <sysfs_root>/class/infiniband, sorted by name, ports by
// number, GIDs by index. No such directory: an empty list (no RDMA devices).
// Devices that vanish while being read are left out.
StatusOr<std::vector<DeviceInfo>> ReadSysfsDevices(const std::string& sysfs_root,
                                                   const GidTableSource* gids = nullptr);

// One device. NOT_FOUND when it does not exist (or vanished while read);
// INVALID_ARGUMENT for a name that is not a plain directory name.
StatusOr<DeviceInfo> ReadSysfsDevice(const std::string& sysfs_root, const std::string& name,
                                     const GidTableSource* gids = nullptr);

// The type sysfs and verbs report a GID as, on a port of this link layer
// and device node type: InfiniBand ports and iWARP devices have IB GIDs.
GidType GidTypeFor(bool roce_v2, LinkLayer link_layer, NodeType node_type);

// The port's counters: ports/<port>/counters/* and ports/<port>/hw_counters/*
// by file name (a name in both: the counters/ value). Unreadable and
// non-numeric files are skipped. NOT_FOUND when the port does not exist.
StatusOr<std::map<std::string, uint64_t>> ReadPortCounters(const std::string& sysfs_root,
                                                           const std::string& device, int port);

// The largest IB MTU (256, 512, 1024, 2048 or 4096 bytes) whose RoCE packets
// fit a netdev MTU of netdev_mtu bytes, as the kernel's iboe_get_mtu() rules
// (mlx5, bnxt_re, ...): the headers (GRH 40 + UDP 8 + BTH 12 + XRC ETH 4 +
// AtomicETH 28 + ICRC 4 = 96 bytes) come off first. 1500 gives 1024, 4200
// gives 4096; 0 when not even 256 fits. (rxe reserves 80 bytes instead, so it
// differs for MTUs within 16 bytes above a step: 4176..4191 give it 4096.)
int IbMtuForNetdevMtu(int netdev_mtu);

// "100 Gb/sec (4X EDR)" -> 100, "2.5 Gb/sec (1X SDR)" -> 2.5; 0 if unparsable.
double ParseSysfsRateGbps(std::string_view rate);

// The IP address a RoCE GID maps, as text: "192.0.2.1" for
// "0000:0000:0000:0000:0000:ffff:c000:0201", the IPv6 text otherwise
// ("fe80::..."); "" for an IB GID type or an unparsable GID.
std::string GidIpText(std::string_view gid, GidType type);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_DISCOVERY_SYSFS_READER_H_
