// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: construction, progress (draining the CQ), waiting, errors,
// Close and teardown. Sleeps are in channel_sleep.cc, messages in
// channel_data.cc, one-sided operations in channel_one_sided.cc.

#include "client/src/rdma/channel_impl.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <infiniband/verbs.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include "client/src/client_log.h"
#include "client/src/rdma/channel_rail.h"

namespace rdmad::internal {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kCloseGrace = std::chrono::seconds(1);  // Close: time to deliver CLOSE
// Close: time for the peer to READ the rendezvous pieces of our last messages.
constexpr auto kFlushGrace = std::chrono::seconds(5);
constexpr auto kDrainGrace = std::chrono::milliseconds(500);
constexpr auto kLongWait = std::chrono::seconds(2);  // a wait this long is logged (debug)

// SpinTimeFor with this process's CPUs (its affinity), told once per
// process when it does not spin.
std::chrono::microseconds SpinTime(uint32_t spin_us) {
  static const int cpus = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
  }();
  std::chrono::microseconds spin = SpinTimeFor(spin_us, cpus);
  if (spin.count() == spin_us) return spin;
  static std::once_flag told;
  std::call_once(told, [spin_us] {
    ClientLog().info(
        "RDMA channels wait without spinning (qp.spin_us {} not used): this process may run on "
        "one CPU only, where spinning delays the process it waits for",
        spin_us);
  });
  return spin;
}

const char* OpName(WrKind kind, const char* one_sided_op) {
  switch (kind) {
    case WrKind::kRecv: return "RECV";
    case WrKind::kSend: return "SEND (inline)";
    case WrKind::kStaged: return "SEND";
    case WrKind::kZeroCopy: return "SEND (zero copy)";
    case WrKind::kControl: return "SEND (credit/close)";
    case WrKind::kOneSided: return one_sided_op;
    case WrKind::kBatch: return "WRITE/READ (Submit)";
    case WrKind::kRndvRead: return "READ (rendezvous)";
    case WrKind::kExpose: return "BIND_MW (Expose)";
    case WrKind::kWindow: return "BIND_MW/LOCAL_INV (send window)";
    case WrKind::kWake: return "WRITE (wake)";
  }
  return "unknown";
}

}  // namespace

bool SpinStep(uint32_t* steps) {
  if (++*steps % 1024 == 0) std::this_thread::yield();
  return *steps % kLooksPerClock == 0;
}

std::chrono::microseconds SpinTimeFor(uint32_t spin_us, int cpus) {
  return std::chrono::microseconds(cpus == 1 ? 0 : spin_us);
}

RdmaChannel::RdmaChannel(std::unique_ptr<ChannelResources> resources, const RdmaEndpoint& local,
                         const RdmaEndpoint& remote, ChannelInfo info)
    : device_(resources->device),
      res_(std::move(resources)),
      local_(local),
      remote_(remote),
      info_(std::move(info)),
      fragment_size_(std::min(res_->slot_size, remote.slot_size)),
      credits_(remote.credits, res_->ring_size()),
      recv_posted_(res_->ring_size()),
      signal_every_(std::clamp<uint32_t>(res_->send_depth / 4, 1, 64)),
      spin_(SpinTime(res_->plan.spin_us)),
      pool_(&device_->rndv_pool()),
      own_chunks_(device_->pd(), device_->name(), device_->send_share(), RndvPool::kChunkSize),
      rndv_threshold_(2 * fragment_size_) {
  for (uint32_t i = 0; i < res_->staging_chunks(); ++i) free_chunks_.push_back(i);
  ring_can_grow_ = res_->ring_size() < res_->recv_depth;
  staging_can_grow_ = res_->staging_chunks() < res_->staging_max;
  res_->device->Watch(local_.qpn, [this](int type) { OnAsyncEvent(type); });
}

