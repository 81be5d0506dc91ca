// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: the Channel over one RC queue pair, speaking the protocol of
// client/src/rdma/wire.h (SEND_WITH_IMM fragments into the peer's receive
// ring, credit flow control). One-sided Write/Read are RDMA WRITE/READ on
// the same QP.
//
// Progress: there is no progress thread. Whichever call needs something
// (a credit, a free send slot, a fragment, a completion) drains the CQ
// itself under the channel mutex. Waiting spins on the CQ for
// plan.spin_us (not at all in a process that may run on one CPU only:
// there the spinning only delays the process it waits for), then one
// waiter (the "poller") arms the CQ and sleeps; other waiters sleep on a
// condition variable and are woken whenever completions were processed. A
// wait without a deadline sleeps in one blocking read of the completion
// channel, as perftest's -e does (the channel's fd blocks until
// CompletionFd); what must wake it without news raises a completion: Close
// a zero-length RDMA WRITE (and at its end, if that did not complete, the
// QP to ERR), a failure the QP to ERR, whose flush completes what it holds.
// A wait with a deadline sleeps in epoll_wait on the completion channel and
// a wake eventfd (both made at its first such sleep), which Close, Abort
// and failures write. So nothing stays blocked, and an idle channel uses
// no CPU. CompletionFd is an epoll fd over the completion channel and an
// eventfd the channel writes when news arrives while armed; Arm() takes
// the completion channel's events, drains the CQ and re-arms it (waking a
// sleeping poller whose event it took; one asleep in a read takes its own).
//
// Thread safety: as rdmad::Channel - one sending thread (Send, Write,
// Read) and one receiving thread (Recv) at once; Close, status and info
// from any thread. All state is guarded by mu_.

#ifndef RDMAD_CLIENT_SRC_RDMA_CHANNEL_IMPL_H_
#define RDMAD_CLIENT_SRC_RDMA_CHANNEL_IMPL_H_

#include <infiniband/verbs.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "client/src/abortable_channel.h"
#include "client/src/completion_signal.h"
#include "client/src/rdma/batch_table.h"
#include "client/src/rdma/resources.h"
#include "client/src/rdma/send_chunks.h"
#include "client/src/rdma/wire.h"
#include "client/src/ring_queue.h"
#include "common/endpoint.h"
#include "rdmad/channel.h"

namespace rdmad::internal {

struct RailQp;
class RdmaPreparedTransfer;

// How long a wait spins before it sleeps: spin_us (qp.spin_us), unless the
// process may run on one CPU only (cpus == 1: a one-CPU VM or container,
// taskset): then the process that would answer cannot run while this one
// spins. cpus 0 (unknown) spins.
std::chrono::microseconds SpinTimeFor(uint32_t spin_us, int cpus);

// One step of a spinning wait (the caller polls its CQ between steps):
// every 1024th step sched_yield for this process's other threads, and
// nothing else. A look at the CQ is the spin's only delay, as in perftest's
// and UCX's polling: a pause hint between looks delays seeing the
// completion by the pauses left (in a VM under emulation each pause leaves
// the vCPU, about 0.2 us, and sixteen of them made each one-way message
// about 3 us slower), and a yield per step costs a system call per look.
// True every kLooksPerClock-th step: the caller reads the clock (its spin
// time, its deadline) only then. Where the clocksource is not the TSC (a
// VM's HPET or ACPI timer) reading it is a system call and a device access
// that cost more than a look at the CQ, and each look waited for one.
inline constexpr uint32_t kLooksPerClock = 128;
bool SpinStep(uint32_t* steps);
// Completions taken from the CQ per ibv_poll_cq.
inline constexpr int kPollBatch = 16;

// Recv and RecvInto copy a fragment this small out of its slot under the
// lock: releasing and taking it again costs more.
inline constexpr size_t kCopyUnderLock = 256;
// Runs copy, of len bytes out of a slot the caller holds until it gives it
// back: under lock up to kCopyUnderLock, with it released above.
template <typename Copy>
void CopyOutOfSlot(std::unique_lock<std::mutex>& lock, size_t len, Copy copy) {
  const bool release = len > kCopyUnderLock;
  if (release) lock.unlock();
  copy();
  if (release) lock.lock();
}

// A new epoll fd over fds (negative ones left out), each readable as
// EPOLLIN with its fd as the event's data (channel_events.cc); `what`
// names the caller in errors.
StatusOr<int> EpollSet(std::initializer_list<int> fds, const char* what);
// epoll_ctl(epoll_fd, op, fd) with EpollSet's event for fd (EPOLLIN, the
// fd as its data): 0, or -1 and errno.
int EpollWatch(int epoll_fd, int op, int fd);

class RdmaChannel final : public AbortableChannel {
 public:
  RdmaChannel(std::unique_ptr<ChannelResources> resources, const RdmaEndpoint& local,
              const RdmaEndpoint& remote, ChannelInfo info);
  ~RdmaChannel() override;

