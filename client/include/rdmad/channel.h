// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Channels: a reliable, message-oriented connection between two
// applications, over an RDMA queue pair or, when either side has no RDMA
// path, over TCP - with the same API. rdmad plans and brokers a channel
// (rdmad/client.h: Client::Connect, Client::Listen); the data then flows
// between the two processes without the daemons.
//
// Thread safety: a Channel may be used from two threads at once, one
// sending (Send, Write, Read) and one receiving (Recv). Close() and info()
// may be called from any thread; Close() wakes blocked calls, which then
// return CANCELLED. Status codes (both transports, see docs/wire.md):
// UNAVAILABLE once the peer closed the channel or died, or the QP failed
// (with the reason); CANCELLED after a local Close(); OUT_OF_RANGE for a
// range outside a region (the channel stays usable); DEADLINE_EXCEEDED for a
// Recv timeout. A MemoryRegion is immutable after creation and may be
// used by any number of threads and channels on the same device; it must
// outlive the operations that use it.

#ifndef RDMAD_CHANNEL_H_
#define RDMAD_CHANNEL_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rdmad/export.h"
#include "rdmad/status.h"

namespace rdmad {

enum class ChannelTransport { kRdma, kTcp };

// "RDMA" or "TCP".
RDMAD_EXPORT const char* ChannelTransportName(ChannelTransport transport);

// A channel id as rdmad, rdmactl and the library print it: "0x" and 16
// lower-case hex digits ("0x00000000000004d2").
RDMAD_EXPORT std::string FormatChannelId(uint64_t id);
// A channel id as a user gives it: "0x" and hex digits, or decimal digits,
// or hex digits that include a-f (as FormatChannelId's without "0x").
// INVALID_ARGUMENT for anything else, or 0.
RDMAD_EXPORT StatusOr<uint64_t> ParseChannelId(std::string_view text);

// A region's key on another device of its host, for a channel's further
// rails (docs/topology.md, "Rails in a channel").
struct RailKey {
  uint32_t device_tag = 0;  // the device, as the channel's handshake names it (not 0)
  uint32_t rkey = 0;
  // Spelled out: the public headers stay C++17.
  friend bool operator==(const RailKey& a, const RailKey& b) {
    return a.device_tag == b.device_tag && a.rkey == b.rkey;
  }
};

// What a peer needs to Write into or Read from a region: travels as a
// message (Serialize / Parse, little endian: 24 bytes, and 8 more per rail
// key).
struct RDMAD_EXPORT RegionDescriptor {
  uint64_t address = 0;  // the remote virtual address (RDMA) or region id (TCP)
  uint64_t length = 0;
  uint32_t rkey = 0;
  uint32_t reserved = 0;
  // The same region on the host's other devices (at most 7): a channel
  // with rails there stripes large transfers over them.
  std::vector<RailKey> rail_keys;

