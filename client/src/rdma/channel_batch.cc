// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: Submit's batches of one-sided operations. A batch's RDMA
// WRITE / READ work requests (ops split at the port's max message size)
// are chained and posted with one ibv_post_send per segment: as many as
// the send queue has free slots, only the segment's last one signaled. RC
// completes work requests in order, so a segment's signaled completion
// frees its every slot, and the batch is done with its last segment's. A
// failed work request completes with an error even when unsignaled: it
// names the op that failed, and the channel fails with it (the QP is in
// the error state, its other work requests flush).

#include <infiniband/verbs.h>
#include <sys/epoll.h>  // EPOLL_CTL_MOD

#include <algorithm>
#include <cstring>

#include "client/src/rdma/channel_impl.h"

namespace rdmad::internal {
namespace {

constexpr uint64_t kMaxWorkRequestBytes = 1ull << 30;

}  // namespace

// The handle Submit returns: the channel and the batch's state.
class RdmaTransfer final : public Transfer {
 public:
  RdmaTransfer(RdmaChannel* channel, std::shared_ptr<RdmaChannel::Batch> batch)
      : channel_(channel), batch_(std::move(batch)) {}
  Status Wait(std::chrono::milliseconds timeout) override {
    return channel_->WaitBatch(batch_, timeout);
  }
  bool Poll(Status* status) override { return channel_->PollBatch(batch_, status); }
  int failed_op() const override {
    std::lock_guard lock(channel_->mu_);
    return batch_->failed_op;
  }