  const ChannelInfo& info() const override { return info_; }
  Status Send(const void* buf, size_t len) override;
  Status Send(const MemoryRegion& region, size_t offset, size_t len) override;
  Status TrySend(const void* buf, size_t len) override;
  StatusOr<std::vector<uint8_t>> Recv(std::chrono::milliseconds timeout) override;
  // Eager fragments are copied out of the ring; rendezvous pieces not yet
  // read ahead are READ straight into the region (channel_recv_into.cc).
  StatusOr<size_t> RecvInto(const MemoryRegion& region, size_t offset, size_t max_len,
                            std::chrono::milliseconds timeout) override;
  using Channel::RegisterMemory;
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(void* addr, size_t len,
                                                         MemoryAccess access) override;
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterDmabuf(int fd, uint64_t offset,
                                                         size_t len) override;
  Status Write(const MemoryRegion& local, size_t local_offset, const RegionDescriptor& remote,
               uint64_t remote_offset, size_t len) override;
  Status Read(const MemoryRegion& local, size_t local_offset, const RegionDescriptor& remote,
              uint64_t remote_offset, size_t len) override;
  using Channel::Expose;
  StatusOr<RegionDescriptor> Expose(const MemoryRegion& region, MemoryAccess access) override;
  Status Revoke(const RegionDescriptor& exposed) override;
  using Channel::Submit;
  StatusOr<std::unique_ptr<Transfer>> Submit(const std::vector<TransferOp>& ops,
                                             std::string_view notification) override;
  // Without rails: the work requests built once (channel_prepared.cc).
  StatusOr<std::unique_ptr<PreparedTransfer>> Prepare(const std::vector<TransferOp>& ops) override;
  StatusOr<std::vector<uint8_t>> RecvNotification(std::chrono::milliseconds timeout) override;
  // An epoll fd over the completion channel and the CompletionSignal.
  StatusOr<int> CompletionFd() override;
  bool Arm() override;
  Status status() const override;
  std::vector<ChannelRail> rails() const override;  // channel_stripe.cc
  void Close() override;
  // The daemon's end (abortable_channel.h): the QP goes to ERR, waiters wake.
  void Abort(const Status& status) override;

  // The further rails from the handshake (rdma_channel.cc), before use.
  void AdoptRails(std::vector<std::unique_ptr<RailQp>> rails);

  const std::shared_ptr<RdmaDevice>& device() const { return device_; }
  // Bytes of the channel's own receive ring and staging area registered so
  // far (they start small and grow with the traffic: resources.h).
  size_t registered_bytes() const;
  // Tests: the QP's initiator depth (max_rd_atomic) as the device has it.
  uint32_t ReadDepthForTesting() const;
  // Tests: sends one message with this immediate (credits and done filled
  // in as usual unless nonzero) and payload, as a misbehaving peer would.
  Status PostRawForTesting(Imm imm, const void* payload, uint32_t len);
  // Tests: the latest rendezvous descriptor the peer sent, as a peer that
  // kept it would; the send chunks the peer has not reported read; and
  // taking the completions waiting in the CQ, as any call does.
  std::optional<RndvDescriptor> LastRndvDescriptorForTesting() const;
  uint32_t SendChunksTakenForTesting() const;
  void DrainForTesting();
  // Tests: grows the staging area now, as a staged send that finds every
  // chunk in flight does.
  void GrowStagingForTesting();
  // Tests: the signaled batch completions taken so far (SignalSegment).
  uint64_t BatchCompletionsForTesting() const;
  // Tests: the CREDIT messages posted so far, and the completions of
  // CREDIT and CLOSE messages taken.
  uint64_t CreditMessagesForTesting() const;
  uint64_t ControlCompletionsForTesting() const;
  // Tests: the receives posted (the ring's slots less those holding a
  // message or waiting to be reposted).
  uint32_t PostedReceivesForTesting() const;
  // Tests: how often the CQ was armed and drained so far, how often a
  // wait slept in a read of the completion channel, and how many messages
  // RecvInto took at a wake-up (RecvAtWake).
  struct WaitCounts {
    uint64_t arms = 0, drains = 0, reads = 0, taken_at_wake = 0;
  };
  WaitCounts WaitCountsForTesting() const;
  uint64_t QuickOpsForTesting() const;  // prepared transfers posted as quick ops
  // Tests: the completion channel is in the epoll set of timed sleeps.
  bool CompletionChannelInSleepSetForTesting() const;

 private:
  using Lock = std::unique_lock<std::mutex>;
  static constexpr uint32_t kAckBatch = 64;  // CQ events per ibv_ack_cq_events
  using Deadline = std::optional<std::chrono::steady_clock::time_point>;
  // A call's deadline from its timeout (negative: none), read from the
  // clock when the call first has to wait, with the clock read the wait
  // starts with: a call whose answer is there, or comes within its first
  // kLooksPerClock looks, reads no clock (kLooksPerClock says why that
  // matters).
  class LazyDeadline {
   public:
    explicit LazyDeadline(std::chrono::milliseconds timeout) : timeout_(timeout) {}
    // One already read: `at` (nullopt: none).
    static LazyDeadline At(Deadline at) {
      LazyDeadline d(std::chrono::milliseconds(-1));
      d.read_ = true;
      d.at_ = at;
      return d;
    }
    // The deadline; now: the clock if the caller just read it.
    Deadline get(std::optional<std::chrono::steady_clock::time_point> now = std::nullopt) {
      if (!read_ && timeout_.count() >= 0) {
        at_ = (now ? *now : std::chrono::steady_clock::now()) + timeout_;
      }
      read_ = true;
      return at_;
    }
    // A timeout of 0 not yet read: the call must not spin before it looks.
    bool immediate() const { return !read_ && timeout_.count() == 0; }
    // No deadline: a negative timeout, or one read as none.
    bool forever() const { return read_ ? !at_.has_value() : timeout_.count() < 0; }

