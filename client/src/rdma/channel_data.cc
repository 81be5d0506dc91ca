// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: messages (Send, Recv). The protocol is in wire.h. A message
// of more than two slots goes by rendezvous (channel_rndv.cc). A smaller
// one is cut into fragments of min(local, peer) slot size; each fragment is
// one SEND_WITH_IMM, posted only while the sender holds a data credit:
//   * <= max_inline bytes: inline (the HCA copies at post time);
//   * otherwise: copied into a free chunk of the registered staging area;
//     Send returns once the last fragment is posted (buf is reusable);
//   * from a registered dmabuf: the SGE points into the region (no copy);
//     Send returns when those SENDs have completed.
// A small message from a registered host region is copied like one from
// any buffer: waiting for its SENDs to complete (the peer's ACK) would cost
// a round trip per message, and copying a few KiB costs far less.

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "client/src/rdma/channel_impl.h"

namespace rdmad::internal {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxReserve = size_t(64) << 20;

}  // namespace

Status RdmaChannel::Send(const void* buf, size_t len) {
  if (buf == nullptr && len > 0) return Status::InvalidArgument("Send: null buffer");
  return SendMessage(static_cast<const uint8_t*>(buf), len, nullptr);
}

Status RdmaChannel::Send(const MemoryRegion& region, size_t offset, size_t len) {
  auto own = OwnRegion(region, "Send");
  if (!own.ok()) return own.status();
  if (offset > region.size() || len > region.size() - offset) {
    return Status::OutOfRange("Send: [" + std::to_string(offset) + ", +" + std::to_string(len) +
                              ") exceeds the region's " + std::to_string(region.size()) + " bytes");
  }
  // Fragments address the region through its iova (data() is null for a dmabuf).
  const uint8_t* base = reinterpret_cast<const uint8_t*>(own.value()->iova());
  return SendMessage(base + offset, len, own.value());
}

Status RdmaChannel::TrySend(const void* buf, size_t len) {
  if (buf == nullptr && len > 0) return Status::InvalidArgument("TrySend: null buffer");
  if (len > rndv_threshold_) {
    return Status::OutOfRange(
        "TrySend: a message of " + std::to_string(len) + " bytes goes by rendezvous (above " +
        std::to_string(rndv_threshold_) + "): it waits for the peer; Send it");
  }
  const auto* data = static_cast<const uint8_t*>(buf);
  Lock lock(mu_);
  RDMAD_RETURN_IF_ERROR(Usable(Side::kSend));
  Drain();  // what completed frees send slots and chunks, and returns credits
  // Room for every fragment now: a credit each and one in reserve, a send
  // slot each, a staging chunk for each that is not inlined.
  size_t fragments = len == 0 ? 1 : (len + fragment_size_ - 1) / fragment_size_;
  size_t staged = 0;
  for (size_t offset = 0; offset < len; offset += fragment_size_) {
    staged += std::min<size_t>(fragment_size_, len - offset) > res_->max_inline;
  }
  while (free_chunks_.size() < staged && staging_can_grow_) GrowStaging();
  if (credits_.credits() < fragments + 1 || sq_outstanding_ + fragments > res_->send_depth ||
      free_chunks_.size() < staged) {
    return Status::DeadlineExceeded(
        "TrySend: the channel's buffers are full (the peer has not taken enough yet)");
  }
  return SendEager(lock, data, len, 0, len, nullptr);
}

Status RdmaChannel::SendMessage(const uint8_t* data, size_t len, const RdmaMemoryRegion* region) {
  Lock lock(mu_);
  RDMAD_RETURN_IF_ERROR(Usable(Side::kSend));
  // A message inline in one fragment that can go now (a small message on a
  // channel that keeps up): posted here, as SendEager would post it, with
  // no zero-copy send of the caller's to wait for after it.
  if (len <= res_->max_inline && len <= fragment_size_ && CanPostFragment(/*staged=*/false) &&
      (region == nullptr || (region->host() && zero_copy_outstanding_ == 0))) {
    return PostFragment(data, static_cast<uint32_t>(len), nullptr, true, true);
  }
  uint64_t read_by_peer = 0;  // descriptors of region the peer must have read
  if (len <= rndv_threshold_) {
    RDMAD_RETURN_IF_ERROR(
        SendEager(lock, data, len, 0, len, region != nullptr && region->host() ? nullptr : region));
  } else {
    std::optional<uint32_t> window;  // the send window's rkey over the message
    if (region != nullptr && CanUseSendWindow(*region)) {
      auto bound = BindSendWindow(lock, *region, reinterpret_cast<uintptr_t>(data), len);
      if (!bound.ok()) return bound.status();
      window = *bound;
    }
    for (size_t offset = 0; offset < len;) {
      auto n = static_cast<uint32_t>(std::min<size_t>(RndvPool::kChunkSize, len - offset));
      auto sent = PostRndv(lock, data + offset, n, region, offset == 0, offset + n == len, window);
      if (!sent.ok()) return sent.status();
      if (*sent && rndv_sent_.back() < 0) read_by_peer = rndv_done_ + rndv_sent_.size();
      if (!*sent) RDMAD_RETURN_IF_ERROR(SendEager(lock, data, len, offset, offset + n, region));
      offset += n;
    }
    if (window) {
      RDMAD_RETURN_IF_ERROR(WaitFor(
          lock, [&] { return rndv_done_ >= read_by_peer; }, std::nullopt, Side::kSend));
      return InvalidateSendWindow(lock);
    }
  }
  if (region != nullptr && (zero_copy_outstanding_ > 0 || rndv_done_ < read_by_peer)) {
    RDMAD_RETURN_IF_ERROR(WaitFor(
        lock, [&] { return zero_copy_outstanding_ == 0 && rndv_done_ >= read_by_peer; },
        std::nullopt, Side::kSend));
  }
  return Status::Ok();
}