RdmaChannel::~RdmaChannel() {
  Close();
  res_->device->Unwatch(local_.qpn);
  if (watching_fd_) res_->group->Watch(local_.qpn, -1);
  DrainAfterError();
  FreeExposures();  // before the QP they are bound to
  FreeSendWindow();
  res_.reset();
  direct_mr_.reset();
  ReturnChunks();
  if (wake_fd_ >= 0) close(wake_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (sleep_fd_ >= 0) close(sleep_fd_);
}

Status RdmaChannel::status() const {
  std::lock_guard lock(mu_);
  if (closed_) return Status::Cancelled("channel closed");
  if (!error_.ok()) return error_;
  if (peer_closed_) return Status::Unavailable("channel closed by peer");
  return Status::Ok();
}

Status RdmaChannel::Unusable(Side side) const {
  if (closed_) return Status::Cancelled("channel closed");
  if (!error_.ok()) return error_;
  if (side == Side::kSend && peer_closed_) return Status::Unavailable("channel closed by peer");
  if (side == Side::kRecv && recv_saw_close_) return Status::Unavailable("channel closed by peer");
  return Status::Ok();
}

Status RdmaChannel::WaitFor(Lock& lock, const std::function<bool()>& done, LazyDeadline& wait,
                            Side side) {
  // nullopt while the wait goes on; else how it ended.
  auto settled = [&]() -> std::optional<Status> {
    Drain();
    if (Status usable = Usable(side); !usable.ok()) return usable;
    if (done()) return Status::Ok();
    return std::nullopt;
  };
  // kLooksPerClock looks, pausing between them: the clock is read after.
  auto spin = [&](uint32_t* steps) -> std::optional<Status> {
    for (bool clock = false; !clock;) {
      lock.unlock();
      clock = SpinStep(steps);
      lock.lock();
      if (auto over = settled()) return over;
    }
    return std::nullopt;
  };
  if (auto at_once = settled()) return std::move(*at_once);
  uint32_t steps = 0;
  if (spin_.count() > 0 && !wait.immediate()) {  // before the first clock read
    if (auto over = spin(&steps)) return std::move(*over);
  }
  // A long wait is logged at debug; otherwise a wait without a deadline
  // sleeps without a timer (poll with no timeout, as a blocking read), and
  // without a spin nor a report it never reads the clock.
  const bool report = ClientLog().should_log(spdlog::level::debug);
  const bool timed = report || spin_.count() > 0 || !wait.forever();
  const auto start = timed ? Clock::now() : Clock::time_point();
  const Deadline deadline = wait.get(start);
  const auto spin_end = start + spin_;
  auto report_at = report ? start + kLongWait : Clock::time_point::max();
  for (auto now = start;; now = timed ? Clock::now() : now) {
    if (now >= report_at) {  // what it waits on, for the debug log
      ClientLog().debug("RDMA channel {} QP {:#x}: {} waiting {} ms: {}", info_.id, local_.qpn,
                        side == Side::kSend ? "sender" : "receiver",
                        std::chrono::duration_cast<std::chrono::milliseconds>(now - start).count(),
                        StateForLog());
      report_at = now + kLongWait;
    }
    if (deadline && now >= *deadline) {
      if (ClientLog().should_log(spdlog::level::debug)) {
        ClientLog().debug("RDMA channel {} QP {:#x}: timed out: {}", info_.id, local_.qpn,
                          StateForLog());
      }
      return Status::DeadlineExceeded("timed out");
    }
    if (now < spin_end) {
      if (auto over = spin(&steps)) return std::move(*over);
      continue;
    }
    // Sleeps until news, the deadline, or the next report of a long wait.
    Deadline until = deadline;
    if (report) until = deadline ? std::min(*deadline, report_at) : report_at;
    if (!poller_) {
      Sleep(lock, until);
    } else {
      WaitOnCv(lock, until);
    }
    if (auto over = settled()) return std::move(*over);
  }
}

std::string RdmaChannel::StateForLog() const {
  return fmt::format(
      "credits {} owed {} sq {}/{} recv posted {} ready {} notes {} | rndv sent {} send chunks {} "
      "recv chunks {} reads {}/{} unread {} done owed {} | pool free {} | poller {} error {}",
      credits_.credits(), credits_.owed(), sq_outstanding_, res_->send_depth, recv_posted_,
      ready_.size(), notes_.size(), rndv_sent_.size(), own_chunks_.taken(), recv_chunks_,
      reads_done_, reads_posted_, rndv_unread_, done_owed_, pool_->free_chunks(), poller_,
      error_.ok() ? "none" : error_.ToString());
}

// Reposts the slot Release left (DeferRepost), then processes every
// completion waiting in the CQ. Returns how many.
int RdmaChannel::Drain() {
  ibv_wc wc[kPollBatch];
  int total = 0;
  ++wait_counts_.drains;
  const bool reposted = RepostDeferred();
  drain_now_ns_ = 0;
  for (;;) {
    bool more = false;
    int n = 0;
    if (res_->group) {  // ours, in order; the other members' set aside
      n = res_->group->Poll(local_.qpn, wc, kPollBatch, &more);
    } else {
      n = ibv_poll_cq(res_->cq, kPollBatch, wc);
      more = n == kPollBatch;
    }
    if (n < 0) {
      Fail(Status::Unavailable("ibv_poll_cq failed on " + local_.device));
      break;
    }
    OnCompletions(wc, n);
    total += n;
    if (!more) break;
  }
  return AfterDrain(total, reposted);
}

void RdmaChannel::OnCompletions(const ibv_wc* wc, int n) {
  draining_ = true;
  for (int i = 0; i < n; ++i) OnCompletion(wc[i]);
  draining_ = false;
}

int RdmaChannel::AfterDrain(int total, bool reposted) {
  if (!rails_.empty()) total += PollRails();
  if (total > 0 || reposted) MaybeSendCredits();
  if (total > 0) {
    if (!rail_outbox_.empty()) FlushRails();
    NotifyWaiters();
  }
  if (!redo_.empty() || !notes_out_.empty()) FlushBatchWork();
  return total;
}

void RdmaChannel::OnCompletion(const ibv_wc& wc) {
  WrKind kind = WrIdKind(wc.wr_id);
  if (kind == WrKind::kBatch) {
    OnBatchCompletion(wc);
    return;
  }
  if (kind == WrKind::kRecv) {
    --recv_posted_;
  } else {
    --sq_outstanding_;
    if (kind == WrKind::kControl) ++control_completions_;
    OnSendCovered(wc);
    if (kind == WrKind::kStaged) free_chunks_.push_back(WrIdIndex(wc.wr_id));
    if (kind == WrKind::kZeroCopy) --zero_copy_outstanding_;
    if (kind == WrKind::kOneSided) --one_sided_outstanding_;
  }
  if (wc.status != IBV_WC_SUCCESS) {
    if (error_.ok()) Fail(CompletionError(wc));
    return;
  }
  if (kind == WrKind::kRecv) OnReceive(wc);
  if (kind == WrKind::kExpose) ++exposures_done_;
  if (kind == WrKind::kWindow) ++window_ops_done_;
  if (kind == WrKind::kRndvRead) {
    ++reads_done_;
    ++done_owed_;
    --rndv_unread_;
  }
}

// The unsignaled inline SENDs a send completion accounts for: on success a
// signaled SEND's covered ones (done before it); in error each flushes on
// its own. A failed signaled SEND's covered ones either completed silently
// or flush on their own; neither holds a buffer, so they are let go.
void RdmaChannel::OnSendCovered(const ibv_wc& wc) {
  WrKind kind = WrIdKind(wc.wr_id);
  if (kind != WrKind::kSend && kind != WrKind::kStaged && kind != WrKind::kZeroCopy &&
      kind != WrKind::kControl && kind != WrKind::kOneSided && kind != WrKind::kWake) {
    return;  // Submit's segments account for theirs (OnBatchCompletion)
  }
  if ((kind == WrKind::kSend || kind == WrKind::kControl) &&
      WrIdIndex(wc.wr_id) == kUnsignaledIndex) {
    silent_ -= std::min(silent_, 1u);  // flushed (success is never reported)
    return;
  }
  if (wc.status != IBV_WC_SUCCESS) return;
  uint32_t covered = std::min(WrIdCovered(wc.wr_id), silent_);
  sq_outstanding_ -= std::min(sq_outstanding_, covered);
  silent_ -= covered;
}

void RdmaChannel::OnReceive(const ibv_wc& wc) {
  if (std::optional<Imm> imm = AcceptReceive(wc)) OnReceived(wc, *imm);
}

std::optional<Imm> RdmaChannel::AcceptReceive(const ibv_wc& wc) {
  std::optional<Imm> imm;
  if (wc.wc_flags & IBV_WC_WITH_IMM) imm = DecodeImm(ntohl(wc.imm_data));
  if (!imm) {
    Fail(Status(StatusCode::kDataLoss,
                "RDMA channel: malformed message from the peer (immediate data)"));
    return std::nullopt;
  }
  if (!credits_.OnCreditsReturned(imm->credits, remote_.ring_slots)) {
    Fail(Status(StatusCode::kDataLoss,
                "RDMA channel: the peer returned more credits than its ring holds"));
    return std::nullopt;
  }
  if (imm->done > 0) OnRndvDone(imm->done);
  return imm;
}

void RdmaChannel::OnReceived(const ibv_wc& wc, const Imm& imm) {
  uint32_t slot = WrIdIndex(wc.wr_id);
  Fragment f;
  f.slot = slot;
  switch (imm.type) {
    case MessageType::kData:
      f.len = wc.byte_len;
      f.first = imm.first;
      f.last = imm.last;
      ready_.push_back(f);
      if (imm.last) signal_.Notify();
      break;
    case MessageType::kCredit: Repost(slot); break;
    case MessageType::kRndv: OnRndvFragment(wc, slot, imm); break;
    case MessageType::kNotify:
      f.len = wc.byte_len;
      notes_.push_back(f);
      signal_.Notify();
      break;
    case MessageType::kRail: {
      uint8_t raw[kRailMessageBytes] = {};
      uint32_t n = std::min<uint32_t>(wc.byte_len, kRailMessageBytes);
      std::memcpy(raw, res_->slot(slot), n);
      Repost(slot);
      OnRailMessage(raw, wc.byte_len);
      break;
    }
    case MessageType::kClose:
      peer_closed_ = true;
      f.close = true;
      ready_.push_back(f);
      signal_.Notify();
      break;
  }
}

void RdmaChannel::Repost(uint32_t slot) {
  if (PostSlot(slot)) credits_.OnReposted();
}

bool RdmaChannel::PostSlot(uint32_t slot) {
  if (closed_ || !error_.ok()) return false;
  Status s = res_->PostRecv(slot);
  if (!s.ok()) {
    Fail(s);
    return false;
  }
  ++recv_posted_;
  return true;
}

void RdmaChannel::DeferRepost(uint32_t slot) {
  RepostDeferred();
  if (credits_.OnTaken()) {
    deferred_slot_ = slot;
  } else {
    Repost(slot);
  }
}

bool RdmaChannel::RepostDeferred() {
  if (!deferred_slot_) return false;
  const uint32_t slot = *std::exchange(deferred_slot_, std::nullopt);
  if (!PostSlot(slot)) return false;
  credits_.OnDeferredReposted();
  return true;
}

void RdmaChannel::MaybeSendCredits() {
  if (peer_closed_ || !error_.ok()) return;
  // The deferred slot was taken: it holds no message.
  const uint32_t holding = res_->ring_size() - recv_posted_ - (deferred_slot_ ? 1 : 0);
  if (ring_can_grow_ && !closed_ && credits_.HalfRingUsed(holding)) GrowRing();
  // Closing: no more credits for the peer, but what we finished (or will
  // never) read of its memory, so that its Close need not wait for us.
  bool due = (!closed_ && credits_.CreditMessageDue()) || (DoneDue() && credits_.CanSendControl());
  if (due && sq_outstanding_ < res_->send_depth) {
    Status s = PostControl(MessageType::kCredit);
    if (!s.ok()) Fail(s);
  }
}

// The peer used half the ring before this side returned credits (its
// messages waiting to be taken, or taken and owed): the ring goes to its
// full size, its new slots owed to the peer as credits.
// Without the memory (RLIMIT_MEMLOCK) the channel keeps its small ring.
void RdmaChannel::GrowRing() {
  ring_can_grow_ = false;
  std::optional<uint32_t> first =
      Grown(res_->GrowRing(), "receive ring", res_->ring_size(), "slots");
  if (!first) return;
  for (uint32_t i = *first; i < res_->ring_size(); ++i) {
    if (Status s = res_->PostRecv(i); !s.ok()) return Fail(s);
    ++recv_posted_;
  }
  credits_.OnRingGrown(res_->ring_size() - *first);
  ClientLog().debug("RDMA channel: QP {:#x} receive ring grown to {} slots", local_.qpn,
                    res_->ring_size());
}

void RdmaChannel::GrowStagingForTesting() {
  Lock lock(mu_);
  GrowStaging();
}

uint32_t RdmaChannel::ReadDepthForTesting() const {
  Lock lock(mu_);
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(res_->qp, &attr, IBV_QP_MAX_QP_RD_ATOMIC, &init) != 0) return 0;
  return attr.max_rd_atomic;
}