   private:
    std::chrono::milliseconds timeout_;
    bool read_ = false;
    Deadline at_;
  };
  enum class Side { kSend, kRecv };

  // A received DATA or RNDV fragment (or the peer's CLOSE) not yet
  // consumed. A RNDV fragment's slot is reposted on arrival; its bytes are
  // READ into `chunk` of the pool (kDirect: into direct_buf_).
  struct Fragment {
    uint32_t slot = 0;
    uint32_t len = 0;
    bool first = false, last = false, close = false;
    bool rndv = false, read_posted = false;
    RndvDescriptor desc;
    int32_t chunk = -1;
    uint64_t read_seq = 0;  // done once reads_done_ > read_seq
  };
  static constexpr int32_t kDirect = -2;
  static constexpr int32_t kIntoRegion = -3;  // RecvInto READ it into the caller's region

  // channel_impl.cc: progress, waiting, errors, teardown.
  // OK while the channel may still be used for side (mu_ held): inline,
  // as every call on the data path asks; Unusable says why not.
  Status Usable(Side side) const {
    bool gone = closed_ || !error_.ok() || (side == Side::kSend ? peer_closed_ : recv_saw_close_);
    return gone ? Unusable(side) : Status();
  }
  Status Unusable(Side side) const;
  Status WaitFor(Lock& lock, const std::function<bool()>& done, LazyDeadline& deadline, Side side);
  Status WaitFor(Lock& lock, const std::function<bool()>& done, Deadline deadline, Side side) {
    LazyDeadline read = LazyDeadline::At(deadline);
    return WaitFor(lock, done, read, side);
  }
  void TellPeerClosed(Lock& lock);
  // Wakes the threads in WaitOnCv, if there are any (mu_ held).
  void NotifyWaiters() {
    if (cv_waiters_ > 0) cv_.notify_all();
  }
  int Drain();
  // The end of a drain, once its `total` completions are processed: credits,
  // waiters, rails and batch work. Returns total with the rails' ones.
  int AfterDrain(int total, bool reposted);
  void OnCompletion(const ibv_wc& wc);
  // n polled completions in order, as one drain's (CompletionNowNs reads
  // the clock once for them).
  void OnCompletions(const ibv_wc* wc, int n);
  // A receive completion: AcceptReceive takes its immediate's credits and
  // done count (nullopt, the channel failed, if it is malformed), then
  // OnReceived files the message by type.
  void OnReceive(const ibv_wc& wc);
  std::optional<Imm> AcceptReceive(const ibv_wc& wc);
  void OnReceived(const ibv_wc& wc, const Imm& imm);
  void OnSendCovered(const ibv_wc& wc);
  void Repost(uint32_t slot);
  bool PostSlot(uint32_t slot);  // false when closed, failed or the post failed
  // The slot of a message the application took (Release): at a side that
  // answers what it takes, reposted at the channel's next Drain (every
  // wait, sleep, Arm and TrySend starts with one) or next Release, off the
  // way from a message to its answer (1.1 us under TCG); at most one slot
  // waits, its credit with it (CreditState::OnTaken, late credits).
  void DeferRepost(uint32_t slot);
  bool RepostDeferred();  // true if a waiting slot was reposted
  void MaybeSendCredits();
  // A SEND (data or control) was posted: a send slot taken, and the
  // unsignaled ones a signaled one will stand for counted (mu_ held).
  void CountSendPosted(bool signaled) {
    ++sq_outstanding_;
    if (signaled) {
      uncovered_ = 0;
    } else {
      ++uncovered_;
      ++silent_;
    }
  }
  Status PostControl(MessageType type);
  void Fail(Status status);
  void Wake();
  void OnAsyncEvent(int event_type);
  void DrainAfterError();
  Status CompletionError(const ibv_wc& wc) const;
  // Credits, slots, rendezvous and pool counts, for the debug log (mu_ held).
  std::string StateForLog() const;

  // channel_sleep.cc: sleeps.
  // Arms the CQ and sleeps until a completion, a wake, a group member's
  // doorbell or the deadline (mu_ held through lock, let go while asleep).
  void Sleep(Lock& lock, Deadline deadline);
  // Sleep without a deadline on a blocking completion channel: one read of
  // it, as perftest's -e waits (no epoll set, no eventfd). What must wake it
  // without a completion raises one (WakeBlockedSleeper). The CQ is armed
  // again as the event is taken, so that the caller's Drain after it sees
  // what came before, and the next sleep reads at once (cq_armed_).
  void SleepInRead(Lock& lock);
  // Requests the CQ's next event (mu_ held); false, the channel failed, if
  // it cannot be.
  bool ArmCq();
  // A completion soon for a thread in SleepInRead (mu_ held): a zero-length
  // RDMA WRITE, or with `broken` (the channel failed) the QP to ERR, which
  // flushes what it holds, and a flushed WRITE if it holds nothing.
  void WakeBlockedSleeper(bool broken);
  // Waits on cv_ until notified or `until` (none: no limit), counted in
  // cv_waiters_ so that NotifyWaiters wakes only when someone waits (mu_
  // held through lock).
  void WaitOnCv(Lock& lock, Deadline until);
  bool MakeWakeFd();
  bool HasDoorbell();  // a group member's doorbell, made at its first need
  int SleepSet();
  void LeaveSleepSet();  // the completion channel out of SleepSet's set

