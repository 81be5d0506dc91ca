// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: prepared transfers (Channel::Prepare). The ops are checked,
// their regions looked up and their work requests built once; a Post
// takes the channel's lock and posts those work requests as Submit's
// segments (channel_batch.cc), reusing the batch of the Post before when
// nothing else holds it. A channel with rails prepares with Channel's
// default instead (each Post a Submit), which stripes as Submit does.

#include <infiniband/verbs.h>

#include <cstring>
#include <memory>
#include <vector>

#include "client/src/rdma/channel_impl.h"

namespace rdmad::internal {

// The prepared batch: its ops' totals (for the meter), its work requests
// with their scatter entries (wr_id, sg_list, flags and chain are set at
// each post), and its last Post: a quick op's sequence number and segment
// (quick_ != 0), else the batch (nullptr before the first Post).
class RdmaPreparedTransfer final : public PreparedTransfer {
 public:
  explicit RdmaPreparedTransfer(RdmaChannel* channel) : channel_(channel) {}
  using PreparedTransfer::Post;
  Status Post(std::string_view notification) override {
    return channel_->PostPrepared(*this, notification);
  }
  Status Wait(std::chrono::milliseconds timeout) override {
    if (quick_ != 0) return channel_->WaitQuick(quick_, last_segment_, timeout);
    return batch_ == nullptr ? NotPosted() : channel_->WaitBatch(batch_, timeout);
  }
  bool Poll(Status* status) override {
    if (quick_ != 0) return channel_->PollQuick(quick_, last_segment_, status);
    if (batch_ != nullptr) return channel_->PollBatch(batch_, status);
    if (status != nullptr) *status = NotPosted();
    return true;
  }
  int failed_op() const override {
    std::lock_guard lock(channel_->mu_);
    if (quick_ != 0) return quick_ == channel_->quick_failed_ ? 0 : -1;
    return batch_ == nullptr ? -1 : batch_->failed_op;
  }

 private:
  friend class RdmaChannel;
  RdmaChannel* const channel_;
  std::vector<ibv_sge> sges_;
  std::vector<ibv_send_wr> wrs_;
  RdmaChannel::Batch shape_;  // op_count, wrs and op_of_wr of every Post's batch
  BatchTotals totals_;        // per Post
  std::shared_ptr<RdmaChannel::Batch> batch_;
  uint64_t quick_ = 0, last_segment_ = 0;
};

StatusOr<std::unique_ptr<PreparedTransfer>> RdmaChannel::Prepare(
    const std::vector<TransferOp>& ops) {
  if (!rails_.empty()) return Channel::Prepare(ops);  // rails_ is fixed at the handshake
  RDMAD_RETURN_IF_ERROR(ValidateTransferOps(ops));
  auto prepared = std::make_unique<RdmaPreparedTransfer>(this);
  std::vector<const RdmaMemoryRegion*> regions;
  RDMAD_RETURN_IF_ERROR(OwnOpRegions(ops, "Prepare", &regions));
  prepared->shape_.op_count = uint32_t(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    AppendBatchWrs(prepared->shape_, uint32_t(i), ops[i], *regions[i], 0, ops[i].len,
                   prepared->sges_, prepared->wrs_);
  }
  prepared->totals_ = BatchTotals::Of(ops);
  return std::unique_ptr<PreparedTransfer>(std::move(prepared));
}

void RdmaChannel::Batch::Reuse() {
  // Field by field (a fresh Batch assigned over this one built and freed
  // its empty lists on every Post): what Prepare built stays, every other
  // field as a new batch's. A field added to Batch is reset here too.
  id = 0;
  done = false;
  status = Status::Ok();
  failed_op = -1;
  posting = true;
  segments = 0;
  ops.clear();
  regions.clear();
  pieces.clear();
  open_pieces = 0;
  redo = 0;
  note.clear();
  fence = false;
  note_waits = false;
  started_ns = 0;
  last_segment = 0;
}

Status RdmaChannel::PostPrepared(RdmaPreparedTransfer& prepared, std::string_view notification) {
  if (!notification.empty()) RDMAD_RETURN_IF_ERROR(ValidateNotification(notification));
  Lock lock(mu_);
  std::shared_ptr<Batch>& batch = prepared.batch_;
  if (prepared.quick_ != 0 ? !QuickDone(prepared.quick_) : batch != nullptr && !batch->done) {
    return StillInFlight();
  }
  if (notification.empty() && prepared.wrs_.size() == 1 && sq_outstanding_ < res_->send_depth &&
      redo_.empty() && notes_out_.empty() && Usable(Side::kSend).ok()) {
    PostQuick(prepared);
    return Status::Ok();
  }
  prepared.quick_ = 0;
  // A fresh batch of this transfer's shape; the last one's again once the
  // channel has forgotten it (its op list keeps its memory).
  if (batch == nullptr || batch.use_count() > 1) {
    batch = std::make_shared<Batch>(prepared.shape_);
  } else {
    batch->Reuse();
  }
  if (Status usable = Usable(Side::kSend); !usable.ok()) {  // nothing started: Wait says why
    batch->status = usable;
    batch->done = true;
    return usable;
  }
  batch->started_ns = meter_ != nullptr ? MeterNowNs() : 0;
  AddBatch(batch);
  first_written_ += prepared.totals_.written;
  first_read_ += prepared.totals_.read;
  Status started = PostBatch(lock, batch, prepared.wrs_.data(), prepared.sges_.data(),
                             prepared.wrs_.size(), prepared.totals_, notification);
  if (!started.ok()) {  // nothing started: Wait says why
    batch->status = started;
    batch->done = true;
  }
  return started;
}

void RdmaChannel::PostQuick(RdmaPreparedTransfer& prepared) {
  Segment segment{0, 0, 1, 0, SignalSegment(1)};
  segment.quick = ++quick_posted_;
  segment.started_ns = meter_ != nullptr ? MeterNowNs() : 0;
  prepared.quick_ = segment.quick;
  ibv_send_wr& wr = prepared.wrs_[0];
  wr.wr_id = MakeBatchWrId(0, uint32_t(segment.quick));
  wr.sg_list = prepared.sges_.data();
  wr.send_flags = segment.signaled ? IBV_SEND_SIGNALED : 0;
  wr.next = nullptr;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(res_->qp, &wr, &bad); rc != 0) {
    // The channel fails, and this op with it (Wait says why).
    batch_flushing_ = true;
    Fail(Status::Unavailable(std::string("RDMA channel: ibv_post_send (Submit): ") +
                             std::strerror(rc)));
    return;
  }
  prepared.last_segment_ = AddSegment(segment);
  first_written_ += prepared.totals_.written;
  first_read_ += prepared.totals_.read;
  if (meter_ != nullptr) meter_->Batch(prepared.totals_);
}