 private:
  RdmaChannel* const channel_;
  const std::shared_ptr<RdmaChannel::Batch> batch_;
};

StatusOr<std::unique_ptr<Transfer>> RdmaChannel::Submit(const std::vector<TransferOp>& ops,
                                                        std::string_view notification) {
  RDMAD_RETURN_IF_ERROR(ValidateTransferOps(ops));
  RDMAD_RETURN_IF_ERROR(ValidateNotification(notification));
  // Scratch of this thread, reused by its Submits: a batch of one op
  // allocates only what outlives the call (the batch and its handle).
  thread_local std::vector<const RdmaMemoryRegion*> regions;
  thread_local std::vector<ibv_sge> sges;
  thread_local std::vector<ibv_send_wr> wrs;
  RDMAD_RETURN_IF_ERROR(OwnOpRegions(ops, "Submit", &regions));
  auto batch = std::make_shared<Batch>();
  batch->op_count = uint32_t(ops.size());
  if (meter_ != nullptr) batch->started_ns = MeterNowNs();
  Lock lock(mu_);
  RDMAD_RETURN_IF_ERROR(Usable(Side::kSend));
  AddBatch(batch);
  // Large ops on a channel with rails: their rails' pieces first
  // (channel_batch_rails.cc); the first QP takes the rest.
  std::vector<uint64_t> first_len;  // only with rails: each op's first-QP share
  if (!rails_.empty()) {
    for (const TransferOp& op : ops) first_len.push_back(op.len);
    batch->ops = ops;
    batch->regions = regions;
    StripeBatch(lock, batch, first_len);
  }
  sges.clear();
  wrs.clear();
  for (size_t i = 0; i < ops.size(); ++i) {
    uint64_t len = first_len.empty() ? ops[i].len : first_len[i];
    AppendBatchWrs(*batch, uint32_t(i), ops[i], *regions[i], 0, len, sges, wrs);
    (ops[i].kind == TransferOp::Kind::kWrite ? first_written_ : first_read_) += len;
  }
  RDMAD_RETURN_IF_ERROR(PostBatch(lock, batch, wrs.data(), sges.data(), wrs.size(),
                                  BatchTotals::Of(ops), notification));
  return std::unique_ptr<Transfer>(new RdmaTransfer(this, batch));
}

Status RdmaChannel::OwnOpRegions(const std::vector<TransferOp>& ops, const char* what,
                                 std::vector<const RdmaMemoryRegion*>* regions) const {
  regions->clear();
  for (size_t i = 0; i < ops.size(); ++i) {
    auto own = OwnRegion(*ops[i].local, what);
    if (!own.ok()) {  // "WHAT: op I: ...", the op named only when it is wrong
      std::string why = own.status().message();
      why.insert(std::strlen(what), ": op " + std::to_string(i));
      return Status(own.status().code(), why);
    }
    regions->push_back(own.value());
  }
  return Status::Ok();
}

void RdmaChannel::AddBatch(const std::shared_ptr<Batch>& batch) { batch->id = batches_.Add(batch); }

Status RdmaChannel::PostBatch(Lock& lock, const std::shared_ptr<Batch>& batch, ibv_send_wr* wrs,
                              ibv_sge* sges, size_t count, const BatchTotals& totals,
                              std::string_view notification) {
  if (notification.empty() && count > 0 && count <= res_->send_depth - sq_outstanding_ &&
      redo_.empty() && notes_out_.empty() && !batch->done) {
    // The common case in a pipeline: one segment, posted at once, without
    // the loop's waits, the notification and the finish below (a batch
    // still in the queue is not done). A failed post failed the channel,
    // and the batch with it.
    if (PostSegment(*batch, 0, wrs, sges, count).ok()) {
      batch->posting = false;
      if (meter_ != nullptr) meter_->Batch(totals);
    }
    return Status::Ok();
  }
  for (size_t posted = 0; posted < count && !batch->done;) {
    auto has_slot = [&] { return sq_outstanding_ < res_->send_depth; };
    if (!has_slot()) {
      Status waited = WaitFor(lock, has_slot, std::nullopt, Side::kSend);
      if (!waited.ok()) {
        // What was posted is failing with the channel; the rest never starts.
        if (posted == 0 && batch->pieces.empty()) {
          batches_.Erase(batch->id);
          return waited;
        }
        if (!batch->done) {
          batch->status = waited;
          batch->done = true;
          batches_.Erase(batch->id);
        }
        return Status::Ok();
      }
    }
    size_t n = std::min<size_t>(res_->send_depth - sq_outstanding_, count - posted);
    if (!PostSegment(*batch, uint32_t(posted), &wrs[posted], &sges[posted], n).ok()) {
      return Status::Ok();  // the channel failed, and the batch with it
    }
    posted += n;
  }
  if (!notification.empty() && !batch->done) {
    const bool reads = totals.reads > 0;
    if (batch->open_pieces > 0 || batch->redo > 0 || !notes_out_.empty()) {
      // After its rails' pieces (and the notifications before it).
      batch->note = std::string(notification);
      batch->fence = reads;
      batch->note_waits = true;
      notes_out_.push_back(batch);
    } else if (Status notified = PostNotification(lock, notification, reads);
               !notified.ok() && !batch->done) {
      batch->status = notified;
      batch->done = true;
      batches_.Erase(batch->id);
    }
  }
  batch->posting = false;
  if (meter_ != nullptr) meter_->Batch(totals);
  if (!redo_.empty() || !notes_out_.empty()) FlushBatchWork();
  MaybeFinishBatch(batch);
  return Status::Ok();
}

uint64_t RdmaChannel::BatchMaxWr() const {
  return std::min<uint64_t>(kMaxWorkRequestBytes,
                            res_->max_msg_size ? res_->max_msg_size : kMaxWorkRequestBytes);
}

uint32_t RdmaChannel::BatchWrsFor(uint64_t len) const {
  uint64_t max_wr = BatchMaxWr();
  return len == 0 ? 1 : uint32_t((len + max_wr - 1) / max_wr);
}

void RdmaChannel::AppendBatchWrs(Batch& batch, uint32_t op, const TransferOp& o,
                                 const RdmaMemoryRegion& region, uint64_t offset, uint64_t len,
                                 std::vector<ibv_sge>& sges, std::vector<ibv_send_wr>& wrs) {
  uint64_t max_wr = BatchMaxWr();
  // A zero-length op is one work request all the same (it orders as one).
  if (len == 0 && o.len != 0) return;  // all of it on the rails
  for (uint64_t done = 0; done < len || (len == 0 && done == 0);) {
    auto n = static_cast<uint32_t>(std::min<uint64_t>(max_wr, len - done));
    ibv_sge sge{};
    sge.addr = region.iova() + o.local_offset + offset + done;
    sge.length = n;
    sge.lkey = region.lkey();
    sges.push_back(sge);
    ibv_send_wr wr{};
    wr.opcode = o.kind == TransferOp::Kind::kWrite ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
    wr.num_sge = 1;
    wr.wr.rdma.remote_addr = o.remote.address + o.remote_offset + offset + done;
    wr.wr.rdma.rkey = o.remote.rkey;
    wrs.push_back(wr);
    if (batch.op_count > 1) batch.op_of_wr.push_back(op);
    ++batch.wrs;
    done += n;
    if (len == 0) break;
  }
}

bool RdmaChannel::SignalSegment(size_t n) const {
  // Into an empty queue (a lone batch): signaled, as its Wait would
  // otherwise post a marker after it.
  if (!rails_.empty() || sq_outstanding_ == 0) return true;
  // A full queue holds a signaled segment: its completion frees slots (for
  // CoverBatches' marker too).
  return unsignaled_run_ + n >= signal_every_ ||
         (sq_outstanding_ + n >= res_->send_depth && signaled_in_flight_ == 0);
}

Status RdmaChannel::PostSegment(Batch& batch, uint32_t first_wr, ibv_send_wr* wrs, ibv_sge* sges,
                                size_t n) {
  const bool signaled = SignalSegment(n);
  for (size_t k = 0; k < n; ++k) {
    wrs[k].wr_id = MakeBatchWrId(batch.id, first_wr + uint32_t(k));
    wrs[k].sg_list = &sges[k];
    wrs[k].send_flags = k + 1 == n && signaled ? IBV_SEND_SIGNALED : 0;
    wrs[k].next = k + 1 == n ? nullptr : &wrs[k + 1];
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(res_->qp, wrs, &bad); rc != 0) {
    Status failed = Status::Unavailable(std::string("RDMA channel: ibv_post_send (Submit): ") +
                                        std::strerror(rc));
    Fail(failed);
    // Work requests before `bad` were posted; they flush with the QP.
    size_t accepted = bad == nullptr ? 0 : size_t(bad - wrs);
    sq_outstanding_ += uint32_t(accepted);
    batch_flushing_ = true;
    return failed;
  }
  batch.last_segment = AddSegment({batch.id, first_wr, uint32_t(n), 0, signaled});
  ++batch.segments;
  return Status::Ok();
}

uint64_t RdmaChannel::AddSegment(Segment segment) {
  sq_outstanding_ += segment.wrs;
  if (segment.signaled) {
    segment.covered = uncovered_;
    uncovered_ = 0;
    ++signaled_in_flight_;
    signaled_through_ = segments_posted_ + 1;
    unsignaled_run_ = 0;
  } else {
    unsignaled_run_ += segment.wrs;
    quiet_batch_wrs_ += segment.wrs;
  }
  segments_.push_back(segment);
  return ++segments_posted_;
}

bool RdmaChannel::FinishFrontSegment() {
  Segment segment = segments_.front();
  segments_.pop_front();
  FinishSegment(segment);
  return segment.signaled;
}

void RdmaChannel::CoverBatches(Lock& lock, Deadline deadline) {
  if (signaled_through_ == segments_posted_ || batch_flushing_ || !error_.ok()) return;
  auto has_slot = [&] { return sq_outstanding_ < res_->send_depth; };
  if (!has_slot()) {
    // A full queue holds a signaled work request (SignalSegment): its
    // completion frees slots.
    if (deadline && std::chrono::steady_clock::now() >= *deadline) return;
    if (!WaitFor(lock, has_slot, deadline, Side::kSend).ok()) return;
    if (signaled_through_ == segments_posted_ || batch_flushing_) return;
  }
  ibv_send_wr wr{};
  wr.wr_id = MakeBatchWrId(0, 0);
  wr.opcode = IBV_WR_RDMA_WRITE;  // no sg_list, no remote address or key
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(res_->qp, &wr, &bad); rc != 0) {
    Fail(Status::Unavailable(std::string("RDMA channel: ibv_post_send (a batch's completion "
                                         "marker): ") +
                             std::strerror(rc)));
    return;
  }
  AddSegment({0, 0, 1, 0, true});
}