  // channel_events.cc: the completion fd.
  // Something waits for the application (mu_ held): a whole message, a
  // notification, a batch done since the last Arm, or the channel's end.
  bool Pending() const;
  // Takes the completion channel's events without blocking (at most one
  // when `one`: poll() saw it, and each arming raises one), acknowledging
  // them in batches (mu_ held). True if there were any.
  bool TakeCqEvents(bool one = false);
  // One CQ event taken: acknowledged with the next kAckBatch (mu_ held).
  void CountCqEvent();
  void ArmRails();

  // channel_data.cc: messages.
  Status SendMessage(const uint8_t* data, size_t len, const RdmaMemoryRegion* region);
  // DATA fragments for [begin, end) of a message of len bytes.
  Status SendEager(Lock& lock, const uint8_t* data, size_t len, size_t begin, size_t end,
                   const RdmaMemoryRegion* region);
  // A fragment may be posted now: a data credit, a send slot and, for a
  // staged one (not inline), a free staging chunk (mu_ held).
  bool CanPostFragment(bool staged) const {
    return credits_.CanSendData() && sq_outstanding_ < res_->send_depth &&
           (!staged || !free_chunks_.empty());
  }
  // Waits (mu_ held through lock) until CanPostFragment. The first staged
  // fragment takes the staging area's first chunk; a later one that finds
  // every chunk in flight first reaps completions, and if none came back
  // grows the staging area to its full size. ResourceExhausted if a staged
  // fragment can have no chunk at all. Not from Drain's callees: they leave
  // what they cannot post for later. Inline when the fragment can go at
  // once (every small message on a channel that keeps up).
  Status WaitToPostFragment(Lock& lock, bool staged) {
    if (CanPostFragment(staged)) return Status::Ok();
    return WaitToPostFragmentSlow(lock, staged);
  }
  Status WaitToPostFragmentSlow(Lock& lock, bool staged);
  void GrowStaging();  // one step (ChannelResources::GrowStaging)
  void GrowRing();     // the peer filled half the ring (MaybeSendCredits)
  // A growth's first new index, or nullopt once the refusal is logged
  // (what the channel keeps: its `what` of `kept` `unit`).
  std::optional<uint32_t> Grown(const StatusOr<uint32_t>& first, const char* what, uint32_t kept,
                                const char* unit) const;
  // type kData or kNotify; fence: after RDMA READs of the same batch.
  Status PostFragment(const uint8_t* data, uint32_t len, const RdmaMemoryRegion* region, bool first,
                      bool last, MessageType type = MessageType::kData, bool fence = false);

  // channel_rndv.cc: the rendezvous (wire.h, rndv_pool.h). PostRndv sends
  // one descriptor of [data, data+n): in place through the send window
  // when window_rkey is given, else from a send chunk it is copied into;
  // false when no chunk is to be had (the caller sends the piece eagerly).
  StatusOr<bool> PostRndv(Lock& lock, const uint8_t* data, uint32_t n,
                          const RdmaMemoryRegion* region, bool first, bool last,
                          std::optional<uint32_t> window_rkey = std::nullopt);
  // The peer finished reading n of our descriptors (mu_ held).
  void OnRndvDone(uint32_t n);
  // A RNDV fragment arrived in slot (mu_ held).
  void OnRndvFragment(const ibv_wc& wc, uint32_t slot, const Imm& imm);
  // READs for the received descriptors, in order, while chunks last.
  void PostReads();
  // Adds a READ of f's piece to the chain FlushReads posts with one
  // doorbell (the chain fails the channel if the QP refuses it).
  void QueueRead(Fragment& f, uint64_t local_addr, uint32_t lkey);
  Status FlushReads();
  // Makes the front fragment's bytes readable (mu_ held through lock).
  Status FetchFront(Lock& lock, Deadline deadline);
  // Takes the front fragment (mu_ held): UNAVAILABLE at the peer's CLOSE;
  // DATA_LOSS, failing the channel, unless FIRST is exactly where a message
  // starts (in_message: a fragment of the current one was taken).
  StatusOr<Fragment> PopFragment(bool in_message);
  // Where a taken fragment's bytes are (slot, chunk or direct buffer), and
  // giving that back once they are copied (mu_ held for both).
  const uint8_t* FragmentBytes(const Fragment& f) const;
  void Release(const Fragment& f);
  // channel_recv_into.cc: Recv's and RecvInto's wait for one eager message
  // (mu_ held, ready_ empty, not in a message; LeanRecvOk): the CQ polled,
  // spun on and slept on here until the deadline, and a lone whole message
  // copied from its slot at once, to dst (up to max_len bytes) or, with
  // out, into *out. nullopt when anything else turns up: processed as Drain
  // would, and left to the general path (with the deadline as read).
  bool LeanRecvOk(const LazyDeadline& deadline) const;
  std::optional<StatusOr<size_t>> RecvAtWake(Lock& lock, LazyDeadline& deadline, uint8_t* dst,
                                             size_t max_len, std::vector<uint8_t>* out);
  // Closing (mu_ held): the peer's descriptors not yet read never will be;
  // they are owed back as done (READs in flight count when they complete).
  void DropUnreadRndv();
  // Done descriptors to piggyback on a message we send.
  uint8_t TakeDone() {
    const uint32_t give = std::min(done_owed_, kMaxDonePerMessage);
    done_owed_ -= give;
    return static_cast<uint8_t>(give);
  }
  // Done owed that is worth a CREDIT message of its own: all of it once
  // nothing of the peer's is left to read, else kDoneBatch of it.
  static constexpr uint32_t kDoneBatch = 8;
  bool DoneDue() const { return done_owed_ > 0 && (rndv_unread_ == 0 || done_owed_ >= kDoneBatch); }
  // Gives every pool chunk back (the QP is gone).
  void ReturnChunks();

