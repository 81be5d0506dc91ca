// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/send_chunks.h"

#include <infiniband/verbs.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "client/src/client_log.h"

namespace rdmad::internal {

SendChunks::SendChunks(ibv_pd* pd, std::string device, uint32_t share, uint32_t chunk_size)
    : pd_(pd), device_(std::move(device)), share_(share), chunk_size_(chunk_size) {}

SendChunks::~SendChunks() {
  size_t bytes = size_t(kSegmentChunks) * chunk_size_;
  for (const Segment& s : segments_) {
    if (int rc = ibv_dereg_mr(s.mr); rc != 0) {
      ClientLog().warn("RDMA {}: rendezvous send chunks: ibv_dereg_mr: {}", device_,
                       std::strerror(rc));
    }
    munmap(s.base, bytes);
  }
}

bool SendChunks::Grow() {
  uint32_t first = registered();
  if (failed_ || first >= share_) return false;
  size_t bytes = size_t(kSegmentChunks) * chunk_size_;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    failed_ = true;
    ClientLog().warn("RDMA {}: rendezvous send chunks: mmap {} bytes: {}; {} chunks in use",
                     device_, bytes, std::strerror(errno), first);
    return false;
  }
  ibv_mr* mr = ibv_reg_mr(pd_, p, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  if (mr == nullptr) {
    failed_ = true;
    ClientLog().warn(
        "RDMA {}: rendezvous send chunks: ibv_reg_mr {} bytes: {} (ulimit -l?); {} chunks in use",
        device_, bytes, std::strerror(errno), first);
    munmap(p, bytes);
    return false;
  }
  segments_.push_back(Segment{static_cast<uint8_t*>(p), mr});
  uint32_t end = std::min(share_, first + kSegmentChunks);
  for (uint32_t i = end; i > first; --i) free_.push_back(i - 1);
  return true;
}

std::optional<uint32_t> SendChunks::Take() {
  if (free_.empty() && !Grow()) return std::nullopt;
  uint32_t c = free_.back();
  free_.pop_back();
  ++taken_;
  return c;
}

void SendChunks::Give(uint32_t chunk) {
  free_.push_back(chunk);
  --taken_;
}

uint8_t* SendChunks::chunk(uint32_t index) const {
  return segments_[index / kSegmentChunks].base + size_t(index % kSegmentChunks) * chunk_size_;
}

uint32_t SendChunks::rkey(uint32_t index) const {
  return segments_[index / kSegmentChunks].mr->rkey;
}

}  // namespace rdmad::internal