Status RdmaChannel::SendEager(Lock& lock, const uint8_t* data, size_t len, size_t begin, size_t end,
                              const RdmaMemoryRegion* region) {
  size_t offset = begin;
  do {
    auto n = static_cast<uint32_t>(std::min<size_t>(fragment_size_, end - offset));
    bool staged = region == nullptr && n > res_->max_inline;
    RDMAD_RETURN_IF_ERROR(WaitToPostFragment(lock, staged));
    RDMAD_RETURN_IF_ERROR(Usable(Side::kSend));
    RDMAD_RETURN_IF_ERROR(PostFragment(data + offset, n, region, offset == 0, offset + n == len));
    offset += n;
  } while (offset < end);
  return Status::Ok();
}

// Posts one fragment. Precondition (under mu_): a data credit, a send slot
// and, for a staged fragment, a free chunk.
Status RdmaChannel::PostFragment(const uint8_t* data, uint32_t len, const RdmaMemoryRegion* region,
                                 bool first, bool last, MessageType type, bool fence) {
  Imm imm;
  imm.type = type;
  bool fragment = type == MessageType::kData || type == MessageType::kRndv;
  imm.first = fragment && first;
  imm.last = fragment && last;
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(data);
  sge.length = len;
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.send_flags = fence ? IBV_SEND_FENCE : 0;
  wr.sg_list = len > 0 ? &sge : nullptr;
  wr.num_sge = len > 0 ? 1 : 0;
  bool signaled = true;
  if (region != nullptr && len > 0) {
    sge.lkey = region->lkey();
    wr.wr_id = MakeWrId(WrKind::kZeroCopy, 0);
  } else if (len <= res_->max_inline) {
    if (len > 0) wr.send_flags |= IBV_SEND_INLINE;
    // Nothing to give back when it completes: only every signal_every_-th
    // is signaled (it completes the ones before it).
    signaled = fence || uncovered_ + 1 >= signal_every_;
    wr.wr_id = MakeWrId(WrKind::kSend, signaled ? 0 : kUnsignaledIndex);
  } else {
    uint32_t chunk = free_chunks_.back();
    std::memcpy(res_->chunk(chunk), data, len);
    sge.addr = reinterpret_cast<uintptr_t>(res_->chunk(chunk));
    sge.lkey = res_->staging.lkey(chunk);
    wr.wr_id = MakeWrId(WrKind::kStaged, chunk);
  }
  if (signaled) {
    wr.send_flags |= IBV_SEND_SIGNALED;
    wr.wr_id = WithCovered(wr.wr_id, uncovered_);
  }
  imm.credits = credits_.OnSend();
  imm.done = TakeDone();
  wr.imm_data = htonl(EncodeImm(imm));
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(res_->qp, &wr, &bad); rc != 0) {
    Status s =
        Status::Unavailable("RDMA channel: ibv_post_send: " + std::string(std::strerror(rc)));
    Fail(s);
    return s;
  }
  CountSendPosted(signaled);
  if (WrIdKind(wr.wr_id) == WrKind::kStaged) free_chunks_.pop_back();
  if (WrIdKind(wr.wr_id) == WrKind::kZeroCopy) ++zero_copy_outstanding_;
  return Status::Ok();
}

StatusOr<std::vector<uint8_t>> RdmaChannel::Recv(std::chrono::milliseconds timeout) {
  LazyDeadline deadline(timeout);
  Lock lock(mu_);
  if (!in_message_ && ready_.empty() && LeanRecvOk(deadline)) {
    std::vector<uint8_t> message;
    if (auto taken = RecvAtWake(lock, deadline, nullptr, SIZE_MAX, &message)) {
      if (!taken->ok()) return taken->status();
      last_message_size_ = message.size();
      return message;
    }
  }
  for (;;) {
    RDMAD_RETURN_IF_ERROR(Usable(Side::kRecv));
    if (ready_.empty()) {
      RDMAD_RETURN_IF_ERROR(WaitFor(
          lock, [&] { return !ready_.empty(); }, deadline, Side::kRecv));
    }
    if (ready_.front().rndv) RDMAD_RETURN_IF_ERROR(FetchFront(lock, deadline.get()));
    auto popped = PopFragment(in_message_);
    if (!popped.ok()) return popped.status();
    Fragment f = *popped;
    if (f.first) {
      partial_.clear();
      // A message of several fragments: one allocation and one copy
      // instead of regrowing, as messages tend to repeat their size (at
      // most kMaxReserve up front; larger ones grow from there).
      if (!f.last) {
        partial_.reserve(std::min(std::max(last_message_size_, 2 * size_t(f.len)), kMaxReserve));
      }
    }
    in_message_ = !f.last;
    // The slot (chunk, buffer) is ours until reposted (given back): a
    // larger one is copied without the lock.
    const uint8_t* src = FragmentBytes(f);
    CopyOutOfSlot(lock, f.len, [&] { partial_.insert(partial_.end(), src, src + f.len); });
    Release(f);
    if (f.last) {
      last_message_size_ = partial_.size();
      return std::move(partial_);
    }
  }
}

}  // namespace rdmad::internal