void RdmaChannel::FinishSegment(const Segment& segment) {
  uint32_t covered = std::min(segment.covered, silent_);
  silent_ -= covered;
  sq_outstanding_ -= std::min(sq_outstanding_, segment.wrs + covered);
  if (segment.signaled) {
    --signaled_in_flight_;
  } else {
    quiet_batch_wrs_ -= std::min(quiet_batch_wrs_, segment.wrs);
  }
  if (segment.quick != 0) {  // done in order: every quick op up to it is
    if (quick_ended_) return;
    quick_done_.store(segment.quick, std::memory_order_release);
    if (segment.started_ns != 0) meter_->Completed(CompletionNowNs() - segment.started_ns);
    ++batches_done_;
    signal_.Notify();
    return;
  }
  const std::shared_ptr<Batch>* found = batches_.Find(segment.batch);
  if (found == nullptr) return;  // a marker, or failed with the channel
  --(*found)->segments;
  MaybeFinishBatch(*found);  // the table's own handle: MaybeFinishBatch erases it last
}

void RdmaChannel::MaybeFinishBatch(const std::shared_ptr<Batch>& batch) {
  if (batch->done || batch->posting || batch->segments > 0 || batch->open_pieces > 0 ||
      batch->redo > 0 || batch->note_waits) {
    return;
  }
  if (batch->started_ns != 0 && batch->status.ok()) {
    meter_->Completed(CompletionNowNs() - batch->started_ns);
  }
  ++batches_done_;
  batch->done = true;
  // Last: `batch` may be the table's handle, and the batch freed with it.
  batches_.Erase(batch->id);
  signal_.Notify();
  NotifyWaiters();
}

