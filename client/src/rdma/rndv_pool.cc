// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/rndv_pool.h"

#include <infiniband/verbs.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "client/src/client_log.h"

namespace rdmad::internal {

RndvPool::RndvPool(ibv_pd* pd, std::string device, uint32_t chunks, bool windows)
    : pd_(pd), device_(std::move(device)), chunks_(chunks), windows_(windows) {}

RndvPool::~RndvPool() {
  for (ibv_mr* mr : mrs_) {
    if (int rc = ibv_dereg_mr(mr); rc != 0) {
      ClientLog().warn("RDMA {}: rendezvous pool: ibv_dereg_mr: {}", device_, std::strerror(rc));
    }
  }
  if (base_ != nullptr) munmap(base_, size_t(chunks_) * kChunkSize);
}

bool RndvPool::EnsureRegistered() {
  if (base_ != nullptr) return true;
  if (failed_ || chunks_ == 0) return false;
  size_t bytes = size_t(chunks_) * kChunkSize;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    failed_ = true;
    ClientLog().warn("RDMA {}: rendezvous pool: mmap {} bytes: {}; large messages go in slots",
                     device_, bytes, std::strerror(errno));
    return false;
  }
  // No remote access: a peer reads a chunk only through a window bound
  // over it for that peer's QP.
  int access = IBV_ACCESS_LOCAL_WRITE | (windows_ ? IBV_ACCESS_MW_BIND : 0);
  std::vector<ibv_mr*> mrs;
  for (uint32_t i = 0; i < chunks_; ++i) {
    ibv_mr* mr =
        ibv_reg_mr(pd_, static_cast<uint8_t*>(p) + size_t(i) * kChunkSize, kChunkSize, access);
    if (mr == nullptr) {
      int err = errno;
      for (ibv_mr* done : mrs) ibv_dereg_mr(done);
      munmap(p, bytes);
      failed_ = true;
      ClientLog().warn(
          "RDMA {}: rendezvous pool: ibv_reg_mr of chunk {} of {}: {} (ulimit -l?); large "
          "messages go in slots",
          device_, i, chunks_, std::strerror(err));
      return false;
    }
    mrs.push_back(mr);
  }
  base_ = static_cast<uint8_t*>(p);
  mrs_ = std::move(mrs);
  used_.assign(chunks_, 0);
  free_.reserve(chunks_);
  for (uint32_t i = chunks_; i > 0; --i) free_.push_back(i - 1);
  ClientLog().debug("RDMA {}: rendezvous pool of {} x {} KiB registered ({})", device_, chunks_,
                    kChunkSize >> 10,
                    windows_ ? "shown through memory windows" : "never shown to a peer");
  return true;
}

std::optional<uint32_t> RndvPool::Take() {
  std::lock_guard lock(mu_);
  if (!EnsureRegistered() || free_.empty()) return std::nullopt;
  uint32_t c = free_.back();
  free_.pop_back();
  return c;
}

void RndvPool::Give(uint32_t chunk) {
  std::lock_guard lock(mu_);
  free_.push_back(chunk);
}

uint32_t RndvPool::lkey(uint32_t index) const { return mrs_[index]->lkey; }

void RndvPool::ClearPast(uint32_t index, uint32_t n) {
  if (used_[index] > n) std::memset(chunk(index) + n, 0, used_[index] - n);
  used_[index] = n;
}

void RndvPool::Wrote(uint32_t index, uint32_t n) { used_[index] = std::max(used_[index], n); }

uint32_t RndvPool::free_chunks() const {
  std::lock_guard lock(mu_);
  return base_ == nullptr ? chunks_ : static_cast<uint32_t>(free_.size());
}

}  // namespace rdmad::internal