uint64_t RdmaChannel::QuickOpsForTesting() const {
  std::lock_guard lock(mu_);
  return quick_posted_;
}

bool RdmaChannel::QuickDone(uint64_t quick) const {
  return quick <= quick_done_.load(std::memory_order_relaxed) || quick_ended_;
}

Status RdmaChannel::QuickStatus(uint64_t quick) const {
  return quick <= quick_done_.load(std::memory_order_relaxed) ? Status::Ok() : quick_end_;
}

void RdmaChannel::EndQuick(const Status& status) {
  if (quick_ended_) return;
  quick_ended_ = true;
  quick_end_ = status;
}

Status RdmaChannel::WaitQuick(uint64_t quick, uint64_t last_segment,
                              std::chrono::milliseconds timeout) {
  // Done in order and for good: no lock to read it.
  if (quick <= quick_done_.load(std::memory_order_acquire)) return Status::Ok();
  Lock lock(mu_);
  if (!QuickDone(quick)) {
    Deadline deadline;
    if (timeout.count() >= 0) deadline = std::chrono::steady_clock::now() + timeout;
    if (last_segment > signaled_through_) CoverBatches(lock, deadline);
    Status waited = WaitFor(
        lock, [&] { return QuickDone(quick); }, deadline, Side::kSend);
    if (waited.code() == StatusCode::kDeadlineExceeded && !QuickDone(quick)) {
      return Status::DeadlineExceeded("Submit: the transfer is still in flight");
    }
    if (!waited.ok() && !QuickDone(quick)) EndQuick(waited);  // closed here, or the channel failed
  }
  return QuickStatus(quick);
}

bool RdmaChannel::PollQuick(uint64_t quick, uint64_t last_segment, Status* status) {
  if (quick <= quick_done_.load(std::memory_order_acquire)) {  // done for good: no lock
    if (status != nullptr) *status = Status::Ok();
    return true;
  }
  Lock lock(mu_);
  if (!QuickDone(quick)) {
    if (last_segment > signaled_through_) CoverBatches(lock, std::chrono::steady_clock::now());
    Drain();
    if (Status usable = Usable(Side::kSend); !usable.ok()) EndQuick(usable);
  }
  if (!QuickDone(quick)) return false;
  if (status != nullptr) *status = QuickStatus(quick);
  return true;
}

}  // namespace rdmad::internal
