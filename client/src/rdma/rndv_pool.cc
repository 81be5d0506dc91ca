// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/rndv_pool.h"

#include <infiniband/verbs.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "client/src/client_log.h"

namespace rdmad::internal {

RndvPool::RndvPool(ibv_pd* pd, std::string device, uint32_t chunks)
    : pd_(pd), device_(std::move(device)), chunks_(chunks) {}

RndvPool::~RndvPool() {
  if (mr_ != nullptr) {
    if (int rc = ibv_dereg_mr(mr_); rc != 0) {
      ClientLog().warn("RDMA {}: landing pool: ibv_dereg_mr: {}", device_, std::strerror(rc));
    }
  }
  if (base_ != nullptr) munmap(base_, size_t(chunks_) * kChunkSize);
}

bool RndvPool::EnsureRegistered() {
  if (mr_ != nullptr) return true;
  if (failed_ || chunks_ == 0) return false;
  size_t bytes = size_t(chunks_) * kChunkSize;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    failed_ = true;
    ClientLog().warn(
        "RDMA {}: landing pool: mmap {} bytes: {}; large messages are read into registrations of "
        "their own",
        device_, bytes, std::strerror(errno));
    return false;
  }
  ibv_mr* mr = ibv_reg_mr(pd_, p, bytes, IBV_ACCESS_LOCAL_WRITE);
  if (mr == nullptr) {
    failed_ = true;
    ClientLog().warn(
        "RDMA {}: landing pool: ibv_reg_mr {} bytes: {} (ulimit -l?); large messages are "
        "read into registrations of their own",
        device_, bytes, std::strerror(errno));
    munmap(p, bytes);
    return false;
  }
  base_ = static_cast<uint8_t*>(p);
  mr_ = mr;
  free_.reserve(chunks_);
  for (uint32_t i = chunks_; i > 0; --i) free_.push_back(i - 1);
  ClientLog().debug("RDMA {}: landing pool of {} x {} KiB registered", device_, chunks_,
                    kChunkSize >> 10);
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

uint32_t RndvPool::lkey() const { return mr_->lkey; }

uint32_t RndvPool::free_chunks() const {
  std::lock_guard lock(mu_);
  return mr_ == nullptr ? chunks_ : static_cast<uint32_t>(free_.size());
}

}  // namespace rdmad::internal
