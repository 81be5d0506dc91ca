// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaMemoryRegion: memory registered on an RdmaDevice's shared protection
// domain (host memory through ibv_reg_mr, or a dmabuf through
// ibv_reg_dmabuf_mr), with local write and the remote access asked for
// (read and write, or read only; local access only for the channel's own
// buffers), and relaxed ordering when chosen. Host memory goes through the
// device's MrCache. It keeps its device open; the MR is deregistered when
// its last region goes.
//
// Relaxed ordering (plan.relaxed_ordering): 0 off; 1 on whenever this
// libibverbs has ibv_reg_mr_iova2 (IBVERBS_1.8, the entry point that passes
// optional access flags; devices without support ignore the flag); 2 auto:
// as 1, but only for a device on a PCI bus (software devices have no PCIe
// ordering to relax). The symbol is looked up with dlsym so the library
// still loads against an older libibverbs.
//
// Thread safety: immutable once handed out (siblings are added before);
// use from any thread.

#ifndef RDMAD_CLIENT_SRC_RDMA_MEMORY_REGION_H_
#define RDMAD_CLIENT_SRC_RDMA_MEMORY_REGION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/src/rdma/device.h"
#include "client/src/rdma/mr_cache.h"
#include "rdmad/channel.h"

struct ibv_mr;
struct ibv_mw;

namespace rdmad::internal {

struct RelaxedOrdering {
  bool on = false;
  std::string reason;  // "on (ibv_reg_mr_iova2 available)", "off (plan: 0)", ...
};
RelaxedOrdering ChooseRelaxedOrdering(int mode, const RdmaDevice& device);

// A memory window Channel::Expose bound over a region. Whichever goes first
// deallocates it (which also invalidates it): the exposing channel (Revoke,
// its end) or the region (its memory may be freed next).
// Thread safety: Free may be called from any thread.
class ExposedWindow {
 public:
  explicit ExposedWindow(ibv_mw* mw) : mw_(mw) {}
  ~ExposedWindow() { Free(); }
  ExposedWindow(const ExposedWindow&) = delete;
  ExposedWindow& operator=(const ExposedWindow&) = delete;
  // Deallocates the window once (which invalidates it).
  void Free();

 private:
  std::mutex mu_;
  ibv_mw* mw_;  // guarded by mu_
};

class RdmaMemoryRegion final : public MemoryRegion {
 public:
  // Host memory through the device's registration cache (mr_cache.h): the
  // same range with the same access and ordering is one MR, shared by every
  // region that registers it. INVALID_ARGUMENT for a null or empty range;
  // the verbs error otherwise (RESOURCE_EXHAUSTED naming ulimit -l).
  static StatusOr<std::unique_ptr<RdmaMemoryRegion>> RegisterHost(
      std::shared_ptr<RdmaDevice> device, void* addr, size_t len, MemoryAccess access,
      const RelaxedOrdering& ordering);
  // The channel's own ring and staging area: local access only, not cached.
  static StatusOr<std::unique_ptr<RdmaMemoryRegion>> RegisterLocal(
      std::shared_ptr<RdmaDevice> device, void* addr, size_t len);
  // UNIMPLEMENTED where libibverbs or the device cannot register dmabufs.
  static StatusOr<std::unique_ptr<RdmaMemoryRegion>> RegisterDmabuf(
      std::shared_ptr<RdmaDevice> device, int fd, uint64_t offset, size_t len,
      bool relaxed_ordering);

  uint8_t* data() const override { return data_; }
  size_t size() const override { return size_; }
  RegionDescriptor descriptor() const override;
  MemoryAccess access() const override { return access_; }

  uint32_t lkey() const;
  uint64_t iova() const { return iova_; }  // the address the QP uses for byte 0
  // Host memory the CPU can copy from, addressed by the QP at its own
  // address (false for a dmabuf).
  bool host() const { return data_ != nullptr && reinterpret_cast<uintptr_t>(data_) == iova_; }
  const RdmaDevice* device() const { return device_.get(); }
  ibv_mr* mr() const;  // windows bind over it (Channel::Expose)
  // Expose's window over this region: freed with the region at the latest.
  void Track(const std::shared_ptr<ExposedWindow>& window) const;
  // The same memory registered on another device, for a channel's further
  // rails: added before the region is handed out; its key is in
  // descriptor().rail_keys. On(device): this region or its sibling there,
  // null if none.
  void AddSibling(std::unique_ptr<RdmaMemoryRegion> sibling);
  const RdmaMemoryRegion* On(const RdmaDevice* device) const;
  ~RdmaMemoryRegion() override;

 private:
  RdmaMemoryRegion(std::shared_ptr<RdmaDevice> device, std::shared_ptr<SharedMr> mr, uint8_t* data,
                   size_t size, uint64_t iova, MemoryAccess access)
      : device_(std::move(device)),
        mr_(std::move(mr)),
        data_(data),
        size_(size),
        iova_(iova),
        access_(access) {}

  std::shared_ptr<RdmaDevice> device_;
  std::shared_ptr<SharedMr> mr_;
  uint8_t* data_;
  size_t size_;
  uint64_t iova_;
  MemoryAccess access_;
  std::vector<std::unique_ptr<RdmaMemoryRegion>> siblings_;  // other devices, set before use
  mutable std::mutex exposed_mu_;
  mutable std::vector<std::weak_ptr<ExposedWindow>> exposed_;  // guarded by exposed_mu_
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_MEMORY_REGION_H_