  // channel_expose.cc: Expose's windows. PostAndAwaitExposure posts a
  // signaled BIND_MW and waits for it (mu_ held through lock);
  // FreeExposures deallocates every window still exposed, before the QP.
  Status PostAndAwaitExposure(Lock& lock, ibv_send_wr& wr);
  void FreeExposures();
  // A signaled local work request (BIND_MW, LOCAL_INV) of this kind, once a
  // send slot is free (mu_ held through lock), counted in *posted; a refused
  // post fails the channel, named by what.
  Status PostLocalOp(Lock& lock, ibv_send_wr& wr, WrKind kind, const char* what, uint64_t* posted);

  // channel_send_window.cc: a large message from registered host memory,
  // described in place through the channel's memory window. CanUseSendWindow
  // allocates it at the first use; BindSendWindow binds it to the message's
  // bytes (remote read) and returns the rkey; InvalidateSendWindow invalidates
  // it and waits for that (mu_ held through lock); FreeSendWindow before the QP.
  bool CanUseSendWindow(const RdmaMemoryRegion& region);
  StatusOr<uint32_t> BindSendWindow(Lock& lock, const RdmaMemoryRegion& region, uint64_t address,
                                    uint64_t len);
  Status InvalidateSendWindow(Lock& lock);
  void FreeSendWindow();

  // channel_one_sided.cc
  StatusOr<const RdmaMemoryRegion*> OwnRegion(const MemoryRegion& region, const char* what) const {
    // RdmaMemoryRegion is final: the type compared, without dynamic_cast's
    // walk of the class hierarchy (once per message or op from a region).
    if (typeid(region) == typeid(RdmaMemoryRegion)) {
      const auto* own = static_cast<const RdmaMemoryRegion*>(&region);
      if (own->device() == res_->device.get()) return own;
    }
    return ForeignRegion(region, what);
  }
  // Why region is not one of this channel's device (OwnRegion's error).
  Status ForeignRegion(const MemoryRegion& region, const char* what) const;
  // Every op's region as OwnRegion finds it, in *regions; else the first
  // op's error, named "WHAT: op I: ...".
  Status OwnOpRegions(const std::vector<TransferOp>& ops, const char* what,
                      std::vector<const RdmaMemoryRegion*>* regions) const;
  Status OneSided(bool write, const MemoryRegion& local, size_t local_offset,
                  const RegionDescriptor& remote, uint64_t remote_offset, size_t len);
  // Posts [local_offset, +len) as RDMA WRITE/READ work requests on the
  // first QP, counted in first_written_/first_read_; AwaitOneSided waits
  // for every one-sided request there (mu_ held through lock).
  Status PostOneSided(Lock& lock, bool write, const RdmaMemoryRegion& own, size_t local_offset,
                      uint64_t remote_address, uint32_t rkey, size_t len);
  Status AwaitOneSided(Lock& lock);

  // channel_stripe.cc: a transfer over the rails; false when it is not
  // striped (too small, no rail up, no key for one), and the caller does
  // it on the first QP.
  static constexpr size_t kStripeMin = 64u << 10;  // the smallest piece a rail gets
  StatusOr<bool> Stripe(Lock& lock, bool write, const RdmaMemoryRegion& own, size_t local_offset,
                        const RegionDescriptor& remote, uint64_t remote_offset, size_t len);
  // A piece of a striped transfer: on the first QP (rail null) or a rail,
  // with the local region's registration and the peer's key there.
  struct StripePiece {
    RailQp* rail = nullptr;
    const RdmaMemoryRegion* local = nullptr;
    uint32_t rkey = 0;
    uint64_t weight = 1;
    uint64_t offset = 0, len = 0;  // within the transfer
  };
  // [0, len) split by the weights of the first QP and the rails that are
  // up and have keys; the first QP's piece first. Fewer than two pieces:
  // not striped (mu_ held).
  std::vector<StripePiece> SplitOverRails(const RdmaMemoryRegion& own,
                                          const RegionDescriptor& remote, size_t len);
  // Posts [local_offset, +len) on the rail, each work request signaled
  // with wr_id, waiting for the rail's send slots (mu_ held through lock);
  // *posted (if given) counts each one posted.
  Status PostOnRail(Lock& lock, RailQp& rail, bool write, const RdmaMemoryRegion& local,
                    size_t local_offset, uint64_t remote_address, uint32_t rkey, size_t len,
                    uint64_t wr_id, uint32_t* posted = nullptr);
  // Progress until each of rails has at most at_most requests out: the
  // rails' CQs are drained with the first one's (Drain), and the waiter
  // sleeps on their completion channels too (Sleep).
  void AwaitRails(Lock& lock, const std::vector<RailQp*>& rails, uint32_t at_most);
  // Takes the rail out, its QP to the error state: what it has in flight
  // completes flushed, and is done again on the first QP.
  void TakeRailOut(RailQp& rail, const std::string& why);
  // The completions waiting in the rails' CQs (mu_ held). Returns how many.
  int PollRails();
  void OnRailCompletion(RailQp& rail, const ibv_wc& wc);
  // Work requests in flight on any rail; the rails' completion channel
  // events taken and acknowledged.
  bool RailsBusy() const;
  bool TakeRailCqEvents();

