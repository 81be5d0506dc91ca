// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ChannelResources: the verbs objects of one RDMA channel - a CQ with its
// completion channel (its own, or a batch's CompletionGroup's, shared with
// the batch's other channels), an RC QP using it for both queues,
// the receive ring (slots of slot_size bytes, registered) and the send
// staging area (registered chunks for messages from unregistered buffers) -
// plus the QP state transitions. Destruction moves the QP to ERR,
// acknowledges outstanding CQ events and destroys QP, CQ, completion
// channel and memory regions, in that order (a group member leaves its
// group instead of destroying CQ and completion channel).
//
// The ring starts small, in one piece of the device's channel slab
// (kInitialRingSlots; channel_slab.h, shared registrations): that is what a
// new channel pins, so connecting many channels costs little and an idle
// one holds little. The staging area starts empty: the first send that
// needs a chunk takes one, a piece of the slab too (a channel that only
// sends inline data or from registered memory never pins one). The channel
// grows each to its full size (recv_depth slots; staging_max chunks) once
// its traffic asks for it (GrowRing, GrowStaging), in one more mapping
// each; a growth that fails (RLIMIT_MEMLOCK) leaves the smaller one
// working.
//
// Thread safety: none of its own; the owner serializes (ibv_post_* and
// ibv_poll_cq themselves are thread safe).

#ifndef RDMAD_CLIENT_SRC_RDMA_RESOURCES_H_
#define RDMAD_CLIENT_SRC_RDMA_RESOURCES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "client/src/rdma/completion_group.h"
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
  kWindow = 10,   // the send window's BIND_MW or LOCAL_INV (channel_send_window.cc)
  kWake = 11      // a zero-length RDMA WRITE that wakes a sleeper (WakeBlockedSleeper)
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
inline constexpr uint32_t kUnsignaledIndex = 1;  // kSend's or kControl's index, unsignaled

// A signaled RDMA WRITE (write) or READ of n bytes between local_addr
// (lkey) and remote_addr (rkey): *wr's one scatter/gather entry is *sge.
void FillOneSided(bool write, uint64_t local_addr, uint32_t n, uint32_t lkey, uint64_t remote_addr,
                  uint32_t rkey, uint64_t wr_id, ibv_sge* sge, ibv_send_wr* wr);

// Where each slot of a ring or staging area lives: slots come in runs, each
// run in one registered mapping that ChannelResources keeps.
class SlotTable {
 public:
  void Append(uint8_t* base, uint32_t lkey, uint32_t count, uint32_t slot_size);
  uint8_t* at(uint32_t index) const { return slots_[index].addr; }
  uint32_t lkey(uint32_t index) const { return slots_[index].lkey; }
  uint32_t size() const { return static_cast<uint32_t>(slots_.size()); }

 private:
  struct Slot {
    uint8_t* addr;
    uint32_t lkey;
  };
  std::vector<Slot> slots_;
};

struct ChannelResources {
  // Four slots: a sender may then post a notification and a message or
  // three messages before the receiving application takes any (with three,
  // one thread that sends and receives on two channels can wait on itself):
  // 16 KiB with 4 KiB slots. The staging area's first chunk comes with the
  // first staged send, the rest when a staged send finds it in flight.
  static constexpr uint32_t kInitialRingSlots = 4;

  // Opens plan.device (through the cache), creates everything, moves the QP
  // to INIT and posts every receive slot. With a group that has room, the
  // QP uses the group's CQ (a member of it) instead of one of its own.
  static StatusOr<std::unique_ptr<ChannelResources>> Create(
      const RdmaPlan& plan, std::shared_ptr<CompletionGroup> group = nullptr);
  // A further rail's: rail's device, port and GID index with base's QP
  // attributes; CQ, completion channel and QP (one receive, no ring nor
  // staging: the rail carries RDMA WRITE and READ only), in INIT.
  static StatusOr<std::unique_ptr<ChannelResources>> CreateRail(const RdmaPlan& base,
                                                                const RailPlan& rail);
  ~ChannelResources();