uint64_t RdmaChannel::CompletionNowNs() {
  if (!draining_) return MeterNowNs();
  if (drain_now_ns_ == 0) drain_now_ns_ = MeterNowNs();
  return drain_now_ns_;
}

// After the batch's work requests: one NOTIFY fragment (wire.h), fenced
// behind RDMA READs. It waits for a data credit, a send slot and, when not
// inline, a staging chunk, like a message.
Status RdmaChannel::PostNotification(Lock& lock, std::string_view notification, bool fence) {
  auto len = static_cast<uint32_t>(notification.size());
  bool staged = len > res_->max_inline;
  RDMAD_RETURN_IF_ERROR(WaitToPostFragment(lock, staged));
  RDMAD_RETURN_IF_ERROR(Usable(Side::kSend));
  return PostFragment(reinterpret_cast<const uint8_t*>(notification.data()), len, nullptr, true,
                      true, MessageType::kNotify, fence);
}

StatusOr<std::vector<uint8_t>> RdmaChannel::RecvNotification(std::chrono::milliseconds timeout) {
  Lock lock(mu_);
  // Notifications sent before the peer closed are still delivered.
  auto ready = [&] { return !notes_.empty() || peer_closed_; };
  LazyDeadline deadline(timeout);
  if (!ready()) RDMAD_RETURN_IF_ERROR(WaitFor(lock, ready, deadline, Side::kRecv));
  if (notes_.empty()) return Status::Unavailable("channel closed by peer");
  Fragment f = notes_.front();
  notes_.pop_front();
  const uint8_t* src = res_->slot(f.slot);
  std::vector<uint8_t> out(src, src + f.len);
  Repost(f.slot);
  MaybeSendCredits();
  return out;
}

