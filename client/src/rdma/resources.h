// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ChannelResources: the verbs objects of one RDMA channel - a CQ with its
// completion channel (non-blocking fd), an RC QP using it for both queues,
// the receive ring (recv_depth slots of slot_size bytes, registered) and
// the send staging area (registered chunks for messages from unregistered
// buffers) - plus the QP state transitions. Destruction moves the QP to
// ERR, acknowledges outstanding CQ events and destroys QP, CQ, completion
// channel and memory regions, in that order.
//
// Thread safety: none of its own; the owner serializes (ibv_post_* and
// ibv_poll_cq themselves are thread safe).

#ifndef RDMAD_CLIENT_SRC_RDMA_RESOURCES_H_
#define RDMAD_CLIENT_SRC_RDMA_RESOURCES_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "client/src/rdma/device.h"
#include "client/src/rdma/memory_region.h"
#include "common/endpoint.h"

struct ibv_comp_channel;
struct ibv_cq;
struct ibv_qp;
struct ibv_sge;
struct ibv_send_wr;

namespace rdmad::internal {

// Anonymous memory, page aligned, unmapped on destruction.
class MappedBuffer {
 public:
  static StatusOr<MappedBuffer> Allocate(size_t size);
  MappedBuffer() = default;
  MappedBuffer(MappedBuffer&& other) noexcept { *this = std::move(other); }
  MappedBuffer& operator=(MappedBuffer&& other) noexcept;
  ~MappedBuffer();
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// The wr_id of every work request: kind in the top byte, an index below.
enum class WrKind : uint8_t {
  kRecv = 1,
  kSend = 2,
  kStaged = 3,
  kZeroCopy = 4,
  kControl = 5,
  kOneSided = 6,
  kBatch = 7,     // a Submit batch's work request: batch id (24 bits), WR index (32)
  kRndvRead = 8,  // an RDMA READ of the peer's rendezvous descriptor
  kExpose = 9,    // Expose's BIND_MW (signaled, waited for)
  kWindow = 10    // the send window's BIND_MW or LOCAL_INV (channel_send_window.cc)
};
inline uint64_t MakeWrId(WrKind kind, uint32_t index) { return (uint64_t(kind) << 56) | index; }
inline WrKind WrIdKind(uint64_t wr_id) { return static_cast<WrKind>(wr_id >> 56); }
inline uint32_t WrIdIndex(uint64_t wr_id) { return static_cast<uint32_t>(wr_id); }
inline uint64_t MakeBatchWrId(uint32_t batch, uint32_t index) {
  return MakeWrId(WrKind::kBatch, index) | (uint64_t(batch & 0xffffff) << 32);
}
inline uint32_t WrIdBatch(uint64_t wr_id) { return static_cast<uint32_t>(wr_id >> 32) & 0xffffff; }
// A signaled SEND (kSend, kStaged, kZeroCopy, kControl) or one-sided op
// (kOneSided) also stands for the
// unsignaled inline SENDs posted just before it (RC completes in order):
// how many, in bits 32..47.
inline uint64_t WithCovered(uint64_t wr_id, uint32_t covered) {
  return wr_id | (uint64_t(covered & 0xffff) << 32);
}
inline uint32_t WrIdCovered(uint64_t wr_id) { return static_cast<uint32_t>(wr_id >> 32) & 0xffff; }
inline constexpr uint32_t kUnsignaledIndex = 1;  // kSend's index when posted unsignaled

// A signaled RDMA WRITE (write) or READ of n bytes between local_addr
// (lkey) and remote_addr (rkey): *wr's one scatter/gather entry is *sge.
void FillOneSided(bool write, uint64_t local_addr, uint32_t n, uint32_t lkey, uint64_t remote_addr,
                  uint32_t rkey, uint64_t wr_id, ibv_sge* sge, ibv_send_wr* wr);

struct ChannelResources {
  // Opens plan.device (through the cache), creates everything, moves the QP
  // to INIT and posts every receive slot.
  static StatusOr<std::unique_ptr<ChannelResources>> Create(const RdmaPlan& plan);
  // A further rail's: rail's device, port and GID index with base's QP
  // attributes; CQ, completion channel and QP (one receive, no ring nor
  // staging: the rail carries RDMA WRITE and READ only), in INIT.
  static StatusOr<std::unique_ptr<ChannelResources>> CreateRail(const RdmaPlan& base,
                                                                const RailPlan& rail);
  ~ChannelResources();

  Status PostRecv(uint32_t slot);
  uint8_t* slot(uint32_t index) const { return ring_mem.data() + size_t(index) * slot_size; }
  uint8_t* chunk(uint32_t index) const { return staging_mem.data() + size_t(index) * slot_size; }

  // INIT -> RTR towards remote with the given path MTU (bytes), then RTS.
  Status ToRtr(const RdmaEndpoint& remote, uint32_t path_mtu);
  Status ToRts(uint32_t local_psn);

  RdmaPlan plan;
  std::shared_ptr<RdmaDevice> device;
  ibv_comp_channel* comp_channel = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  MappedBuffer ring_mem, staging_mem;
  std::unique_ptr<RdmaMemoryRegion> ring, staging;
  RelaxedOrdering relaxed_ordering;
  uint32_t send_depth = 0, recv_depth = 0, slot_size = 0, staging_chunks = 0;
  uint32_t max_inline = 0;  // what the QP granted
  bool roce = true;         // Ethernet link layer: GRH addressing
  uint32_t active_mtu = 0;  // bytes
  uint32_t lid = 0;
  uint64_t max_msg_size = 0;  // the port's max_msg_sz
  uint32_t unacked_cq_events = 0;

 private:
  ChannelResources() = default;
  // The device open and its port ACTIVE: the port's facts filled in.
  static StatusOr<std::unique_ptr<ChannelResources>> Open(const RdmaPlan& plan);
  Status CreateQueues();
  Status CreateQp();
  Status RegisterBuffers();
  Status ToInit();
};

// "1024" for IBV_MTU_1024; 0 if not an ibv_mtu.
uint32_t IbvMtuBytes(int ibv_mtu);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_RESOURCES_H_
