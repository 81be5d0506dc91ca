// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel::RecvInto: a message received into the caller's registered
// region. The rendezvous pieces of the message that have arrived and are
// not yet read ahead are RDMA READ straight to their place in the region,
// all at once (as many as the send queue takes); eager fragments and
// pieces already read into pool chunks are copied. Once anything of the
// message has been taken or a READ into the region posted, the call is
// committed to the message: it waits without the deadline until its last
// fragment. A message longer than max_len has its tail read into chunks
// and dropped.

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstring>

#include "client/src/client_log.h"
#include "client/src/rdma/channel_impl.h"
#include "client/src/recv_into.h"

namespace rdmad::internal {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

StatusOr<size_t> RdmaChannel::RecvInto(const MemoryRegion& region, size_t offset, size_t max_len,
                                       std::chrono::milliseconds timeout) {
  RDMAD_RETURN_IF_ERROR(CheckRecvInto(region, offset, max_len));
  auto own = OwnRegion(region, "RecvInto");
  if (!own.ok()) return own.status();
  LazyDeadline deadline(timeout);
  Lock lock(mu_);
  if (in_message_) {
    // A Recv that timed out mid-message holds its start: finish it there.
    lock.unlock();
    return Channel::RecvInto(region, offset, max_len, timeout);
  }
  uint8_t* dst = region.data() + offset;
  if (ready_.empty() && LeanRecvOk(deadline)) {
    if (auto taken = RecvAtWake(lock, deadline, dst, max_len, nullptr)) return *std::move(taken);
  }
  const uint64_t dst_iova = (*own)->iova() + offset;
  size_t got = 0;          // the message's bytes so far
  bool started = false;    // a fragment of the message is taken
  bool committed = false;  // started, or a READ into the region is posted
  auto wait_until = [&]() { return committed ? Deadline() : deadline.get(); };
  auto arrived = [&] { return !ready_.empty(); };
  for (;;) {
    RDMAD_RETURN_IF_ERROR(Usable(Side::kRecv));
    if (ready_.empty()) {
      RDMAD_RETURN_IF_ERROR(committed ? WaitFor(lock, arrived, Deadline(), Side::kRecv)
                                      : WaitFor(lock, arrived, deadline, Side::kRecv));
    }
    // A whole message in one eager fragment (a small one, the common
    // case): copied out of its slot, without the rendezvous's bookkeeping.
    if (!started) {
      const Fragment& front = ready_.front();
      if (front.first && front.last && !front.rndv && !front.close && front.len <= max_len) {
        const Fragment f = front;
        ready_.pop_front();
        const uint8_t* src = FragmentBytes(f);
        CopyOutOfSlot(lock, f.len, [&] { std::memcpy(dst, src, f.len); });
        Release(f);
        return size_t(f.len);
      }
    }
    // READ the message's pieces that have arrived straight into place.
    size_t pos = got;
    for (size_t i = 0; i < ready_.size(); ++i) {
      Fragment& f = ready_[i];
      if (f.close || (i > 0 && f.first)) break;
      if (f.rndv && !f.read_posted && pos + f.len <= max_len &&
          sq_outstanding_ < res_->send_depth) {
        QueueRead(f, dst_iova + pos, (*own)->lkey());
        f.chunk = kIntoRegion;
        committed = true;
      }
      pos += f.len;
      if (f.last) break;
    }
    RDMAD_RETURN_IF_ERROR(FlushReads());
    if (ready_.front().rndv) {
      if (!ready_.front().read_posted) {
        RDMAD_RETURN_IF_ERROR(FetchFront(lock, wait_until()));
      } else {
        uint64_t seq = ready_.front().read_seq;
        RDMAD_RETURN_IF_ERROR(WaitFor(
            lock, [&] { return reads_done_ > seq; }, wait_until(), Side::kRecv));
      }
    }
    auto popped = PopFragment(started);
    if (!popped.ok()) return popped.status();
    Fragment f = *popped;
    started = committed = true;
    size_t keep = got < max_len ? std::min<size_t>(f.len, max_len - got) : 0;
    if (f.chunk != kIntoRegion && keep > 0) {
      const uint8_t* src = FragmentBytes(f);
      CopyOutOfSlot(lock, keep, [&] { std::memcpy(dst + got, src, keep); });
    }
    got += f.len;
    Release(f);
    if (f.last) {
      if (got > max_len) return RecvIntoTooLong(got, max_len);
      return got;
    }
  }
}

// Not for a call that must not wait (a timeout of 0), a completion group
// (a CQ shared), rails (theirs to poll too) or the debug log's report of
// long waits: WaitFor does those.
bool RdmaChannel::LeanRecvOk(const LazyDeadline& deadline) const {
  return !deadline.immediate() && res_->group == nullptr && rails_.empty() &&
         !ClientLog().should_log(spdlog::level::debug);
}

// What WaitFor, Drain, OnReceive and Release do for one message, less
// their generality: the ready queue, the predicate, a second drain after
// the wake-up and a second credit check. Spins as WaitFor does (spin_,
// kLooksPerClock looks before the first clock read), then sleeps as Sleep
// does: in one read without a deadline, else with a timer.
std::optional<StatusOr<size_t>> RdmaChannel::RecvAtWake(Lock& lock, LazyDeadline& deadline,
                                                        uint8_t* dst, size_t max_len,
                                                        std::vector<uint8_t>* out) {
  bool spinning = spin_.count() > 0;
  uint32_t steps = 0;
  std::optional<Clock::time_point> spin_end;
  for (;;) {
    if (Status usable = Usable(Side::kRecv); !usable.ok()) return StatusOr<size_t>(usable);
    ++wait_counts_.drains;
    const bool reposted = RepostDeferred();
    ibv_wc wc[kPollBatch];
    const int n = ibv_poll_cq(res_->cq, kPollBatch, wc);
    if (n < 0) {
      Fail(Status::Unavailable("ibv_poll_cq failed on " + local_.device));
      continue;  // Usable says so
    }
    drain_now_ns_ = 0;
    if (n == 1 && WrIdKind(wc[0].wr_id) == WrKind::kRecv && wc[0].status == IBV_WC_SUCCESS) {
      --recv_posted_;
      std::optional<Imm> imm = AcceptReceive(wc[0]);
      if (!imm) continue;  // failed the channel
      if (imm->type == MessageType::kData && imm->first && imm->last && wc[0].byte_len <= max_len) {
        const uint32_t slot = WrIdIndex(wc[0].wr_id);
        const uint8_t* src = res_->slot(slot);
        const size_t len = wc[0].byte_len;
        if (out != nullptr) {
          CopyOutOfSlot(lock, len, [&] { out->assign(src, src + len); });
        } else {
          CopyOutOfSlot(lock, len, [&] { std::memcpy(dst, src, len); });
        }
        DeferRepost(slot);
        AfterDrain(1, reposted);
        ++wait_counts_.taken_at_wake;
        return StatusOr<size_t>(len);
      }
      draining_ = true;
      OnReceived(wc[0], *imm);
      draining_ = false;
      AfterDrain(1, reposted);
      return std::nullopt;
    }
    OnCompletions(wc, n);
    AfterDrain(n, reposted);
    if (n > 0 || !ready_.empty() || poller_) return std::nullopt;
    if (spinning) {
      lock.unlock();
      const bool clock = SpinStep(&steps);
      lock.lock();
      if (clock) {
        const auto now = Clock::now();
        if (!spin_end) spin_end = now + spin_;
        const Deadline at = deadline.get(now);
        if (at && now >= *at) return StatusOr<size_t>(Status::DeadlineExceeded("timed out"));
        spinning = now < *spin_end;
      }
      continue;
    }
    const Deadline at = deadline.get();
    if (at && Clock::now() >= *at) return StatusOr<size_t>(Status::DeadlineExceeded("timed out"));
    Sleep(lock, at);
    if (!ready_.empty()) return std::nullopt;  // its drain before the sleep found some
  }
}

}  // namespace rdmad::internal