void RdmaChannel::OnBatchCompletion(const ibv_wc& wc) {
  uint32_t id = WrIdBatch(wc.wr_id);
  uint32_t index = WrIdIndex(wc.wr_id);
  if (wc.status == IBV_WC_SUCCESS && !batch_flushing_ && !segments_.empty()) {
    // RC completes in order: this signaled segment, and the unsignaled
    // ones before it.
    ++batch_completions_;
    while (!segments_.empty() && !FinishFrontSegment()) {
    }
    NotifyWaiters();
    return;
  }
  if (wc.status == IBV_WC_SUCCESS) return;  // cannot happen once flushing
  const std::shared_ptr<Batch>* found = batches_.Find(id);
  std::shared_ptr<Batch> batch = found == nullptr ? nullptr : *found;
  if (!batch_flushing_) {
    // The first error: the unsignaled segments before its own, and the
    // work requests of its segment before it, succeeded silently; from now
    // on every work request completes alone. Batch 0's segments are a
    // quick op's (its sequence number's low bits as the index) or a marker.
    auto failed_here = [&](const Segment& s) {
      return s.batch == id && (id != 0 || uint32_t(s.quick) == index);
    };
    while (!segments_.empty() && !segments_.front().signaled && !failed_here(segments_.front())) {
      FinishFrontSegment();
    }
    batch_flushing_ = true;
    if (!segments_.empty() && failed_here(segments_.front())) {
      if (id != 0 && index >= segments_.front().first_wr) {
        sq_outstanding_ -= std::min(sq_outstanding_, index - segments_.front().first_wr);
      }
      if (segments_.front().quick != 0) quick_failed_ = segments_.front().quick;
    }
    segments_.clear();
    signaled_in_flight_ = 0;
    quiet_batch_wrs_ = 0;  // the rest flush, each with its completion
    if (batch != nullptr && !batch->done) {
      if (batch->op_count == 1) {
        batch->failed_op = 0;
      } else {
        batch->failed_op = index < batch->op_of_wr.size() ? int(batch->op_of_wr[index]) : -1;
      }
    }
  }
  --sq_outstanding_;
  if (error_.ok()) Fail(CompletionError(wc));
}

void RdmaChannel::FailBatches() {
  EndQuick(error_);
  batches_.ForEach([&](uint32_t, const std::shared_ptr<Batch>& batch) {
    if (batch->done) return;
    batch->status = error_;
    batch->done = true;
  });
  batches_.Clear();
  redo_.clear();
  notes_out_.clear();
}

Status RdmaChannel::WaitBatch(const std::shared_ptr<Batch>& batch,
                              std::chrono::milliseconds timeout) {
  if (batch->done) return batch->status;  // final once done: no lock to read it
  Lock lock(mu_);
  if (!batch->done) {
    Deadline deadline;
    if (timeout.count() >= 0) deadline = std::chrono::steady_clock::now() + timeout;
    if (batch->last_segment > signaled_through_) CoverBatches(lock, deadline);
    Status waited = WaitFor(
        lock, [&] { return batch->done; }, deadline, Side::kSend);
    if (waited.code() == StatusCode::kDeadlineExceeded && !batch->done) {
      return Status::DeadlineExceeded("Submit: the transfer is still in flight");
    }
    if (!waited.ok() && !batch->done) {  // closed here, or the channel failed
      batch->status = waited;
      batch->done = true;
    }
  }
  return batch->status;
}

uint64_t RdmaChannel::BatchCompletionsForTesting() const {
  std::lock_guard lock(mu_);
  return batch_completions_;
}

RdmaChannel::WaitCounts RdmaChannel::WaitCountsForTesting() const {
  std::lock_guard lock(mu_);
  return wait_counts_;
}

bool RdmaChannel::CompletionChannelInSleepSetForTesting() const {
  std::lock_guard lock(mu_);
  // MOD of what is not in the set fails with ENOENT.
  return sleep_fd_ >= 0 && EpollWatch(sleep_fd_, EPOLL_CTL_MOD, res_->comp_channel->fd) == 0;
}

uint64_t RdmaChannel::CreditMessagesForTesting() const {
  std::lock_guard lock(mu_);
  return credit_messages_;
}

uint64_t RdmaChannel::ControlCompletionsForTesting() const {
  std::lock_guard lock(mu_);
  return control_completions_;
}

uint32_t RdmaChannel::PostedReceivesForTesting() const {
  std::lock_guard lock(mu_);
  return recv_posted_;
}

bool RdmaChannel::PollBatch(const std::shared_ptr<Batch>& batch, Status* status) {
  if (batch->done) {  // final once done: no lock to read it
    if (status != nullptr) *status = batch->status;
    return true;
  }
  Lock lock(mu_);
  if (!batch->done) {
    if (batch->last_segment > signaled_through_)
      CoverBatches(lock, std::chrono::steady_clock::now());
    Drain();
    Status usable = Usable(Side::kSend);
    if (!usable.ok() && !batch->done) {
      batch->status = usable;
      batch->done = true;
    }
  }
  if (batch->done && status != nullptr) *status = batch->status;
  return batch->done;
}

}  // namespace rdmad::internal