size_t RdmaChannel::registered_bytes() const {
  Lock lock(mu_);
  return res_->registered_bytes();
}

Status RdmaChannel::WaitToPostFragmentSlow(Lock& lock, bool staged) {
  if (staged && free_chunks_.empty() && staging_can_grow_) {
    if (res_->staging_chunks() > 0) Drain();  // none in flight before the first
    if (free_chunks_.empty()) GrowStaging();
  }
  if (staged && res_->staging_chunks() == 0) {
    return Status::ResourceExhausted(
        "RDMA channel: no staging chunk for a message from unregistered memory could be "
        "registered (RLIMIT_MEMLOCK?); send it from registered memory or inline");
  }
  auto can_post = [&] { return CanPostFragment(staged); };
  if (can_post()) return Status::Ok();
  return WaitFor(lock, can_post, std::nullopt, Side::kSend);
}

void RdmaChannel::GrowStaging() {
  std::optional<uint32_t> first =
      Grown(res_->GrowStaging(), "staging area", res_->staging_chunks(), "chunks");
  staging_can_grow_ = first.has_value() && res_->staging_chunks() < res_->staging_max;
  if (!first) return;
  for (uint32_t i = *first; i < res_->staging_chunks(); ++i) free_chunks_.push_back(i);
}

std::optional<uint32_t> RdmaChannel::Grown(const StatusOr<uint32_t>& first, const char* what,
                                           uint32_t kept, const char* unit) const {
  if (first.ok()) return *first;
  ClientLog().warn("RDMA channel: QP {:#x} keeps its {} of {} {}: {}", local_.qpn, what, kept, unit,
                   first.status().message());
  return std::nullopt;
}

