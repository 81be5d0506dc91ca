// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// SendChunks: the rendezvous chunks one channel's large messages wait in
// for the peer to READ them (wire.h). They belong to the channel alone: its
// own anonymous mappings, registered on its device with remote read, that
// no other channel writes to. So the rkey in a descriptor reaches the bytes
// this channel sent to this peer and nothing else of the process: not
// another channel's messages, not the landing pool (RndvPool, local access
// only), not old data of other peers (fresh mappings are zeroed by the
// kernel and freed with the channel).
//
// Chunks come in segments of kSegmentChunks, each its own registration,
// registered on first need, up to the channel's share; a channel that never
// sends a large message registers nothing. A segment that cannot be
// registered (memlock) is logged once, and Take returns what exists.
//
// Thread safety: none; the channel calls it under its own mutex.

#ifndef RDMAD_CLIENT_SRC_RDMA_SEND_CHUNKS_H_
#define RDMAD_CLIENT_SRC_RDMA_SEND_CHUNKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct ibv_mr;
struct ibv_pd;

namespace rdmad::internal {

class SendChunks {
 public:
  static constexpr uint32_t kSegmentChunks = 8;

  // Up to `share` chunks of chunk_size bytes on pd.
  SendChunks(ibv_pd* pd, std::string device, uint32_t share, uint32_t chunk_size);
  ~SendChunks();
  SendChunks(const SendChunks&) = delete;
  SendChunks& operator=(const SendChunks&) = delete;

  // A free chunk (registering a new segment when every one is taken and the
  // share allows), or nullopt.
  std::optional<uint32_t> Take();
  void Give(uint32_t chunk);

  // Valid for a chunk Take returned.
  uint8_t* chunk(uint32_t index) const;
  uint32_t rkey(uint32_t index) const;

  uint32_t taken() const { return taken_; }

 private:
  struct Segment {
    uint8_t* base = nullptr;
    ibv_mr* mr = nullptr;
  };
  bool Grow();
  uint32_t registered() const { return uint32_t(segments_.size()) * kSegmentChunks; }

  ibv_pd* pd_;
  std::string device_;
  uint32_t share_;
  uint32_t chunk_size_;
  bool failed_ = false;
  uint32_t taken_ = 0;
  std::vector<Segment> segments_;
  std::vector<uint32_t> free_;
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_SEND_CHUNKS_H_
