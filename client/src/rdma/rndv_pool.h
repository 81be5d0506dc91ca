// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RndvPool: the rendezvous chunks of one process on one device. A message
// larger than a few receive slots does not travel through the peer's ring:
// the sender copies it into chunks of this pool (or points at its own
// registered region), sends their descriptors, and the receiver RDMA READs
// them into chunks of its own pool (wire.h). The pool is shared by every
// channel of the process on the device, so a channel's own registered
// memory stays its small ring and staging area, whatever its messages'
// sizes. It is one anonymous mapping, created on first use, with one
// registration per chunk, for local access only: no rkey of the pool opens
// anything. A peer reaches a chunk only through a type 2 memory window
// that the sending channel binds to its own QP over the piece it describes
// and invalidates once the peer reports the piece read, before the chunk
// goes back to the pool (channel_windows.cc). The chunk's own registration
// bounds the window even on a device that checks a window's range against
// its registration alone (Soft-RoCE does), and ClearPast() zeroes whatever
// an earlier use left past the piece: a peer reads only what it was sent,
// only until it says it is done, and never a byte meant for another peer.
// On a device without such windows (windows() false) the pool serves only
// as the destination of READs, and senders do not describe chunks at all.
//
// A channel holds at most kChannelShare chunks per direction, so one busy
// channel cannot take the whole pool; when the pool is empty the caller
// falls back (eager fragments on the sending side, a registration of the
// destination on the receiving side), so no channel ever waits on
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
  static constexpr uint32_t kChannelShare = 32;    // per channel and direction

  // chunks: the pool's size (tests make it small); windows: the device
  // binds type 2 memory windows (RdmaDevice::memory_windows).
  RndvPool(ibv_pd* pd, std::string device, uint32_t chunks = kDefaultChunks, bool windows = false);
  ~RndvPool();
  RndvPool(const RndvPool&) = delete;
  RndvPool& operator=(const RndvPool&) = delete;

  // A free chunk, or nullopt when none is free or the pool cannot be
  // registered (logged once; callers fall back).
  std::optional<uint32_t> Take();
  void Give(uint32_t chunk);

  // Valid for a chunk Take returned, while it is taken.
  uint8_t* chunk(uint32_t index) const { return base_ + size_t(index) * kChunkSize; }
  uint32_t lkey(uint32_t index) const;
  // The chunk's registration, which windows are bound over.
  ibv_mr* mr(uint32_t index) const { return mrs_[index]; }
  bool windows() const { return windows_; }
  // The chunk is to show n bytes to a peer: zeroes what an earlier use
  // (a piece sent, or a READ into it) left past them.
  void ClearPast(uint32_t index, uint32_t n);
  // n bytes were written into the chunk by a READ.
  void Wrote(uint32_t index, uint32_t n);
  uint32_t free_chunks() const;
  uint32_t chunks() const { return chunks_; }

 private:
  bool EnsureRegistered();  // mu_ held

  ibv_pd* pd_;
  std::string device_;
  uint32_t chunks_;
  bool windows_;
  mutable std::mutex mu_;
  bool failed_ = false;
  uint8_t* base_ = nullptr;
  std::vector<ibv_mr*> mrs_;    // one per chunk, once registered
  std::vector<uint32_t> used_;  // per chunk: bytes that may be non-zero (its owner's alone)
  std::vector<uint32_t> free_;
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_RNDV_POOL_H_