  // channel_rail_return.cc (mu_ held): the rails' ports watched, and rails
  // coming back through RAIL messages.
  void WatchRails();
  void OnRailMessage(const uint8_t* payload, uint32_t len);
  void FlushRails();  // replaces idle rails' QPs as agreed; posts RAIL messages
  Status ConnectRailQp(RailQp& rail, ChannelResources& qp, uint32_t local_psn,
                       const RailMessage& peer);
  void RailBack(RailQp& rail, std::unique_ptr<ChannelResources> res, const RailEndpoint& local,
                const RailMessage& peer);

  // channel_batch.cc: Submit's batches. Each batch's work requests go out
  // in segments of at most the free send slots, the last of each signaled;
  // RC completes in order, so a segment's completion frees all of it.
  // A batch's op striped over rails (channel_batch_rails.cc): its piece
  // on a further rail. One whose rail fails is done again on the first QP.
  struct RailPiece {
    RailQp* rail = nullptr;
    uint32_t op = 0;               // in the batch
    uint64_t offset = 0, len = 0;  // within the op
    uint32_t wrs = 0;              // its work requests not completed
    bool posting = false;          // PostOnRail is still at it
    bool failed = false;
  };
  // Whether a batch is done: written under mu_, after its status (which
  // is final then), and read without it by Wait and Poll of a done batch.
  class DoneFlag {
   public:
    DoneFlag() = default;
    DoneFlag(const DoneFlag& other) : done_(bool(other)) {}
    DoneFlag& operator=(const DoneFlag& other) { return *this = bool(other); }
    DoneFlag& operator=(bool done) {
      done_.store(done, std::memory_order_release);
      return *this;
    }
    operator bool() const { return done_.load(std::memory_order_acquire); }