// A CREDIT or CLOSE message: no payload. Precondition: a credit, a send slot.
Status RdmaChannel::PostControl(MessageType type) {
  Imm imm;
  imm.type = type;
  imm.credits = credits_.OnSend();
  imm.done = TakeDone();
  // A CREDIT gives nothing back when it completes: signaled only as every
  // signal_every_-th SEND is (a completion at this side, which would wake
  // a receiver asleep for the peer's next message).
  bool signaled = type != MessageType::kCredit || uncovered_ + 1 >= signal_every_;
  ibv_send_wr wr{};
  wr.wr_id = signaled ? WithCovered(MakeWrId(WrKind::kControl, 0), uncovered_)
                      : MakeWrId(WrKind::kControl, kUnsignaledIndex);
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
  wr.imm_data = htonl(EncodeImm(imm));
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(res_->qp, &wr, &bad); rc != 0) {
    return Status::Unavailable(std::string("ibv_post_send (control): ") + std::strerror(rc));
  }
  CountSendPosted(signaled);
  if (type == MessageType::kCredit) ++credit_messages_;
  return Status::Ok();
}

Status RdmaChannel::CompletionError(const ibv_wc& wc) const {
  char text[512];
  std::snprintf(text, sizeof(text),
                "RDMA %s failed on %s QP 0x%x (peer QP 0x%x): %s (wc status %d, vendor error 0x%x)",
                OpName(WrIdKind(wc.wr_id), one_sided_op_), local_.device.c_str(), local_.qpn,
                remote_.qpn, ibv_wc_status_str(wc.status), int(wc.status), wc.vendor_err);
  std::string msg = text;
  switch (wc.status) {
    case IBV_WC_RETRY_EXC_ERR:
      return Status::Unavailable(
          msg + "; the peer did not answer: wrong GID/QPN, peer gone, or no route");
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return Status::Unavailable(msg + "; the peer had no receive posted");
    case IBV_WC_WR_FLUSH_ERR:
      return Status::Unavailable(msg + "; the QP had entered the error state");
    case IBV_WC_LOC_LEN_ERR:
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_QP_OP_ERR: return Status::Internal(msg);
    default: return Status::Unavailable(msg);
  }
}

