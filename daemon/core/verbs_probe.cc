// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/core/verbs_probe.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "daemon/core/sysfs_reader.h"
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

Status ProbeVerbs(DeviceInfo* device) {
  auto ctx = OpenByName(device->name);
  if (!ctx.ok()) return ctx.status();
  ibv_device_attr_ex attr{};
  if (ibv_query_device_ex(ctx->get(), nullptr, &attr) != 0) {
    return Status::FromErrno(errno, "ibv_query_device_ex " + device->name);
  }
  device->max_qp = attr.orig_attr.max_qp;
  device->max_mr = attr.orig_attr.max_mr;
  device->max_cq = attr.orig_attr.max_cq;
  if (device->fw_ver.empty()) device->fw_ver = attr.orig_attr.fw_ver;
  device->relaxed_ordering = HasRelaxedOrdering();
  device->dmabuf = HasDmabuf(ctx->get());
  for (PortInfo& port : device->ports) FillPort(ctx->get(), &port);
  return Status::Ok();
}

StatusOr<Inventory> ReadInventory(const std::string& sysfs_root) {
  auto devices = ReadSysfsDevices(sysfs_root);
  if (!devices.ok()) return devices.status();
  Inventory inventory;
  inventory.devices = std::move(devices).value();
  for (DeviceInfo& device : inventory.devices) {
    Status probed = ProbeVerbs(&device);
    if (!probed.ok()) {
      spdlog::warn("device {}: verbs probe failed ({}); using sysfs facts only",
                   device.name, probed.message());
    }
  }
  return inventory;
}

}  // namespace rdmad
