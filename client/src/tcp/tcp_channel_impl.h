// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// TcpChannel: the Channel API over one connected TCP socket (the fallback
// when either side has no RDMA path). Frames are those of tcp_frame.h.
//
// A background I/O thread reads every frame from the peer, blocking in
// recv() (an idle channel costs next to no CPU: the read wakes every
// kAbortQuiet to see whether the daemon ended the channel):
//   DATA       -> the receive queue that Recv pops. When the queue holds
//                 more than kRecvQueueBytes the thread stops reading the
//                 socket, so TCP flow control slows the sender down. While
//                 one of this side's Write/Read waits for its answer the
//                 thread reads on up to kRecvQueueHardBytes, so that the
//                 answer is not stuck behind messages nobody receives.
//   WRITE      -> copied into the registered region, answered with ACK.
//   READ_REQ   -> answered with READ_RESP from the registered region.
//   ACK, READ_RESP -> complete this side's waiting Write / Read.
//   CLOSE      -> the peer closed the channel.
// Write and Read send the request and wait for the answer.
//
// Errors (the channel then stays failed; status() says why):
//   CANCELLED    this side called Close() (blocked calls wake with it);
//   UNAVAILABLE  "closed by peer[: reason]" after the peer's Close(), or
//                "connection lost: ..." when the connection broke (the
//                peer process died: EOF, ECONNRESET, keepalive timeout),
//                or the daemon's reason given to Abort();
//   DATA_LOSS    the peer sent a malformed frame ("malformed ... frame");
//   NOT_FOUND, PERMISSION_DENIED, OUT_OF_RANGE
//                "remote access error": a Write/Read named an unknown
//                region, the wrong key or a range outside the region.
//                As on RDMA, where such an access moves the queue pair to
//                the error state, this is fatal to the channel on both
//                sides (which also stops a peer from guessing keys).
// Messages that arrived before the peer closed are still delivered by Recv
// before it returns the closed status; after a local Close() Recv returns
// CANCELLED at once. A locally detected error is sent to the peer in a CLOSE.
//
// Thread safety: as for Channel: one thread may send (Send, Write, Read)
// while another receives (Recv); Close(), status() and info() from any
// thread. The destructor closes the channel and joins the I/O thread.

#ifndef RDMAD_CLIENT_SRC_TCP_TCP_CHANNEL_IMPL_H_
#define RDMAD_CLIENT_SRC_TCP_TCP_CHANNEL_IMPL_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/src/abortable_channel.h"
#include "client/src/completion_signal.h"
#include "client/src/tcp/tcp_frame.h"
#include "client/src/tcp/tcp_socket.h"
#include "rdmad/channel.h"
#include "rdmad/status.h"

namespace rdmad::internal {

// Bytes of received messages held for Recv before the I/O thread pauses
// (each message also counts kQueuedMessageOverhead, so empty ones do too).
inline constexpr size_t kRecvQueueBytes = size_t{32} << 20;
inline constexpr size_t kRecvQueueHardBytes = 4 * kRecvQueueBytes;
inline constexpr size_t kQueuedMessageOverhead = 64;
// After Abort, the I/O thread ends once the peer has sent nothing for this
// long (and its reads wake this often while idle: SO_RCVTIMEO).
inline constexpr std::chrono::milliseconds kAbortQuiet{500};

// The send side of the socket: whole frames, granted in the order they were
// asked for, so the I/O thread's answers never starve behind a caller that
// sends message after message.
class FifoSendLock {
 public:
  void lock();
  void unlock();
  // Takes the lock only if it is free and nobody waits, within timeout.
  bool try_lock_for(std::chrono::milliseconds timeout);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_ticket_ = 0;
  uint64_t serving_ = 0;
};

class TcpChannel final : public AbortableChannel {
 public:
  // Takes a connected, configured socket and starts the I/O thread. Fills
  // info's transport, tcp_local and tcp_peer.
  static StatusOr<std::unique_ptr<TcpChannel>> Start(UniqueFd fd, ChannelInfo info);
  ~TcpChannel() override;
  TcpChannel(const TcpChannel&) = delete;
  TcpChannel& operator=(const TcpChannel&) = delete;