void RdmaChannel::Fail(Status status) {
  if (error_.ok()) {
    error_ = std::move(status);
    if (!closed_) ClientLog().warn("{}", error_.message());
  }
  FailBatches();
  for (const auto& rail : rails_) {  // what they have in flight flushes
    if (rail->outstanding > 0) TakeRailOut(*rail, "the channel failed");
  }
  Wake();
  WakeBlockedSleeper(/*broken=*/true);
  signal_.Notify();
  NotifyWaiters();
}

void RdmaChannel::Wake() {
  uint64_t one = 1;
  if (wake_fd_ >= 0 && write(wake_fd_, &one, sizeof(one)) < 0 && errno != EAGAIN) {
    ClientLog().warn("RDMA channel: eventfd write: {}", std::strerror(errno));
  }
}

void RdmaChannel::OnAsyncEvent(int event_type) {
  if (event_type != IBV_EVENT_QP_FATAL && event_type != IBV_EVENT_QP_REQ_ERR &&
      event_type != IBV_EVENT_QP_ACCESS_ERR && event_type != IBV_EVENT_PATH_MIG_ERR) {
    return;
  }
  std::lock_guard lock(mu_);
  Fail(Status::Unavailable("RDMA channel on " + local_.device + " QP " +
                           std::to_string(local_.qpn) + ": async event " +
                           ibv_event_type_str(static_cast<ibv_event_type>(event_type))));
}

