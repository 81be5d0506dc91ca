// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: the rendezvous for large messages (wire.h, send_chunks.h,
// rndv_pool.h).
//
// Sending: each piece of up to a chunk goes out as a RNDV descriptor of one
// of the channel's own send chunks the piece was copied into, so Send
// returns without waiting for the peer and the next Send overlaps the
// peer's READs. The descriptor's rkey reaches this channel's chunks alone:
// what the channel sent this peer. A piece of a registered host region is
// copied too (the region's rkey is never sent: it would show the whole
// region). With every chunk out, a piece waits for the channel's own to
// come back; when the channel can register none, it goes eagerly. A piece
// of a dmabuf (no CPU copy) is described in place when the region grants
// remote read (the caller showed it already; Send returns once the peer
// read it) and goes eagerly from the region otherwise.
//
// Receiving: Recv READs the descriptors ahead, in order, into pool chunks
// (as many as the channel's share and the pool allow), so the READs of the
// next pieces run while it copies one out. A descriptor READ completes,
// the peer's memory is free again: its done count goes back on the next
// message, or in a CREDIT message once nothing is left to read or several
// are owed. With no chunk at all, the front fragment is read into a buffer
// registered for it.

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstring>

#include "client/src/rdma/channel_impl.h"

namespace rdmad::internal {

StatusOr<bool> RdmaChannel::PostRndv(Lock& lock, const uint8_t* data, uint32_t n,
                                     const RdmaMemoryRegion* region, bool first, bool last,
                                     std::optional<uint32_t> window_rkey) {
  std::optional<uint32_t> chunk;
  if (window_rkey) {
    // In place, through the send window (channel_send_window.cc).
  } else if (region != nullptr && !region->host()) {  // a dmabuf cannot be copied
    if (region->access() == MemoryAccess::kLocal) return false;
  } else {
    while (!(chunk = own_chunks_.Take())) {
      if (own_chunks_.taken() == 0) return false;  // none to be had: eager
      // Ours come back as the peer reads them.
      uint32_t held = own_chunks_.taken();
      RDMAD_RETURN_IF_ERROR(WaitFor(
          lock, [&] { return own_chunks_.taken() < held; }, std::nullopt, Side::kSend));
    }
    uint8_t* into = own_chunks_.chunk(*chunk);  // under mu_: a Take may grow the list
    lock.unlock();                              // the chunk is ours
    std::memcpy(into, data, n);
    lock.lock();
  }
  auto give_back = [&] {
    if (chunk) own_chunks_.Give(*chunk);
  };
  bool staged = res_->max_inline < kRndvDescriptorBytes;
  Status s = Usable(Side::kSend);
  if (s.ok()) s = WaitToPostFragment(lock, staged);
  if (s.ok()) s = Usable(Side::kSend);
  RndvDescriptor d;
  d.len = n;
  if (chunk) {
    d.addr = reinterpret_cast<uintptr_t>(own_chunks_.chunk(*chunk));
    d.rkey = own_chunks_.rkey(*chunk);
  } else {
    d.addr = reinterpret_cast<uintptr_t>(data);  // the region's iova space
    d.rkey = window_rkey ? *window_rkey : region->descriptor().rkey;
  }
  uint8_t raw[kRndvDescriptorBytes];
  EncodeRndv(d, raw);
  if (s.ok()) s = PostFragment(raw, kRndvDescriptorBytes, nullptr, first, last, MessageType::kRndv);
  if (!s.ok()) {
    give_back();
    return s;
  }
  rndv_sent_.push_back(chunk ? int32_t(*chunk) : -1);
  return true;
}

void RdmaChannel::OnRndvDone(uint32_t n) {
  if (n > rndv_sent_.size()) {
    Fail(Status(StatusCode::kDataLoss, "RDMA channel: the peer reported " + std::to_string(n) +
                                           " descriptors read, " +
                                           std::to_string(rndv_sent_.size()) + " were sent"));
    return;
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (int32_t c = rndv_sent_.front(); c >= 0) own_chunks_.Give(uint32_t(c));
    rndv_sent_.pop_front();
  }
  rndv_done_ += n;
}

void RdmaChannel::OnRndvFragment(const ibv_wc& wc, uint32_t slot, const Imm& imm) {
  if (wc.byte_len != kRndvDescriptorBytes) {
    Fail(Status(StatusCode::kDataLoss, "RDMA channel: a rendezvous descriptor of " +
                                           std::to_string(wc.byte_len) + " bytes from the peer"));
    return;
  }
  Fragment f;
  f.rndv = true;
  f.first = imm.first;
  f.last = imm.last;
  f.desc = DecodeRndv(res_->slot(slot));
  f.len = f.desc.len;
  if (f.len == 0 || f.len > RndvPool::kChunkSize) {
    Fail(Status(StatusCode::kDataLoss, "RDMA channel: the peer's rendezvous descriptor of " +
                                           std::to_string(f.len) + " bytes (at most " +
                                           std::to_string(RndvPool::kChunkSize) + ")"));
    return;
  }
  last_rndv_ = f.desc;
  Repost(slot);
  if (closed_) {  // nobody will read it: done at once (DropUnreadRndv)
    ++done_owed_;
    return;
  }
  ready_.push_back(f);
  ++rndv_unread_;
  if (imm.last) signal_.Notify();
}

void RdmaChannel::DropUnreadRndv() {
  for (auto it = ready_.begin(); it != ready_.end();) {
    if (it->rndv && !it->read_posted) {
      ++done_owed_;
      --rndv_unread_;
      it = ready_.erase(it);
    } else {
      ++it;
    }
  }
}

void RdmaChannel::QueueRead(Fragment& f, uint64_t local_addr, uint32_t lkey) {
  ibv_sge sge{};
  sge.addr = local_addr;
  sge.length = f.len;
  sge.lkey = lkey;
  ibv_send_wr wr{};
  wr.wr_id = MakeWrId(WrKind::kRndvRead, 0);
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.num_sge = 1;
  wr.wr.rdma.remote_addr = f.desc.addr;
  wr.wr.rdma.rkey = f.desc.rkey;
  read_sges_.push_back(sge);
  read_wrs_.push_back(wr);
  ++sq_outstanding_;
  f.read_posted = true;
  f.read_seq = reads_posted_++;
}

Status RdmaChannel::FlushReads() {
  if (read_wrs_.empty()) return Status::Ok();
  for (size_t i = 0; i < read_wrs_.size(); ++i) {
    read_wrs_[i].sg_list = &read_sges_[i];
    read_wrs_[i].next = i + 1 < read_wrs_.size() ? &read_wrs_[i + 1] : nullptr;
  }
  ibv_send_wr* bad = nullptr;
  int rc = ibv_post_send(res_->qp, read_wrs_.data(), &bad);
  read_wrs_.clear();
  read_sges_.clear();
  if (rc != 0) {
    // The QP refused the chain: the channel is done (its READs flush).
    Status s = Status::Unavailable("RDMA channel: ibv_post_send (rendezvous READ): " +
                                   std::string(std::strerror(rc)));
    Fail(s);
    return s;
  }
  return Status::Ok();
}

void RdmaChannel::PostReads() {
  for (Fragment& f : ready_) {
    if (!f.rndv || f.read_posted) continue;
    if (recv_chunks_ >= RndvPool::kChannelShare || sq_outstanding_ >= res_->send_depth) break;
    std::optional<uint32_t> c = pool_->Take();
    if (!c) break;
    ++recv_chunks_;
    f.chunk = int32_t(*c);
    QueueRead(f, reinterpret_cast<uintptr_t>(pool_->chunk(*c)), pool_->lkey());
  }
  (void)FlushReads();  // a refused chain fails the channel
}

Status RdmaChannel::FetchFront(Lock& lock, Deadline deadline) {
  PostReads();
  RDMAD_RETURN_IF_ERROR(Usable(Side::kRecv));
  if (!ready_.front().read_posted) {
    // Reads go in order, so nothing is read ahead: the pool is empty.
    if (sq_outstanding_ >= res_->send_depth) {
      RDMAD_RETURN_IF_ERROR(WaitFor(
          lock, [&] { return sq_outstanding_ < res_->send_depth; }, deadline, Side::kRecv));
    }
    Fragment& f = ready_.front();
    if (!f.read_posted) {
      direct_buf_.resize(f.len);
      auto mr = RdmaMemoryRegion::RegisterLocal(device_, direct_buf_.data(), f.len);
      if (!mr.ok()) {
        Fail(mr.status());
        return mr.status();
      }
      direct_mr_ = std::move(mr).value();
      f.chunk = kDirect;
      QueueRead(f, reinterpret_cast<uintptr_t>(direct_buf_.data()), direct_mr_->lkey());
      RDMAD_RETURN_IF_ERROR(FlushReads());
    }
  }
  uint64_t seq = ready_.front().read_seq;
  return WaitFor(
      lock, [&] { return reads_done_ > seq; }, deadline, Side::kRecv);
}

StatusOr<RdmaChannel::Fragment> RdmaChannel::PopFragment(bool in_message) {
  Fragment f = ready_.front();
  ready_.pop_front();
  if (f.close) {
    recv_saw_close_ = true;
    return Status::Unavailable("channel closed by peer");
  }
  if (f.first == in_message) {  // FIRST exactly at a message's start
    if (f.chunk >= 0) pool_->Give(uint32_t(f.chunk));
    Fail(Status(StatusCode::kDataLoss, "RDMA channel: fragment out of sequence (first flag " +
                                           std::to_string(f.first) + ")"));
    return error_;
  }
  return f;
}

const uint8_t* RdmaChannel::FragmentBytes(const Fragment& f) const {
  if (f.chunk >= 0) return pool_->chunk(uint32_t(f.chunk));
  if (f.chunk == kDirect) return direct_buf_.data();
  return res_->slot(f.slot);
}

void RdmaChannel::Release(const Fragment& f) {
  if (!f.rndv) {
    DeferRepost(f.slot);
  } else if (f.chunk >= 0) {
    pool_->Give(uint32_t(f.chunk));
    --recv_chunks_;
    PostReads();
  } else if (f.chunk == kDirect) {
    direct_mr_.reset();
  }
  MaybeSendCredits();
}

std::optional<RndvDescriptor> RdmaChannel::LastRndvDescriptorForTesting() const {
  Lock lock(mu_);
  return last_rndv_;
}

uint32_t RdmaChannel::SendChunksTakenForTesting() const {
  Lock lock(mu_);
  return own_chunks_.taken();
}

void RdmaChannel::DrainForTesting() {
  Lock lock(mu_);
  Drain();
}

Status RdmaChannel::PostRawForTesting(Imm imm, const void* payload, uint32_t len) {
  Lock lock(mu_);
  RDMAD_RETURN_IF_ERROR(WaitToPostFragment(lock, /*staged=*/true));
  uint32_t chunk = free_chunks_.back();
  free_chunks_.pop_back();
  std::memcpy(res_->chunk(chunk), payload, len);
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(res_->chunk(chunk));
  sge.length = len;
  sge.lkey = res_->staging.lkey(chunk);
  uint16_t credits = credits_.OnSend();
  if (imm.credits == 0) imm.credits = credits;
  if (imm.done == 0) imm.done = TakeDone();
  ibv_send_wr wr{};
  wr.wr_id = MakeWrId(WrKind::kStaged, chunk);
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.sg_list = len > 0 ? &sge : nullptr;
  wr.num_sge = len > 0 ? 1 : 0;
  wr.imm_data = htonl(EncodeImm(imm));
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(res_->qp, &wr, &bad); rc != 0) {
    free_chunks_.push_back(chunk);
    return Status::Unavailable("ibv_post_send: " + std::string(std::strerror(rc)));
  }
  ++sq_outstanding_;
  return Status::Ok();
}

void RdmaChannel::ReturnChunks() {
  for (int32_t c : rndv_sent_) {
    if (c >= 0) own_chunks_.Give(uint32_t(c));
  }
  rndv_sent_.clear();
  for (const Fragment& f : ready_) {
    if (f.chunk >= 0) pool_->Give(uint32_t(f.chunk));
  }
  ready_.clear();
  recv_chunks_ = 0;
}

}  // namespace rdmad::internal
