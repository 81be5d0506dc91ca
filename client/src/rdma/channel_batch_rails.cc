// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: Submit's batches striped over the channel's rails
// (docs/topology.md, "Rails in a channel"). Each op of at least two
// stripes is split as a Write is (SplitOverRails): the further rails'
// pieces are posted on their QPs, each work request signaled with the
// batch's id and the piece's index, and the first QP's share goes out with
// the batch's other work requests. Nothing waits here: the rails' CQs are
// drained with the first one's (Drain, so Wait, Poll and Arm all make
// progress). A piece whose rail fails (an error completion, a flush after
// the rail was taken out, a refused post) is done again on the first QP
// once all of its work requests are back. The batch's notification is a
// SEND on the first QP, ordered only with that QP's work: it waits until
// the rails' pieces have completed (or been posted again on the first
// QP), and later batches' notifications wait behind it, so the peer sees
// them in Submit's order and each only once its batch is in place.

#include <infiniband/verbs.h>

#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/channel_rail.h"

namespace rdmad::internal {

void RdmaChannel::StripeBatch(Lock& lock, const std::shared_ptr<Batch>& batch,
                              std::vector<uint64_t>& first_len) {
  struct Where {
    const RdmaMemoryRegion* local;
    uint32_t rkey;
  };
  std::vector<Where> where;
  const std::vector<TransferOp>& ops = batch->ops;
  for (size_t i = 0; i < ops.size(); ++i) {
    std::vector<StripePiece> pieces = SplitOverRails(*batch->regions[i], ops[i].remote, ops[i].len);
    if (pieces.empty()) continue;
    first_len[i] = pieces.front().len;
    for (size_t k = 1; k < pieces.size(); ++k) {
      if (pieces[k].len == 0) continue;
      RailPiece p;
      p.rail = pieces[k].rail;
      p.op = uint32_t(i);
      p.offset = pieces[k].offset;
      p.len = pieces[k].len;
      batch->pieces.push_back(p);
      where.push_back({pieces[k].local, pieces[k].rkey});
    }
  }
  batch->open_pieces = uint32_t(batch->pieces.size());
  // Posted in order; a wait for a rail's send slots makes progress on all.
  for (size_t k = 0; k < batch->pieces.size() && !batch->done; ++k) {
    RailPiece& p = batch->pieces[k];
    const TransferOp& op = ops[p.op];
    p.posting = true;
    Status posted =
        PostOnRail(lock, *p.rail, op.kind == TransferOp::Kind::kWrite, *where[k].local,
                   op.local_offset + p.offset, op.remote.address + op.remote_offset + p.offset,
                   where[k].rkey, p.len, MakeBatchWrId(batch->id, uint32_t(k)), &p.wrs);
    p.posting = false;
    if (!posted.ok()) {
      TakeRailOut(*p.rail, posted.message());
      p.failed = true;
    }
    if (p.wrs == 0) FinishPiece(batch, uint32_t(k));
  }
}

void RdmaChannel::OnRailPieceCompletion(const ibv_wc& wc) {
  const std::shared_ptr<Batch>* found = batches_.Find(WrIdBatch(wc.wr_id));
  if (found == nullptr) return;           // it failed with the channel meanwhile
  std::shared_ptr<Batch> batch = *found;  // outlives its Erase
  uint32_t index = WrIdIndex(wc.wr_id);
  if (index >= batch->pieces.size()) return;
  RailPiece& p = batch->pieces[index];
  if (p.wrs > 0) --p.wrs;
  if (wc.status != IBV_WC_SUCCESS) p.failed = true;
  if (p.wrs == 0 && !p.posting) FinishPiece(batch, index);
}

void RdmaChannel::FinishPiece(const std::shared_ptr<Batch>& batch, uint32_t index) {
  RailPiece& p = batch->pieces[index];
  if (batch->open_pieces > 0) --batch->open_pieces;
  if (p.failed) {  // again, on the first QP
    ++batch->redo;
    redo_.emplace_back(batch, index);
  } else {
    bool write = batch->ops[p.op].kind == TransferOp::Kind::kWrite;
    (write ? p.rail->bytes_written : p.rail->bytes_read) += p.len;
    p.rail->failures = 0;
  }
  MaybeFinishBatch(batch);
}

void RdmaChannel::FlushBatchWork() {
  if (!error_.ok() || closed_) {  // the batches ended with the channel
    redo_.clear();
    notes_out_.clear();
    return;
  }
  while (!redo_.empty()) {
    auto [batch, index] = redo_.front();
    if (batch->done) {
      redo_.pop_front();
      continue;
    }
    const RailPiece& p = batch->pieces[index];
    if (sq_outstanding_ + BatchWrsFor(p.len) > res_->send_depth) break;  // at the next completion
    const TransferOp& op = batch->ops[p.op];
    std::vector<ibv_sge> sges;
    std::vector<ibv_send_wr> wrs;
    uint32_t first_wr = batch->wrs;
    AppendBatchWrs(*batch, p.op, op, *batch->regions[p.op], p.offset, p.len, sges, wrs);
    redo_.pop_front();
    --batch->redo;
    if (!PostSegment(*batch, first_wr, wrs.data(), sges.data(), wrs.size()).ok()) return;
    (op.kind == TransferOp::Kind::kWrite ? first_written_ : first_read_) += p.len;
  }
  while (!notes_out_.empty()) {
    std::shared_ptr<Batch> batch = notes_out_.front();
    if (batch->done) {
      notes_out_.pop_front();
      continue;
    }
    if (batch->posting || batch->open_pieces > 0 || batch->redo > 0) break;
    auto len = static_cast<uint32_t>(batch->note.size());
    if (!CanPostFragment(len > res_->max_inline)) break;  // at the next credit or completion
    notes_out_.pop_front();
    batch->note_waits = false;
    if (!PostFragment(reinterpret_cast<const uint8_t*>(batch->note.data()), len, nullptr, true,
                      true, MessageType::kNotify, batch->fence)
             .ok()) {
      return;  // the channel failed (PostFragment says why), and its batches
    }
    MaybeFinishBatch(batch);
  }
}

}  // namespace rdmad::internal
