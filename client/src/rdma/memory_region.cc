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
    std::shared_ptr<RdmaDevice> device, void* addr, size_t len, bool relaxed_ordering,
    bool local_only) {
  if (addr == nullptr || len == 0) {
    return Status::InvalidArgument("RegisterMemory: empty range (address " +
                                   std::to_string(reinterpret_cast<uintptr_t>(addr)) + ", length " +
                                   std::to_string(len) + ")");
  }
  ibv_mr* mr = nullptr;
  unsigned access = local_only ? unsigned(IBV_ACCESS_LOCAL_WRITE) : kAccess;
  if (relaxed_ordering && RegMrIova2() != nullptr) {
    mr = RegMrIova2()(device->pd(), addr, len, reinterpret_cast<uintptr_t>(addr),
                      access | IBV_ACCESS_RELAXED_ORDERING);
  } else if (local_only) {
    mr = ibv_reg_mr(device->pd(), addr, len, IBV_ACCESS_LOCAL_WRITE);
  } else {
    // A constant access mask: the plain ibv_reg_mr entry point.
    mr = ibv_reg_mr(device->pd(), addr, len,
                    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  }
  if (mr == nullptr) return RegError(errno, *device, "ibv_reg_mr", len);
  auto* data = static_cast<uint8_t*>(addr);
  return std::unique_ptr<RdmaMemoryRegion>(
      new RdmaMemoryRegion(std::move(device), mr, data, len, reinterpret_cast<uintptr_t>(addr)));
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
  return std::unique_ptr<RdmaMemoryRegion>(
      new RdmaMemoryRegion(std::move(device), mr, nullptr, len, offset));
}

RdmaMemoryRegion::~RdmaMemoryRegion() {
  if (int rc = ibv_dereg_mr(mr_); rc != 0) {
    ClientLog().warn("ibv_dereg_mr on {}: {}", device_->name(), std::strerror(rc));
  }
}

uint32_t RdmaMemoryRegion::lkey() const { return mr_->lkey; }

RegionDescriptor RdmaMemoryRegion::descriptor() const {
  RegionDescriptor d;
  d.address = iova_;
  d.length = size_;
  d.rkey = mr_->rkey;
  return d;
}

}  // namespace rdmad::internal
