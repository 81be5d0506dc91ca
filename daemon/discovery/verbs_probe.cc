// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/discovery/verbs_probe.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "daemon/discovery/sysfs_reader.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};
struct ContextDeleter {
  void operator()(ibv_context* ctx) const { ibv_close_device(ctx); }
};
struct PdDeleter {
  void operator()(ibv_pd* pd) const { ibv_dealloc_pd(pd); }
};
using ContextPtr = std::unique_ptr<ibv_context, ContextDeleter>;

StatusOr<ContextPtr> OpenByName(const std::string& name) {
  int n = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&n));
  if (!list) return Status::FromErrno(errno, "ibv_get_device_list");
  for (int i = 0; i < n; ++i) {
    if (name != ibv_get_device_name(list.get()[i])) continue;
    ibv_context* ctx = ibv_open_device(list.get()[i]);
    if (ctx == nullptr) return Status::FromErrno(errno, "ibv_open_device " + name);
    return ContextPtr(ctx);
  }
  return Status::NotFound("libibverbs does not list " + name);
}

// Relaxed ordering needs ibv_reg_mr_iova2 (rdma-core >= 29); the access flag
// is optional, so a device without support ignores it.
bool HasRelaxedOrdering() { return dlsym(RTLD_DEFAULT, "ibv_reg_mr_iova2") != nullptr; }

// Registers a dma-buf with an invalid fd: a driver without the verb answers
// EOPNOTSUPP, one with it fails on the fd instead.
bool HasDmabuf(ibv_context* ctx) {
  std::unique_ptr<ibv_pd, PdDeleter> pd(ibv_alloc_pd(ctx));
  if (!pd) return false;
  errno = 0;
  ibv_mr* mr = ibv_reg_dmabuf_mr(pd.get(), 0, 4096, 0, -1, IBV_ACCESS_LOCAL_WRITE);
  if (mr != nullptr) {
    ibv_dereg_mr(mr);
    return true;
  }
  return errno != EOPNOTSUPP && errno != ENOSYS && errno != 0;
}

void FillPort(ibv_context* ctx, PortInfo* port) {
  ibv_port_attr attr{};
  if (ibv_query_port(ctx, uint8_t(port->port), &attr) != 0) {
    spdlog::debug("ibv_query_port port {}: {}", port->port, std::strerror(errno));
    return;
  }
  port->max_mtu = IbvMtuToBytes(attr.max_mtu);
  port->active_mtu = IbvMtuToBytes(attr.active_mtu);
  if (port->state == 0) port->state = attr.state;
  if (port->state_name.empty()) port->state_name = ibv_port_state_str(attr.state);
  if (port->link_layer == LinkLayer::kInfiniBand && port->lid == 0) {
    port->lid = attr.lid;
    port->sm_lid = attr.sm_lid;
  }
}

}  // namespace

int IbvMtuToBytes(int ibv_mtu) {
  return (ibv_mtu >= IBV_MTU_256 && ibv_mtu <= IBV_MTU_4096) ? 128 << ibv_mtu : 0;
}

Status ProbeVerbsWith(ibv_context* ctx, DeviceInfo* device) {
  ibv_device_attr_ex attr{};
  if (ibv_query_device_ex(ctx, nullptr, &attr) != 0) {
    return Status::FromErrno(errno, "ibv_query_device_ex " + device->name);
  }
  device->max_qp = attr.orig_attr.max_qp;
  device->max_mr = attr.orig_attr.max_mr;
  device->max_cq = attr.orig_attr.max_cq;
  if (device->fw_ver.empty()) device->fw_ver = attr.orig_attr.fw_ver;
  // Software devices have no PCI ids in sysfs; verbs reports the driver's
  // (rxe: 0xffffff), as ibv_devinfo shows them.
  if (device->vendor_id == 0) device->vendor_id = attr.orig_attr.vendor_id;
  if (device->vendor_part_id == 0) device->vendor_part_id = attr.orig_attr.vendor_part_id;
  device->relaxed_ordering = HasRelaxedOrdering();
  device->dmabuf = HasDmabuf(ctx);
  for (PortInfo& port : device->ports) FillPort(ctx, &port);
  return Status::Ok();
}

Status ProbeVerbs(DeviceInfo* device) {
  auto ctx = OpenByName(device->name);
  if (!ctx.ok()) return ctx.status();
  return ProbeVerbsWith(ctx->get(), device);
}

std::optional<std::vector<GidEntry>> QueryGidTable(ibv_context* ctx, const PortInfo& port,
                                                   NodeType node_type) {
  ibv_port_attr attr{};
  if (ibv_query_port(ctx, uint8_t(port.port), &attr) != 0 || attr.gid_tbl_len <= 0) {
    return std::nullopt;
  }
  // The table of every port comes back; size for the device's largest.
  ibv_device_attr dev{};
  if (ibv_query_device(ctx, &dev) != 0) return std::nullopt;
  std::vector<ibv_gid_entry> entries(size_t(attr.gid_tbl_len) * dev.phys_port_cnt);
  ssize_t n = ibv_query_gid_table(ctx, entries.data(), entries.size(), 0);
  if (n < 0) return std::nullopt;  // e.g. a kernel without the ioctl
  std::vector<GidEntry> gids;
  for (ssize_t i = 0; i < n; ++i) {
    const ibv_gid_entry& e = entries[size_t(i)];
    if (int(e.port_num) != port.port) continue;
    GidEntry gid;
    gid.index = int(e.gid_index);
    char text[40];
    const uint8_t* b = e.gid.raw;
    std::snprintf(text, sizeof(text),
                  "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                  b[14], b[15]);
    gid.gid = text;
    gid.type = GidTypeFor(e.gid_type == IBV_GID_TYPE_ROCE_V2, port.link_layer, node_type);
    if (gid.type != GidType::kIb) {
      char name[IF_NAMESIZE] = {};
      if (e.ndev_ifindex != 0 && if_indextoname(e.ndev_ifindex, name)) gid.netdev = name;
      gid.ip = GidIpText(gid.gid, gid.type);
    }
    gids.push_back(std::move(gid));
  }
  std::sort(gids.begin(), gids.end(),
            [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
  return gids;
}

StatusOr<Inventory> ReadSysfsInventory(const std::string& sysfs_root, const GidTableSource* gids) {
  auto devices = ReadSysfsDevices(sysfs_root, gids);
  if (!devices.ok()) return devices.status();
  Inventory inventory;
  inventory.devices = std::move(devices).value();
  return inventory;
}

StatusOr<Inventory> ReadInventory(const std::string& sysfs_root) {
  auto scanned = ReadSysfsInventory(sysfs_root);
  if (!scanned.ok()) return scanned.status();
  Inventory inventory = std::move(scanned).value();
  for (DeviceInfo& device : inventory.devices) {
    Status probed = ProbeVerbs(&device);
    if (!probed.ok()) {
      spdlog::warn("device {}: verbs probe failed ({}); using sysfs facts only", device.name,
                   probed.message());
    }
  }
  return inventory;
}

}  // namespace rdmad