  const ChannelInfo& info() const override { return info_; }
  Status Send(const void* buf, size_t len) override;
  Status Send(const MemoryRegion& region, size_t offset, size_t len) override;
  Status TrySend(const void* buf, size_t len) override;
  StatusOr<std::vector<uint8_t>> Recv(std::chrono::milliseconds timeout) override;
  using Channel::RegisterMemory;
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(void* addr, size_t len,
                                                         MemoryAccess access) override;
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterDmabuf(int fd, uint64_t offset,
                                                         size_t len) override;
  Status Write(const MemoryRegion& local, size_t local_offset, const RegionDescriptor& remote,
               uint64_t remote_offset, size_t len) override;
  Status Read(const MemoryRegion& local, size_t local_offset, const RegionDescriptor& remote,
              uint64_t remote_offset, size_t len) override;
  // A key of this channel's in the region registry (tcp_region.h).
  using Channel::Expose;
  StatusOr<RegionDescriptor> Expose(const MemoryRegion& region, MemoryAccess access) override;
  Status Revoke(const RegionDescriptor& exposed) override;
  // The ops run in order (Channel's default), then the NOTIFY frame.
  using Channel::Submit;
  StatusOr<std::unique_ptr<Transfer>> Submit(const std::vector<TransferOp>& ops,
                                             std::string_view notification) override;
  StatusOr<std::vector<uint8_t>> RecvNotification(std::chrono::milliseconds timeout) override;
  // An eventfd: the I/O thread writes it when news arrives while armed.
  StatusOr<int> CompletionFd() override;
  bool Arm() override;
  Status status() const override;
  void Close() override;
  // The daemon's end (abortable_channel.h): fails and shuts the socket down.
  void Abort(const Status& status) override;

 private:
  // A Write or Read waiting for its ACK / READ_RESP. Lives on the caller's
  // stack; only the I/O thread completes it (after it last touched dst).
  struct PendingOp {
    FrameType answer = FrameType::kAck;
    uint8_t* dst = nullptr;  // READ_RESP payload goes here
    size_t len = 0;
    bool done = false;
    Status status;
  };

  TcpChannel(UniqueFd fd, ChannelInfo info);

  // Caller side (tcp_channel_impl.cc).
  // Send and TrySend (what names the call in errors).
  Status SendData(const char* what, const void* buf, size_t len, bool without_waiting);
  // without_waiting: DEADLINE_EXCEEDED, nothing sent, unless the send
  // buffer has room for the frame now (TrySend).
  Status SendFrame(const FrameHeader& header, const void* payload, size_t len,
                   bool without_waiting = false);
  bool SendBufferHasRoom(size_t bytes) const;
  Status RoundTrip(FrameHeader header, const void* payload, uint8_t* dst, size_t len);
  Status RemoteAccess(FrameType type, const MemoryRegion& local, size_t local_offset,
                      const RegionDescriptor& remote, uint64_t remote_offset, size_t len);
  // Records the first error, wakes every waiter and shuts the socket down.
  void Fail(const Status& status);
  void CloseOnce();
  void SendClose(const std::string& reason);

  // The I/O thread (tcp_channel_reader.cc).
  void ReaderMain();
  Status ReadFrame();
  Status WaitForQueueSpace();
  // Reads exactly len bytes (*got: how many came). After Abort it ends, as
  // the socket's EOF would, once the peer has been silent for kAbortQuiet:
  // until then the peer's last frames (flow-controlled behind what the
  // application has not taken yet) still come in.
  Status Receive(void* buf, size_t len, size_t* got = nullptr);
  Status ReadPayload(void* buf, size_t len);
  StatusOr<std::string> ReadText(uint64_t len);
  Status OnData(const FrameHeader& header);
  Status OnWrite(const FrameHeader& header);
  Status OnReadReq(const FrameHeader& header);
  Status SendReadResp(const FrameHeader& header);
  Status OnAnswer(const FrameHeader& header);
  Status OnClose(const FrameHeader& header);
  Status OnNotify(const FrameHeader& header);
  Status Reply(FrameType type, uint64_t request_id, const Status& status);
  Status RefuseAccess(const FrameHeader& header, FrameType reply, const Status& why);
  void CompleteOp(uint64_t request_id, const Status& status);
  void Finish(const Status& status);

  const ChannelInfo info_;
  const uint64_t tag_;  // this channel in the region registry
  std::mutex exposed_mu_;
  std::set<uint64_t> exposed_;  // Expose's ids not revoked; guarded by exposed_mu_
  UniqueFd fd_;
  FifoSendLock send_mu_;  // one frame at a time on the socket

  mutable std::mutex mu_;
  std::condition_variable recv_cv_;   // a message arrived or status_ changed
  std::condition_variable space_cv_;  // queue space, an op started, or status_
  std::condition_variable op_cv_;     // an op completed
  Status status_;                     // OK while usable; the first error wins
  bool closed_locally_ = false;
  std::optional<Status> aborted_;  // Abort's status, the I/O thread draining; guarded by mu_
  std::deque<std::vector<uint8_t>> queue_;
  std::deque<std::vector<uint8_t>> notes_;  // notifications, not yet taken
  size_t queued_bytes_ = 0;
  uint64_t next_request_id_ = 1;
  std::unordered_map<uint64_t, PendingOp*> pending_;
  CompletionSignal signal_;    // CompletionFd
  uint64_t batches_done_ = 0;  // Submit's transfers since the last Arm

  std::vector<uint8_t> bounce_;  // the I/O thread's copy buffer
  std::once_flag close_once_;
  std::thread reader_;
  std::chrono::steady_clock::time_point heard_{};  // the I/O thread's last news
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_TCP_TCP_CHANNEL_IMPL_H_
