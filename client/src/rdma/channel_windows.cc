// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: the windows a peer reads our rendezvous pieces through.
//
// A pool chunk we describe is shown to the peer as a type 2 memory window,
// bound by a BIND_MW work request on this channel's QP just before the
// descriptor's SEND: over the piece's bytes of the chunk's own
// registration, remote read only, usable from this QP alone (so from no
// other channel, and no other peer), under a key of its own. When the peer
// reports the piece read (the done count, wire.h), a LOCAL_INV ends the
// window; only when it has completed does the chunk go back to the pool,
// where another channel may fill it with another peer's bytes. A peer
// therefore reads what it was sent, only until it says it is done.
//
// Windows are allocated on first use and kept for the channel's life (at
// most one per chunk of its share); they are deallocated before the QP,
// which also invalidates any still bound.

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstring>

#include "client/src/client_log.h"
#include "client/src/rdma/channel_impl.h"

namespace rdmad::internal {

StatusOr<ibv_mw*> RdmaChannel::TakeWindow(Lock& lock, Side side) {
  for (;;) {
    if (!free_windows_.empty()) {
      ibv_mw* mw = free_windows_.back();
      free_windows_.pop_back();
      return mw;
    }
    if (all_windows_.size() < kMaxWindows) {
      if (ibv_mw* mw = ibv_alloc_mw(device_->pd(), IBV_MW_TYPE_2); mw != nullptr) {
        all_windows_.push_back(mw);
        return mw;
      }
      if (all_windows_.empty()) {
        ClientLog().warn("RDMA channel {} on {}: ibv_alloc_mw: {}; pieces go without windows",
                         info_.id, local_.device, std::strerror(errno));
        return nullptr;
      }
    }
    // Ours come back as the peer reads the pieces they show.
    RDMAD_RETURN_IF_ERROR(WaitFor(
        lock, [&] { return !free_windows_.empty(); }, std::nullopt, side));
  }
}

Status RdmaChannel::BindWindow(ibv_mw* mw, ibv_mr* mr, uint64_t addr, uint32_t len) {
  uint32_t rkey = ibv_inc_rkey(mw->rkey);  // a key the last binding did not have
  ibv_send_wr wr{};
  wr.wr_id = MakeWrId(WrKind::kBind, 0);  // unsignaled: the SEND after it covers it
  wr.opcode = IBV_WR_BIND_MW;
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = rkey;
  wr.bind_mw.bind_info.mr = mr;
  wr.bind_mw.bind_info.addr = addr;
  wr.bind_mw.bind_info.length = len;
  wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(res_->qp, &wr, &bad); rc != 0) {
    Status s = Status::Unavailable("RDMA channel: ibv_post_send (BIND_MW): " +
                                   std::string(std::strerror(rc)));
    Fail(s);
    return s;
  }
  mw->rkey = rkey;  // type 2: the binder keeps the key
  ++sq_outstanding_;
  ++uncovered_;
  ++silent_;
  return Status::Ok();
}

void RdmaChannel::OnRndvDone(uint32_t n) {
  if (n > rndv_sent_.size()) {
    Fail(Status(StatusCode::kDataLoss, "RDMA channel: the peer reported " + std::to_string(n) +
                                           " descriptors read, " +
                                           std::to_string(rndv_sent_.size()) + " were sent"));
    return;
  }
  for (uint32_t i = 0; i < n; ++i) {
    SentPiece p = rndv_sent_.front();
    rndv_sent_.pop_front();
    p.unbound = p.mw == nullptr;
    rndv_returning_.push_back(p);
  }
  PostUnbinds();
  ReleaseReturned();
}

void RdmaChannel::PostUnbinds() {
  if (!error_.ok()) return;  // the windows go with the channel (FreeWindows)
  ibv_send_wr wrs[16];
  uint32_t count = 0;
  std::vector<SentPiece*> posted;
  for (SentPiece& p : rndv_returning_) {
    if (p.mw == nullptr || p.unbind_posted) continue;
    if (sq_outstanding_ + count >= res_->send_depth || count == std::size(wrs)) break;
    ibv_send_wr& wr = wrs[count];
    wr = ibv_send_wr{};
    wr.wr_id = MakeWrId(WrKind::kUnbind, 0);
    wr.opcode = IBV_WR_LOCAL_INV;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.invalidate_rkey = p.mw->rkey;
    if (count > 0) wrs[count - 1].next = &wr;
    posted.push_back(&p);
    ++count;
  }
  if (count == 0) return;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(res_->qp, wrs, &bad); rc != 0) {
    Fail(Status::Unavailable("RDMA channel: ibv_post_send (LOCAL_INV): " +
                             std::string(std::strerror(rc))));
    return;
  }
  for (SentPiece* p : posted) p->unbind_posted = true;
  sq_outstanding_ += count;
}

void RdmaChannel::OnUnbound() {
  // LOCAL_INVs complete in the order they were posted, which is the order
  // of the pieces.
  for (SentPiece& p : rndv_returning_) {
    if (p.unbind_posted && !p.unbound) {
      p.unbound = true;
      break;
    }
  }
  ReleaseReturned();
}

void RdmaChannel::ReleaseReturned() {
  while (!rndv_returning_.empty() && rndv_returning_.front().unbound) {
    const SentPiece& p = rndv_returning_.front();
    if (p.chunk >= 0) {
      pool_->Give(uint32_t(p.chunk));
      --send_chunks_;
    }
    if (p.mw != nullptr) free_windows_.push_back(p.mw);
    rndv_returning_.pop_front();
    ++rndv_released_;
  }
}

void RdmaChannel::FreeWindows() {
  for (ibv_mw* mw : all_windows_) {
    if (int rc = ibv_dealloc_mw(mw); rc != 0) {
      ClientLog().warn("RDMA channel {} on {}: ibv_dealloc_mw: {}", info_.id, local_.device,
                       std::strerror(rc));
    }
  }
  all_windows_.clear();
  free_windows_.clear();
  for (const auto& [rkey, window] : exposed_) window->Free();  // Expose's
  exposed_.clear();
  for (auto* pieces : {&rndv_sent_, &rndv_returning_}) {
    for (SentPiece& p : *pieces) p.mw = nullptr;
  }
}

}  // namespace rdmad::internal