  std::vector<uint8_t> Serialize() const;
  // INVALID_ARGUMENT unless bytes holds exactly one serialized descriptor.
  static StatusOr<RegionDescriptor> Parse(const void* bytes, size_t size);
};

// What a peer holding a region's descriptor may do with it.
enum class MemoryAccess : uint8_t {
  kReadWrite,   // Write into it and Read from it
  kRemoteRead,  // only Read from it (a KV cache exposed to be pulled)
  // Nothing through the region's own descriptor: for Send, RecvInto and the
  // local side of Write/Read, and for Channel::Expose, which shows it to
  // one channel's peer at a time.
  kLocal,
};

// Registered memory, on the channel's device (host memory or a dmabuf).
// On RDMA it is registered once per process and device: any channel on the
// device can use it, and registering the same range with the same access
// again (from any channel on that device) shares the one registration.
class RDMAD_EXPORT MemoryRegion {
 public:
  virtual ~MemoryRegion() = default;
  virtual uint8_t* data() const = 0;  // nullptr for a dmabuf region
  virtual size_t size() const = 0;
  // For the peer: lets it Write/Read [0, size()), as access() allows.
  virtual RegionDescriptor descriptor() const = 0;
  virtual MemoryAccess access() const = 0;
};

// Everything known about how a channel was set up, for logs and rdmactl.
struct ChannelInfo {
  uint64_t id = 0;   // the daemons' channel id
  std::string peer;  // the peer daemon's name or address
  std::string service;
  ChannelTransport transport = ChannelTransport::kTcp;
  std::string transport_reason;  // why RDMA or why TCP
  std::string local_device, peer_device;
  uint32_t local_port = 0, peer_port = 0;
  uint32_t local_gid_index = 0, peer_gid_index = 0;
  std::string local_gid, peer_gid;  // IPv6 text
  std::string gid_type;             // "RoCE v2", ...
  uint32_t local_qpn = 0, peer_qpn = 0;
  uint32_t mtu = 0, local_active_mtu = 0, peer_active_mtu = 0;
  uint32_t send_depth = 0, recv_depth = 0;
  uint32_t slot_size = 0;           // bytes per receive slot
  double handshake_ms = 0;          // Connect/Accept to ready
  std::string tcp_local, tcp_peer;  // "192.0.2.1:40123" for TCP channels
};

// One rail of an RDMA channel (docs/topology.md, "Rails in a channel"):
// the first is the one messages take; large Write/Read are striped over
// every rail that is up.
struct ChannelRail {
  std::string local_device, peer_device;
  uint32_t weight = 1;         // its share of a striped transfer (0: the first rail, outside
                               // the process's rail plan, takes none while another is up)
  uint64_t bytes_written = 0;  // by RDMA WRITE on it
  uint64_t bytes_read = 0;     // by RDMA READ on it
  bool up = true;
  std::string reason;  // why it is out, when it is
};

inline constexpr std::chrono::milliseconds kForever{-1};

// The largest notification a batch may carry (Channel::Submit).
inline constexpr size_t kMaxNotificationBytes = 256;

struct TransferOp;
// OK when every op has a local region and both its ranges fit
// (INVALID_ARGUMENT or OUT_OF_RANGE naming the op otherwise).
RDMAD_EXPORT Status ValidateTransferOps(const std::vector<TransferOp>& ops);
// OK for at most kMaxNotificationBytes (INVALID_ARGUMENT otherwise).
RDMAD_EXPORT Status ValidateNotification(std::string_view notification);

// One one-sided operation of a batch (Channel::Submit): len bytes between
// local[local_offset] and the peer's region at remote_offset.
struct TransferOp {
  enum class Kind : uint8_t { kWrite, kRead };
  Kind kind = Kind::kWrite;  // kWrite: local -> remote; kRead: remote -> local
  const MemoryRegion* local = nullptr;
  size_t local_offset = 0;
  RegionDescriptor remote;
  uint64_t remote_offset = 0;
  size_t len = 0;
};

// A batch of one-sided operations in flight (Channel::Submit). It is done
// when every operation has completed, or when one failed.
//
// Thread safety: Wait and Poll may be called from any thread. A Transfer
// must not outlive its channel, and the regions of its operations must
// outlive it (or its completion).
class RDMAD_EXPORT Transfer {
 public:
  virtual ~Transfer() = default;
  // Until the batch is done: OK, or the first failure (the channel's error,
  // UNAVAILABLE once it failed or closed). DEADLINE_EXCEEDED when it is
  // still in flight after timeout (the batch goes on).
  virtual Status Wait(std::chrono::milliseconds timeout = kForever) = 0;
  // Without blocking: false while in flight; true once done (*status, if
  // given, is then Wait's answer).
  virtual bool Poll(Status* status = nullptr) = 0;
  // The index (in Submit's list) of the operation that failed; -1 if none
  // did (yet), or the failure was not one operation's (the channel closed).
  virtual int failed_op() const = 0;
};

// A batch of one-sided operations checked and turned into work requests
// once (Channel::Prepare), then started as often as wanted with Post: the
// prep/post split of NIXL's transfer requests, for a batch that repeats (a
// KV-cache layer's blocks, a pipeline's buffers). Between Posts it is the
// Transfer of the last one: Wait, Poll and failed_op answer for it; before
// the first, Wait and Poll give FAILED_PRECONDITION.
//
// Thread safety: Post from one thread at a time, and not while another
// thread waits on it; otherwise as Transfer. It must not outlive its
// channel, and the regions of its operations must outlive it.
class RDMAD_EXPORT PreparedTransfer : public Transfer {
 public:
  // Starts the operations, in order, with a notification as Submit's
  // (empty: none). FAILED_PRECONDITION, with nothing started, while the
  // last Post is in flight; INVALID_ARGUMENT for a notification too long;
  // else as Submit: the channel's error when nothing could start.
  virtual Status Post(std::string_view notification) = 0;
  Status Post() { return Post(std::string_view()); }
};

class RDMAD_EXPORT Channel {
 public:
  virtual ~Channel() = default;

  virtual const ChannelInfo& info() const = 0;