   private:
    std::atomic<bool> done_{false};
  };
  // A batch is done once Submit has posted it, its first-QP segments and
  // its rail pieces have completed, the pieces of failed rails have been
  // done again, and its notification is posted.
  struct Batch {
    // This batch once more as a fresh one of the same prepared shape: its
    // op_count, wrs and op_of_wr kept, the rest as new (mu_ held). A field
    // added to Batch is reset there too.
    void Reuse();
    uint32_t id = 0;
    DoneFlag done;
    Status status;
    int failed_op = -1;
    uint32_t op_count = 0;
    uint32_t wrs = 0;  // first-QP work requests appended so far
    // The op each first-QP work request belongs to; empty for a batch of
    // one op (every request is op 0's), which needs no allocation for it.
    std::vector<uint32_t> op_of_wr;
    bool posting = true;    // Submit is still posting it
    uint32_t segments = 0;  // first-QP segments not completed
    // Striped: the ops (for pieces done again), their first-QP regions,
    // the rails' pieces, their work requests not completed, the failed
    // pieces not yet posted again.
    std::vector<TransferOp> ops;
    std::vector<const RdmaMemoryRegion*> regions;
    std::vector<RailPiece> pieces;
    uint32_t open_pieces = 0;  // not yet completed (or found failed)
    uint32_t redo = 0;
    // A notification that waits for the rails (or an earlier one): posted
    // by FlushBatchWork, in Submit's order.
    std::string note;
    bool fence = false;
    bool note_waits = false;
    uint64_t started_ns = 0;    // when Submit took it, for the meter (0: not metered)
    uint64_t last_segment = 0;  // the number of its last first-QP segment (segments_posted_)
  };
  struct Segment {
    uint32_t batch = 0;              // 0: a marker (CoverBatches)
    uint32_t first_wr = 0, wrs = 0;  // within the batch
    uint32_t covered = 0;            // unsignaled inline SENDs posted just before it
    bool signaled = true;            // else done with the next signaled segment
    uint64_t quick = 0;              // a quick op's sequence number (PostQuick), else 0
    uint64_t started_ns = 0;         // a quick op's Post, for the meter (0: not metered)
  };
  friend class RdmaTransfer;
  friend class RdmaPreparedTransfer;
  // A new batch in batches_, with the next id (mu_ held).
  void AddBatch(const std::shared_ptr<Batch>& batch);
  // Posts the batch's first-QP work requests (built by the caller; the
  // ones before count) in segments as send slots free up, then its
  // notification, and counts it in the meter (mu_ held through lock).
  // An error only when nothing of it started (it is then forgotten);
  // else the batch goes on, or failed with the channel.
  Status PostBatch(Lock& lock, const std::shared_ptr<Batch>& batch, ibv_send_wr* wrs, ibv_sge* sges,
                   size_t count, const BatchTotals& totals, std::string_view notification);
  // PreparedTransfer::Post, Wait, Poll and failed_op (channel_prepared.cc).
  // A transfer of one work request, without a notification, posted into a
  // free send slot with nothing queued before it, is a quick op: no Batch,
  // only its segment, done by sequence number (quick_done_).
  Status PostPrepared(RdmaPreparedTransfer& prepared, std::string_view notification);
  void PostQuick(RdmaPreparedTransfer& prepared);
  Status WaitQuick(uint64_t quick, uint64_t last_segment, std::chrono::milliseconds timeout);
  bool PollQuick(uint64_t quick, uint64_t last_segment, Status* status);
  bool QuickDone(uint64_t quick) const;      // completed, or ended (mu_ held)
  Status QuickStatus(uint64_t quick) const;  // a done one's answer (mu_ held)
  void EndQuick(const Status& status);       // the ones not done end so (mu_ held)
  Status WaitBatch(const std::shared_ptr<Batch>& batch, std::chrono::milliseconds timeout);
  bool PollBatch(const std::shared_ptr<Batch>& batch, Status* status);
  // Posts a batch's notification (mu_ held through lock).
  Status PostNotification(Lock& lock, std::string_view notification, bool fence);
  // A completion of a batch's work request (mu_ held).
  void OnBatchCompletion(const ibv_wc& wc);
  // Ends every batch in flight with the channel's error (mu_ held).
  void FailBatches();
  // Marks the batch done once nothing of it is left (mu_ held).
  void MaybeFinishBatch(const std::shared_ptr<Batch>& batch);
  // The clock for a finished batch's meter latency: read once per Drain
  // for every batch its completions finish, else now (mu_ held).
  uint64_t CompletionNowNs();
  // Appends the first-QP work requests of [offset, +len) of the batch's op
  // (sges hold their addresses; sg_list is set at posting); the caller
  // counts the bytes in first_written_/first_read_ when it posts them.
  void AppendBatchWrs(Batch& batch, uint32_t op, const TransferOp& o,
                      const RdmaMemoryRegion& region, uint64_t offset, uint64_t len,
                      std::vector<ibv_sge>& sges, std::vector<ibv_send_wr>& wrs);
  uint64_t BatchMaxWr() const;  // the most bytes one batch work request carries
  uint32_t BatchWrsFor(uint64_t len) const;
  // Posts n work requests of the batch (its WR indices from first_wr on)
  // as one segment, the last signaled unless SignalSegment says it may go
  // unsignaled (mu_ held; slots are free). A refused post fails the
  // channel.
  Status PostSegment(Batch& batch, uint32_t first_wr, ibv_send_wr* wrs, ibv_sge* sges, size_t n);
  // Whether a segment of n work requests is posted signaled (mu_ held).
  // Behind work still in the send queue (a pipeline, as perftest keeps)
  // one segment in about signal_every_ work requests is, and RC's in-order
  // completion finishes the unsignaled ones before it. A segment into an
  // empty queue (a lone batch), or on a channel with rails, is always
  // signaled.
  bool SignalSegment(size_t n) const;
  // A posted segment into segments_ and the counts below (a signaled one
  // also stands for the unsignaled inline SENDs before it); returns its
  // number (mu_ held).
  uint64_t AddSegment(Segment segment);
  // The segment's work requests are done: its slots free, its batch one
  // segment nearer done (mu_ held).
  void FinishSegment(const Segment& segment);
  // Takes segments_'s first segment as done; whether it was signaled.
  bool FinishFrontSegment();
  // When the last batch segment posted went unsignaled, posts a signaled
  // zero-length RDMA WRITE after it, so that what was posted completes
  // (IBA C9-88: a zero-length op names no memory and checks no R_Key).
  // Wait, Poll and Close call it for what they wait on; without a free send
  // slot it waits for one until the deadline (none: as long as it takes),
  // else posts nothing (mu_ held through lock).
  void CoverBatches(Lock& lock, Deadline deadline);
  // channel_batch_rails.cc: a batch's large ops striped over the rails:
  // the rails' pieces posted, each op's first-QP share (from offset 0) left
  // in first_len (mu_ held through lock).
  void StripeBatch(Lock& lock, const std::shared_ptr<Batch>& batch,
                   std::vector<uint64_t>& first_len);
  void OnRailPieceCompletion(const ibv_wc& wc);
  // A rail piece completed or failed as a whole (mu_ held).
  void FinishPiece(const std::shared_ptr<Batch>& batch, uint32_t index);
  // Without blocking (mu_ held): failed rails' pieces posted again on the
  // first QP while send slots last, then the notifications whose batches'
  // rails are done, in order, while credits last.
  void FlushBatchWork();