void RdmaChannel::Close() {
  Lock lock(mu_);
  if (closed_) return;
  closed_ = true;
  Wake();
  WakeBlockedSleeper(/*broken=*/!error_.ok() || peer_closed_);
  signal_.Notify();
  NotifyWaiters();
  TellPeerClosed(lock);
  // Still asleep in a read: what would wake it did not complete (a peer
  // that does not answer holds a WRITE for the QP's retries).
  WakeBlockedSleeper(/*broken=*/true);
}

// Close: delivers what the peer may still need, then the CLOSE (mu_ held).
void RdmaChannel::TellPeerClosed(Lock& lock) {
  Drain();  // the peer's CLOSE may be waiting in the CQ
  if (!error_.ok() || peer_closed_) return;
  // What the peer sent us by rendezvous will not be read now: report it
  // done, so that the peer may reuse that memory (and its own Close need
  // not wait for us). Descriptors arriving from now on are done at once.
  DropUnreadRndv();
  MaybeSendCredits();  // later ones go with the completions Drain takes (a returned credit)
  CoverBatches(lock, Clock::now());  // batches in flight finish as they did
  auto pump = [&](Clock::time_point deadline, const std::function<bool()>& done) {
    while (Drain(), !done() && error_.ok() && !peer_closed_ && Clock::now() < deadline) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      lock.lock();
    }
    return done() && error_.ok() && !peer_closed_;
  };
  // Our messages that went by rendezvous wait in our memory until the
  // peer has READ them, and the peer reports nothing after our CLOSE:
  // first give it the time to read them (it does as its application
  // receives), else they would be lost with the QP.
  if (!rndv_sent_.empty() &&
      !pump(Clock::now() + kFlushGrace, [&] { return rndv_sent_.empty(); })) {
    if (!error_.ok() || peer_closed_) return;
    ClientLog().info(
        "RDMA channel {} QP {:#x}: closing with {} rendezvous piece(s) the peer has not read "
        "within {} s",
        info_.id, local_.qpn, rndv_sent_.size(), kFlushGrace.count());
  }
  // Tell the peer: CLOSE needs a credit and a send slot; wait a little for
  // them, then for the CLOSE (and everything before it) to complete.
  auto deadline = Clock::now() + kCloseGrace;
  if (!pump(deadline,
            [&] { return credits_.CanSendControl() && sq_outstanding_ < res_->send_depth; })) {
    ClientLog().info("RDMA channel {} QP {}: could not tell the peer about the close",
                     local_.device, local_.qpn);
    return;
  }
  if (Status s = PostControl(MessageType::kClose); !s.ok()) return;
  // Unsignaled batch work requests left (no slot for their marker) are
  // before the CLOSE: done when it is.
  pump(deadline, [&] { return sq_outstanding_ <= quiet_batch_wrs_; });
}