  // Sends one message of up to 1 GiB (0 allowed). Returns when buf may be
  // reused. Flow control keeps the peer's buffers from overflowing, so a
  // slow receiver slows the sender down instead of failing it: a message
  // larger than what the channel buffers (2 MiB on RDMA) returns only as the
  // peer's Recv takes it.
  virtual Status Send(const void* buf, size_t len) = 0;
  // The same from registered memory. On the RDMA path a large message
  // (more than two of the channel's slots) from a region that grants remote
  // read is read by the peer straight from the region, with no copy, through
  // a memory window over the message that this closes before it returns
  // (once the peer's Recv has read it); from a kLocal region it is copied as
  // above. A small one from host memory is copied and this returns at once
  // (a dmabuf's is sent from the region, and this returns when it has gone).
  virtual Status Send(const MemoryRegion& region, size_t offset, size_t len) = 0;
  // Sends one message only if that needs no waiting: the channel's buffers
  // (the peer's credits and send slots on RDMA, the socket's send buffer on
  // TCP) have room for all of it now. Else DEADLINE_EXCEEDED with nothing
  // sent: Send it (which waits), or try again later (rdmad.aio's send hands
  // it to a thread). OUT_OF_RANGE for a message that never goes without
  // waiting (on RDMA more than two slots, which go by rendezvous);
  // UNIMPLEMENTED from a Channel that cannot tell.
  virtual Status TrySend(const void* buf, size_t len);

  // Receives the next whole message. DEADLINE_EXCEEDED after timeout.
  virtual StatusOr<std::vector<uint8_t>> Recv(std::chrono::milliseconds timeout = kForever) = 0;
  // Receives the next whole message into [offset, offset + max_len) of a
  // registered region and returns its size. On RDMA the large pieces are
  // read straight into the region (no copy, no allocation). The timeout is
  // for the message to begin: once its first bytes have been taken it is
  // received whole (or the channel fails). A message longer than max_len
  // fills max_len bytes, the rest is dropped, and the call returns
  // OUT_OF_RANGE with both sizes; the next call gets the next message.
  // OUT_OF_RANGE for a range outside the region; INVALID_ARGUMENT for a
  // region of another transport or device. The same thread rules as Recv.
  virtual StatusOr<size_t> RecvInto(const MemoryRegion& region, size_t offset, size_t max_len,
                                    std::chrono::milliseconds timeout = kForever);

  // Registers [addr, addr+len) for Send, Write, Read and for the peer,
  // which may Write and Read it.
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(void* addr, size_t len) {
    return RegisterMemory(addr, len, MemoryAccess::kReadWrite);
  }
  // The same with the peer's access: with kRemoteRead a peer's Write into
  // it fails (as a remote access error, which ends the channel on both
  // transports). On RDMA the same range and access registered again, from
  // any channel on the device, is the same memory region (one rkey),
  // deregistered when its last MemoryRegion goes.
  virtual StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(void* addr, size_t len,
                                                                 MemoryAccess access) = 0;
  // Shows region to this channel's peer alone, with access (kReadWrite or
  // kRemoteRead, not more than the region was registered with unless it is
  // kLocal), until Revoke or the channel's end. The descriptor returned
  // opens the region on this channel only, whatever the region's own: on
  // RDMA it is a type 2 memory window bound to the channel's QP, on TCP a
  // key of this channel's. The narrow way to share memory: register it
  // kLocal, Expose it to the channel that needs it, Revoke when done.
  // UNIMPLEMENTED on an RDMA device without type 2 memory windows (and for
  // a dmabuf); INVALID_ARGUMENT for kLocal or a wider access.
  virtual StatusOr<RegionDescriptor> Expose(const MemoryRegion& region, MemoryAccess access) = 0;
  // Read-only, the narrow default.
  StatusOr<RegionDescriptor> Expose(const MemoryRegion& region) {
    return Expose(region, MemoryAccess::kRemoteRead);
  }
  // Ends an Expose: once it returns, the peer's accesses with that
  // descriptor fail (as remote access errors). NOT_FOUND for a descriptor
  // this channel has not exposed.
  virtual Status Revoke(const RegionDescriptor& exposed) = 0;
  // Registers a dmabuf (GPU memory); UNIMPLEMENTED where the device or
  // rdma-core cannot (and always on TCP).
  virtual StatusOr<std::unique_ptr<MemoryRegion>> RegisterDmabuf(int fd, uint64_t offset,
                                                                 size_t len) = 0;