  Status PostRecv(uint32_t slot);
  uint8_t* slot(uint32_t index) const { return ring_slots.at(index); }
  uint8_t* chunk(uint32_t index) const { return staging.at(index); }
  uint32_t ring_size() const { return ring_slots.size(); }  // slots posted at least once
  uint32_t staging_chunks() const { return staging.size(); }
  // The ring to recv_depth slots, in a new registered mapping; the
  // staging area to its first chunk (a piece of the slab) when it has none,
  // else to staging_max chunks in a new registered mapping: the first new
  // index (the new ones follow it, up to the full size), or an error and no
  // change (the memory cannot be had, or it is full already). The caller
  // posts new ring slots.
  StatusOr<uint32_t> GrowRing() { return Grow(ring_slots, recv_depth); }
  StatusOr<uint32_t> GrowStaging();
  // The ring's and the staging area's memory (first piece and growth), in
  // bytes.
  size_t registered_bytes() const;

  // INIT -> RTR towards remote with the given path MTU (bytes), then RTS.
  Status ToRtr(const RdmaEndpoint& remote, uint32_t path_mtu);
  // The initiator depth (max_rd_atomic) is this device's limit capped by
  // the peer QP's responder resources (NegotiatedReadDepth; 0: unknown).
  Status ToRts(uint32_t local_psn, uint32_t peer_responder_resources);
  // Makes the completion channel's fd non-blocking (blocking_events false).
  Status NonBlockingEvents();

  RdmaPlan plan;
  std::shared_ptr<RdmaDevice> device;
  ibv_comp_channel* comp_channel = nullptr;
  // The completion channel's fd blocks: a channel's own (its waits sleep in
  // a read of it) until Channel::CompletionFd makes it non-blocking; a
  // rail's never does.
  bool blocking_events = false;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  // A member of a batch's group: cq and comp_channel are the group's (never
  // blocking), completions come through group->Poll, and the doorbell
  // rings when another member's poll set some aside for this QP: the
  // group's, taken at the first sleep or CompletionFd (-1 before, -2 if it
  // could not be made).
  std::shared_ptr<CompletionGroup> group;
  int doorbell = -1;
  uint32_t group_entries = 0;  // reserved in the group's CQ
  // The first ring slots; the first staging chunk, once a send needed it.
  ChannelSlab::Piece first_piece, first_chunk;
  // The ring's and the staging area's growth, each a mapping of its own.
  struct OwnBuffer {
    MappedBuffer mem;
    std::unique_ptr<RdmaMemoryRegion> mr;
  };
  std::vector<OwnBuffer> buffers;
  SlotTable ring_slots, staging;
  RelaxedOrdering relaxed_ordering;
  uint32_t send_depth = 0, recv_depth = 0, slot_size = 0;
  uint32_t staging_max = 0;  // chunks
  uint32_t max_inline = 0;   // what the QP granted
  bool roce = true;          // Ethernet link layer: GRH addressing
  uint32_t active_mtu = 0;   // bytes
  uint32_t lid = 0;
  uint64_t max_msg_size = 0;  // the port's max_msg_sz
  uint32_t unacked_cq_events = 0;

 private:
  ChannelResources() = default;
  // The device open and its port ACTIVE: the port's facts filled in.
  static StatusOr<std::unique_ptr<ChannelResources>> Open(const RdmaPlan& plan);
  Status CreateQueues(bool blocking_events, std::shared_ptr<CompletionGroup> group = nullptr);
  Status CreateQp();
  Status RegisterBuffers();
  // A new registered mapping of slots * slot_size bytes, kept in buffers.
  StatusOr<OwnBuffer*> AddBuffer(uint32_t slots);
  StatusOr<uint32_t> Grow(SlotTable& table, uint32_t to);
  Status ToInit();
};

// "1024" for IBV_MTU_1024; 0 if not an ibv_mtu.
uint32_t IbvMtuBytes(int ibv_mtu);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_RESOURCES_H_
