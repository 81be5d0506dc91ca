// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/memory_region.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include "client/src/client_log.h"

namespace rdmad::internal {
namespace {

using RegMrIova2Fn = ibv_mr* (*)(ibv_pd*, void*, size_t, uint64_t, unsigned int);
using RegDmabufMrFn = ibv_mr* (*)(ibv_pd*, uint64_t, size_t, uint64_t, int, int);

RegMrIova2Fn RegMrIova2() {
  static auto fn = reinterpret_cast<RegMrIova2Fn>(dlsym(RTLD_DEFAULT, "ibv_reg_mr_iova2"));
  return fn;
}

RegDmabufMrFn RegDmabufMr() {
  static auto fn = reinterpret_cast<RegDmabufMrFn>(dlsym(RTLD_DEFAULT, "ibv_reg_dmabuf_mr"));
  return fn;
}

constexpr unsigned kAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

unsigned RemoteFlags(MemoryAccess access) {
  switch (access) {
    case MemoryAccess::kRemoteRead: return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
    case MemoryAccess::kLocal: return IBV_ACCESS_LOCAL_WRITE;
    case MemoryAccess::kReadWrite: break;
  }
  return kAccess;
}

Status CheckRange(void* addr, size_t len) {
  if (addr != nullptr && len > 0) return Status::Ok();
  return Status::InvalidArgument("RegisterMemory: empty range (address " +
                                 std::to_string(reinterpret_cast<uintptr_t>(addr)) + ", length " +
                                 std::to_string(len) + ")");
}

// Deregisters; the device stays open until then.
std::function<void(ibv_mr*)> Deregister(std::shared_ptr<RdmaDevice> device) {
  return [device = std::move(device)](ibv_mr* mr) {
    if (int rc = ibv_dereg_mr(mr); rc != 0) {
      ClientLog().warn("ibv_dereg_mr on {}: {}", device->name(), std::strerror(rc));
    }
  };
}

Status RegError(int err, const RdmaDevice& device, const std::string& what, size_t len) {
  std::string msg = what + " of " + std::to_string(len) + " bytes on " + device.name() +
                    " failed: " + std::strerror(err);
  if (err == ENOMEM || err == EFAULT) {
    msg += " (locked memory limit? see ulimit -l)";
    return Status::ResourceExhausted(msg);
  }
  if (err == EINVAL) return Status::InvalidArgument(msg);
  return Status::Unavailable(msg);
}

}  // namespace

RelaxedOrdering ChooseRelaxedOrdering(int mode, const RdmaDevice& device) {
  if (mode == 0) return {false, "off (relaxed_ordering = 0)"};
  if (RegMrIova2() == nullptr) return {false, "off (libibverbs has no ibv_reg_mr_iova2)"};
  if (mode == 2 && !device.on_pci())
    return {false, "off (auto: " + device.name() + " is not on PCI)"};
  return {true, mode == 1 ? "on (relaxed_ordering = 1)" : "on (auto)"};
}

StatusOr<std::unique_ptr<RdmaMemoryRegion>> RdmaMemoryRegion::RegisterHost(
    std::shared_ptr<RdmaDevice> device, void* addr, size_t len, MemoryAccess access,
    const RelaxedOrdering& ordering) {
  RDMAD_RETURN_IF_ERROR(CheckRange(addr, len));
  bool relaxed = ordering.on && RegMrIova2() != nullptr;
  // Windows bind over host registrations (Channel::Expose) where the
  // device has them.
  unsigned flags = RemoteFlags(access) | (relaxed ? IBV_ACCESS_RELAXED_ORDERING : 0) |
                   (device->memory_windows() ? IBV_ACCESS_MW_BIND : 0);
  auto reg = [&]() -> StatusOr<ibv_mr*> {
    ibv_mr* mr =
        relaxed ? RegMrIova2()(device->pd(), addr, len, reinterpret_cast<uintptr_t>(addr), flags)
                : ibv_reg_mr(device->pd(), addr, len, static_cast<int>(flags));
    if (mr == nullptr) return RegError(errno, *device, "ibv_reg_mr", len);
    device->LogOrderingOnce(ordering.reason);
    return mr;
  };
  auto mr = device->mr_cache().Get(reinterpret_cast<uintptr_t>(addr), len, flags, reg,
                                   Deregister(device));
  if (!mr.ok()) return mr.status();
  return std::unique_ptr<RdmaMemoryRegion>(
      new RdmaMemoryRegion(std::move(device), std::move(mr).value(), static_cast<uint8_t*>(addr),
                           len, reinterpret_cast<uintptr_t>(addr), access));
}

StatusOr<std::unique_ptr<RdmaMemoryRegion>> RdmaMemoryRegion::RegisterLocal(
    std::shared_ptr<RdmaDevice> device, void* addr, size_t len) {
  RDMAD_RETURN_IF_ERROR(CheckRange(addr, len));
  ibv_mr* mr = ibv_reg_mr(device->pd(), addr, len, IBV_ACCESS_LOCAL_WRITE);
  if (mr == nullptr) return RegError(errno, *device, "ibv_reg_mr", len);
  auto shared = std::make_shared<SharedMr>(mr, Deregister(device));
  return std::unique_ptr<RdmaMemoryRegion>(
      new RdmaMemoryRegion(std::move(device), std::move(shared), static_cast<uint8_t*>(addr), len,
                           reinterpret_cast<uintptr_t>(addr), MemoryAccess::kReadWrite));
}

StatusOr<std::unique_ptr<RdmaMemoryRegion>> RdmaMemoryRegion::RegisterDmabuf(
    std::shared_ptr<RdmaDevice> device, int fd, uint64_t offset, size_t len,
    bool relaxed_ordering) {
  if (fd < 0 || len == 0) {
    return Status::InvalidArgument("RegisterDmabuf: bad fd " + std::to_string(fd) +
                                   " or empty length");
  }
  if (RegDmabufMr() == nullptr) {
    return Status::Unimplemented(
        "RegisterDmabuf: this libibverbs has no ibv_reg_dmabuf_mr (rdma-core >= 34 needed)");
  }
  unsigned access = kAccess | (relaxed_ordering ? IBV_ACCESS_RELAXED_ORDERING : 0);
  // The QP addresses the region from iova = offset.
  errno = 0;
  ibv_mr* mr = RegDmabufMr()(device->pd(), offset, len, offset, fd, static_cast<int>(access));
  if (mr == nullptr) {
    int err = errno;
    if (err == EOPNOTSUPP || err == ENOSYS || err == EPROTONOSUPPORT) {
      return Status::Unimplemented("RegisterDmabuf: " + device->name() +
                                   " cannot register dmabufs (" + std::strerror(err) + ")");
    }
    return RegError(err, *device, "ibv_reg_dmabuf_mr", len);
  }
  auto shared = std::make_shared<SharedMr>(mr, Deregister(device));
  return std::unique_ptr<RdmaMemoryRegion>(new RdmaMemoryRegion(
      std::move(device), std::move(shared), nullptr, len, offset, MemoryAccess::kReadWrite));
}

void ExposedWindow::Free() {
  std::lock_guard lock(mu_);
  if (mw_ == nullptr) return;
  if (int rc = ibv_dealloc_mw(mw_); rc != 0) {
    ClientLog().warn("Expose: ibv_dealloc_mw: {}", std::strerror(rc));
  }
  mw_ = nullptr;
}

RdmaMemoryRegion::~RdmaMemoryRegion() {
  std::lock_guard lock(exposed_mu_);
  for (const auto& weak : exposed_) {
    if (auto window = weak.lock()) window->Free();  // before the memory goes
  }
}

void RdmaMemoryRegion::Track(const std::shared_ptr<ExposedWindow>& window) const {
  std::lock_guard lock(exposed_mu_);
  std::erase_if(exposed_, [](const auto& weak) { return weak.expired(); });
  exposed_.push_back(window);
}

uint32_t RdmaMemoryRegion::lkey() const { return mr_->get()->lkey; }
ibv_mr* RdmaMemoryRegion::mr() const { return mr_->get(); }

RegionDescriptor RdmaMemoryRegion::descriptor() const {
  RegionDescriptor d;
  d.address = iova_;
  d.length = size_;
  d.rkey = mr_->get()->rkey;
  for (const auto& sibling : siblings_) {
    d.rail_keys.push_back(RailKey{sibling->device_->tag(), sibling->mr_->get()->rkey});
  }
  return d;
}

void RdmaMemoryRegion::AddSibling(std::unique_ptr<RdmaMemoryRegion> sibling) {
  if (sibling == nullptr || On(sibling->device()) != nullptr) return;
  siblings_.push_back(std::move(sibling));
}

const RdmaMemoryRegion* RdmaMemoryRegion::On(const RdmaDevice* device) const {
  if (device_.get() == device) return this;
  for (const auto& sibling : siblings_) {
    if (sibling->device() == device) return sibling.get();
  }
  return nullptr;
}

}  // namespace rdmad::internal