  // One-sided: copies len bytes from local[local_offset] to the peer's
  // region at remote_offset (Write), or the other way (Read). Returns when
  // the operation has completed. OUT_OF_RANGE when a range does not fit.
  virtual Status Write(const MemoryRegion& local, size_t local_offset,
                       const RegionDescriptor& remote, uint64_t remote_offset, size_t len) = 0;
  virtual Status Read(const MemoryRegion& local, size_t local_offset,
                      const RegionDescriptor& remote, uint64_t remote_offset, size_t len) = 0;

  // Starts ops, in order, and returns their handle; many batches may be in
  // flight at once. On RDMA the work requests are chained and posted with
  // one doorbell, only the last signaled, and Submit blocks only while the
  // send queue is full. On a channel with rails (rails()), each op of at
  // least 128 KiB is striped over them as a Write is, and a rail failing
  // mid-batch costs no error (docs/topology.md, "Rails in a channel").
  // INVALID_ARGUMENT (naming the op) for an op without
  // a region, OUT_OF_RANGE for a range that does not fit: then nothing was
  // started. This default runs the ops one by one with Write and Read and
  // returns a finished handle (the TCP channel does so, with the same
  // ordering); an op it cannot run fails the transfer there.
  StatusOr<std::unique_ptr<Transfer>> Submit(const std::vector<TransferOp>& ops) {
    return Submit(ops, std::string_view());
  }
  // The same with a notification (1..kMaxNotificationBytes bytes; empty:
  // none): the peer receives it with RecvNotification, apart from messages,
  // only once every byte of the batch is in place at the peer (its writes
  // placed, its reads done). On RDMA it is a SEND after the batch's work
  // requests on the same queue pair (fenced after reads), so the transfer
  // costs no extra round trip (a striped batch's waits for its rails).
  // INVALID_ARGUMENT for a longer one; this default is UNIMPLEMENTED for a
  // non-empty one (a transport of its own must override).
  virtual StatusOr<std::unique_ptr<Transfer>> Submit(const std::vector<TransferOp>& ops,
                                                     std::string_view notification);
  // Checks ops as Submit does (INVALID_ARGUMENT or OUT_OF_RANGE naming the
  // op, nothing kept) and keeps them ready for PreparedTransfer::Post,
  // which runs them as Submit would, with the same ordering, notification
  // and rails. On an RDMA channel without rails the work requests are built
  // here, once: a Post takes the lock, posts them with one doorbell and
  // allocates nothing. This default Posts with Submit.
  virtual StatusOr<std::unique_ptr<PreparedTransfer>> Prepare(const std::vector<TransferOp>& ops);
  // The peer's next notification, in the order they were sent.
  // DEADLINE_EXCEEDED after timeout; UNAVAILABLE once the peer closed the
  // channel and every notification before its close was received. It may
  // run on a thread of its own, beside the sending and receiving ones.
  virtual StatusOr<std::vector<uint8_t>> RecvNotification(
      std::chrono::milliseconds timeout = kForever);

  // Event loops (epoll, asyncio) without a thread per call. The completion
  // fd becomes readable when the channel may have news: a whole message for
  // Recv, a notification for RecvNotification, a Transfer done, or the
  // channel failed or closed. The loop:
  //   1. Arm(): true when nothing is waiting, and the fd will become
  //      readable when something happens; false when something already
  //      waits (or the channel is no longer usable: status() says why).
  //   2. On true, wait until the fd is readable (poll, epoll, add_reader).
  //   3. Take what is there with the non-blocking calls - Recv(0ms),
  //      RecvNotification(0ms), Transfer::Poll - and go back to 1.
  // Readable is a hint, not a promise: step 3 may find nothing. The fd
  // belongs to the channel (never read or close it) and lives as long as
  // the channel. Nothing runs in the background: the calls in step 3 and
  // Arm make the progress. UNIMPLEMENTED for a transport without one.
  virtual StatusOr<int> CompletionFd();
  virtual bool Arm();

  // OK while usable; else why not (the QP error, "closed by peer", ...).
  virtual Status status() const = 0;
  // An RDMA channel's rails, the first first; none for TCP. Any thread.
  virtual std::vector<ChannelRail> rails() const { return {}; }
  // Closes both directions; the peer's calls then fail with the reason.
  // Idempotent and best-effort (a peer that cannot be told learns from its
  // daemon), so there is nothing to report.
  virtual void Close() = 0;
};

}  // namespace rdmad

#endif  // RDMAD_CHANNEL_H_
