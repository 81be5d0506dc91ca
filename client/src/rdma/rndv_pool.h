// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RndvPool: the landing chunks of one process on one device. A message
// larger than a few receive slots does not travel through the peer's ring:
// the sender copies it into chunks of its channel's own (send_chunks.h),
// sends their descriptors, and the receiver RDMA READs them into chunks of
// this pool (wire.h). The pool is shared by every channel of the process
// on the device, so a channel's own registered memory stays its small
// ring and staging area, whatever its messages' sizes. It is one anonymous
// mapping registered once with local access only (no peer can reach it),
// created on first use.
//
// A channel holds at most kChannelShare chunks, so one busy channel cannot
// take the whole pool; when the pool is empty the receiver reads into a
// registration of the destination instead, so no channel ever waits on
// another's chunks.
//
// Thread safety: all methods may be called from any thread.

#ifndef RDMAD_CLIENT_SRC_RDMA_RNDV_POOL_H_
#define RDMAD_CLIENT_SRC_RDMA_RNDV_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct ibv_mr;
struct ibv_pd;

namespace rdmad::internal {

class RndvPool {
 public:
  static constexpr uint32_t kChunkSize = 64u << 10;
  static constexpr uint32_t kDefaultChunks = 256;  // 16 MiB per process and device
  static constexpr uint32_t kChannelShare = 32;    // per channel, landing or sending

  // chunks: the pool's size (tests make it small).
  RndvPool(ibv_pd* pd, std::string device, uint32_t chunks = kDefaultChunks);
  ~RndvPool();
  RndvPool(const RndvPool&) = delete;
  RndvPool& operator=(const RndvPool&) = delete;

  // A free chunk, or nullopt when none is free or the pool cannot be
  // registered (logged once; callers fall back).
  std::optional<uint32_t> Take();
  void Give(uint32_t chunk);

  // Valid for a chunk Take returned.
  uint8_t* chunk(uint32_t index) const { return base_ + size_t(index) * kChunkSize; }
  uint32_t lkey() const;
  uint32_t free_chunks() const;
  uint32_t chunks() const { return chunks_; }

 private:
  bool EnsureRegistered();  // mu_ held

  ibv_pd* pd_;
  std::string device_;
  uint32_t chunks_;
  mutable std::mutex mu_;
  bool failed_ = false;
  uint8_t* base_ = nullptr;
  ibv_mr* mr_ = nullptr;
  std::vector<uint32_t> free_;
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_RNDV_POOL_H_