void RdmaChannel::Abort(const Status& status) {
  Lock lock(mu_);
  if (!error_.ok()) return;
  if (closed_) {  // a Close waiting for the peer stops waiting
    error_ = status;
    return;
  }
  Drain();                   // the peer's own CLOSE may be waiting in the CQ
  if (peer_closed_) return;  // Recv delivers what came before it, then says so
  ClientLog().info("RDMA channel on {} QP {:#x} (peer QP {:#x}): {}", local_.device, local_.qpn,
                   remote_.qpn, status.message());
  error_ = status;
  Fail(status);  // wakes the poller and the waiters
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;  // outstanding work requests flush
  if (int rc = ibv_modify_qp(res_->qp, &attr, IBV_QP_STATE); rc != 0) {
    ClientLog().warn("RDMA channel on {} QP {:#x}: moving the QP to ERR: {}", local_.device,
                     local_.qpn, std::strerror(rc));
  }
}

// Moves the QP to ERR and collects the flushed work requests, so nothing is
// left in flight when the QP is destroyed.
void RdmaChannel::DrainAfterError() {
  Lock lock(mu_);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  ibv_modify_qp(res_->qp, &attr, IBV_QP_STATE);
  auto deadline = Clock::now() + kDrainGrace;
  // Unsignaled inline SENDs hold no buffer, and unsignaled batch work
  // requests before the error completed: what is left of them may go with
  // the QP.
  while (Drain(), (recv_posted_ > 0 || sq_outstanding_ > silent_ + quiet_batch_wrs_) &&
                      Clock::now() < deadline) {
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    lock.lock();
  }
}

}  // namespace rdmad::internal