  std::shared_ptr<RdmaDevice> device_;  // outlives res_: chunks go back after the QP
  std::unique_ptr<ChannelResources> res_;
  RdmaEndpoint local_, remote_;
  ChannelInfo info_;
  uint32_t fragment_size_;
  int wake_fd_ = -1;                // MakeWakeFd's eventfd; -1: not yet, -2: it could not be made
  int sleep_fd_ = -1;               // SleepSet's epoll fd; -2: it could not be made
  bool comp_in_sleep_set_ = false;  // the completion channel is in sleep_fd_'s set

  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint32_t cv_waiters_ = 0;  // threads in cv_'s waits (WaitOnCv)
  bool poller_ = false;      // a thread sleeps on the completion channel
  // ... in a blocking read of it (SleepInRead): set under mu_, cleared as
  // the read returns.
  std::atomic<bool> in_read_{false};
  // The CQ is armed and no event was taken since. Every arming is followed
  // by a Drain before anyone sleeps (Sleep, SleepInRead, Arm, and WaitFor
  // after a sleep), so a sleep that finds it set need neither arm nor look.
  bool cq_armed_ = false;
  CreditState credits_;
  uint32_t sq_outstanding_ = 0;            // send WRs posted, not completed
  uint32_t recv_posted_ = 0;               // receive WRs posted, not completed
  std::optional<uint32_t> deferred_slot_;  // DeferRepost's, taken and not yet reposted
  uint32_t zero_copy_outstanding_ = 0;
  uint32_t one_sided_outstanding_ = 0;
  // Inline SENDs and CREDITs go unsignaled but every signal_every_-th: a signaled SEND
  // completing completes the unsignaled ones before it. uncovered_: those
  // posted since the last signaled SEND; silent_: those not yet known to be
  // done (they hold no buffer, so teardown need not wait for them).
  const uint32_t signal_every_;
  const std::chrono::microseconds spin_;  // plan.spin_us, or 0 on one CPU
  uint32_t uncovered_ = 0;
  uint32_t silent_ = 0;
  BatchTable<std::shared_ptr<Batch>> batches_;  // in flight, by id
  RingQueue<Segment> segments_;                 // posted, not completed
  // Batch segments posted, the number of the last signaled one, the work
  // requests posted unsignaled since it, and those of segments_'s
  // unsignaled segments (done once a later one completes; teardown does
  // not wait for them).
  uint64_t segments_posted_ = 0, signaled_through_ = 0;
  uint32_t unsignaled_run_ = 0, quiet_batch_wrs_ = 0;
  uint32_t signaled_in_flight_ = 0;  // segments_'s signaled segments
  // Quick ops: the last posted, the last done (a Wait reads it without
  // mu_), and after EndQuick every later one's status (and the failed one).
  uint64_t quick_posted_ = 0, quick_failed_ = 0;
  std::atomic<uint64_t> quick_done_{0};
  bool quick_ended_ = false;
  Status quick_end_;
  uint64_t batch_completions_ = 0;      // signaled batch segments completed (tests)
  uint64_t credit_messages_ = 0;        // CREDIT messages posted (tests)
  WaitCounts wait_counts_;              // ArmCq, Drain and SleepInRead's reads (tests)
  uint64_t control_completions_ = 0;    // CREDIT and CLOSE completions taken (tests)
  bool draining_ = false;               // in Drain's completions (CompletionNowNs)
  uint64_t drain_now_ns_ = 0;           // 0: not read in this Drain yet
  bool batch_flushing_ = false;         // after a batch error: each completion frees one slot
  const char* one_sided_op_ = "WRITE";  // or "READ": the last one-sided op, for errors
  std::vector<uint32_t> free_chunks_;   // staging chunks not in flight
  // The ring and the staging area start small and grow once (resources.h).
  bool ring_can_grow_ = true, staging_can_grow_ = true;
  RingQueue<Fragment> ready_;
  RingQueue<Fragment> notes_;     // received notifications, not yet taken
  std::vector<uint8_t> partial_;  // the message being reassembled
  size_t last_message_size_ = 0;  // Recv reserves this much for the next one
  bool in_message_ = false;
  Status error_;                 // the first failure
  bool closed_ = false;          // Close() was called
  bool peer_closed_ = false;     // the peer's CLOSE arrived
  bool recv_saw_close_ = false;  // Recv reached it
  CompletionSignal signal_;      // CompletionFd's eventfd
  int epoll_fd_ = -1;            // CompletionFd: completion channel + signal_
  bool watching_fd_ = false;     // CompletionFd counts in res_->group's watchers
  uint64_t batches_done_ = 0;    // batches done since the last Arm

  // The rendezvous. Sending: our descriptors the peer has not finished
  // (their chunk of own_chunks_, or -1 for a dmabuf region's piece), in
  // order. Receiving: landing chunks of the process's pool_.
  RndvPool* pool_;
  SendChunks own_chunks_;
  uint32_t rndv_threshold_;  // messages above this many bytes go by rendezvous
  RingQueue<int32_t> rndv_sent_;
  uint64_t rndv_done_ = 0;  // descriptors the peer has read, in all
  // Receiving: chunks READ into or being read, READs posted and completed,
  // descriptors read and not yet reported done, descriptors not yet read.
  uint32_t recv_chunks_ = 0;
  uint64_t reads_posted_ = 0, reads_done_ = 0;
  uint32_t done_owed_ = 0;
  uint32_t rndv_unread_ = 0;
  std::vector<ibv_send_wr> read_wrs_;  // QueueRead's chain
  std::vector<ibv_sge> read_sges_;
  std::vector<uint8_t> direct_buf_;  // the pool was empty: the front's own buffer
  std::unique_ptr<RdmaMemoryRegion> direct_mr_;
  std::optional<RndvDescriptor> last_rndv_;                     // the peer's latest, for tests
  std::map<uint32_t, std::shared_ptr<ExposedWindow>> exposed_;  // Expose's, by rkey
  uint64_t exposures_posted_ = 0, exposures_done_ = 0;
  // The send window (channel_send_window.cc): its current rkey, its BIND_MW
  // and LOCAL_INV work requests posted and completed.
  ibv_mw* send_window_ = nullptr;
  uint32_t send_window_rkey_ = 0;
  bool send_window_failed_ = false;  // none to be had: copy
  uint64_t window_ops_posted_ = 0, window_ops_done_ = 0;
  // The further rails (set once, before use; their state under mu_), and
  // the one-sided bytes of the first QP.
  std::vector<std::unique_ptr<RailQp>> rails_;
  RingQueue<RailMessage> rail_outbox_;  // RAIL messages waiting for a credit
  // Batches' pieces to do again on the first QP, and notifications waiting
  // for their batches' rails (FlushBatchWork).
  RingQueue<std::pair<std::shared_ptr<Batch>, uint32_t>> redo_;
  RingQueue<std::shared_ptr<Batch>> notes_out_;
  uint64_t first_written_ = 0, first_read_ = 0;
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_CHANNEL_IMPL_H_
