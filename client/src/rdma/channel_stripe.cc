// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: striping one-sided transfers over the channel's rails
// (docs/topology.md, "Rails in a channel"). A Write or Read of at least
// two stripes (kStripeMin each) is split by the rails' weights over the
// first QP and every further rail that is up, where the local region has a
// registration on the rail's device and the peer's descriptor a key for the
// peer's device. The further rails' pieces are posted first, then the first
// QP's (which the caller waits for as usual), then the caller waits for
// the rails: Drain takes their completions with the first QP's, and Sleep
// sleeps on their completion channels too, so Submit's striped batches
// (channel_batch_rails.cc) progress in any wait, Poll or Arm. A piece
// whose rail fails is taken out of the channel (its QP to the error
// state, so that what it has in flight flushes at once) and done again on
// the first QP: WRITE and READ may be repeated, so the transfer completes
// once and whole.

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "client/src/client_log.h"
#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/channel_rail.h"

namespace rdmad::internal {
namespace {

constexpr uint64_t kMaxRailWrBytes = 1ull << 20;  // per work request on a rail
constexpr uint64_t kAlign = 4096;

const RailKey* KeyFor(const RegionDescriptor& remote, uint32_t tag) {
  for (const RailKey& key : remote.rail_keys) {
    if (key.device_tag == tag) return &key;
  }
  return nullptr;
}

}  // namespace

void RdmaChannel::AdoptRails(std::vector<std::unique_ptr<RailQp>> rails) {
  std::lock_guard lock(mu_);
  rails_ = std::move(rails);
}

std::vector<ChannelRail> RdmaChannel::rails() const {
  std::lock_guard lock(mu_);
  std::vector<ChannelRail> out;
  ChannelRail first;
  first.local_device = local_.device;
  first.peer_device = remote_.device;
  first.weight = !res_ ? 1 : res_->plan.first_striped ? res_->plan.weight : 0;
  first.bytes_written = first_written_;
  first.bytes_read = first_read_;
  first.up = error_.ok();
  if (!error_.ok()) first.reason = error_.message();
  out.push_back(std::move(first));
  for (const auto& rail : rails_) {
    ChannelRail r;
    r.local_device = rail->local.device;
    r.peer_device = rail->remote.device;
    r.weight = rail->weight;
    r.bytes_written = rail->bytes_written;
    r.bytes_read = rail->bytes_read;
    r.up = rail->up;
    r.reason = rail->reason;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<RdmaChannel::StripePiece> RdmaChannel::SplitOverRails(const RdmaMemoryRegion& own,
                                                                  const RegionDescriptor& remote,
                                                                  size_t len) {
  std::vector<StripePiece> pieces;
  if (rails_.empty() || len < 2 * kStripeMin) return pieces;
  WatchRails();
  auto piece = [](RailQp* rail, const RdmaMemoryRegion* local, uint32_t rkey, uint64_t weight) {
    StripePiece p;
    p.rail = rail;
    p.local = local;
    p.rkey = rkey;
    p.weight = weight;
    return p;
  };
  // Outside the process's rail plan, the first rail takes no share while
  // a further rail is up.
  uint64_t first_weight = res_->plan.first_striped ? std::max<uint32_t>(res_->plan.weight, 1) : 0;
  pieces.push_back(piece(nullptr, &own, remote.rkey, first_weight));
  size_t most = len / kStripeMin;
  for (const auto& rail : rails_) {
    if (pieces.size() >= most) break;
    if (!rail->up) continue;
    const RdmaMemoryRegion* there = own.On(rail->res->device.get());
    const RailKey* key = KeyFor(remote, rail->remote.device_tag);
    if (there == nullptr || key == nullptr) continue;
    pieces.push_back(piece(rail.get(), there, key->rkey, rail->weight));
  }
  if (pieces.size() < 2) return {};
  uint64_t total_weight = 0;
  for (const StripePiece& p : pieces) total_weight += p.weight;
  uint64_t at = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    uint64_t n = i + 1 == pieces.size() ? len - at : len * pieces[i].weight / total_weight;
    n = i + 1 == pieces.size() ? n : n / kAlign * kAlign;
    pieces[i].offset = at;
    pieces[i].len = n;
    at += n;
  }
  return pieces;
}

StatusOr<bool> RdmaChannel::Stripe(Lock& lock, bool write, const RdmaMemoryRegion& own,
                                   size_t local_offset, const RegionDescriptor& remote,
                                   uint64_t remote_offset, size_t len) {
  std::vector<StripePiece> pieces = SplitOverRails(own, remote, len);
  if (pieces.empty()) return false;
  // The further rails' pieces first, then the first QP's.
  std::vector<RailQp*> posted;
  for (const StripePiece& p : pieces) {
    if (p.rail == nullptr || p.len == 0) continue;
    p.rail->busy = true;
    Status s = PostOnRail(lock, *p.rail, write, *p.local, local_offset + p.offset,
                          remote.address + remote_offset + p.offset, p.rkey, p.len,
                          MakeWrId(WrKind::kOneSided, 0));
    if (!s.ok()) TakeRailOut(*p.rail, s.message());
    posted.push_back(p.rail);  // what it did post completes (or flushes) all the same
  }
  const StripePiece& first = pieces.front();
  Status mine = PostOneSided(lock, write, own, local_offset + first.offset,
                             remote.address + remote_offset + first.offset, remote.rkey, first.len);
  if (mine.ok()) mine = AwaitOneSided(lock);
  // Every posted piece is waited for, even when the first QP failed: the
  // caller's memory is in use until then.
  AwaitRails(lock, posted, 0);
  for (RailQp* r : posted) r->busy = false;
  FlushRails();  // what came for them meanwhile
  if (!mine.ok()) return mine;
  for (const StripePiece& p : pieces) {
    if (p.rail == nullptr || p.len == 0) continue;
    if (p.rail->up) {
      (write ? p.rail->bytes_written : p.rail->bytes_read) += p.len;
      p.rail->failures = 0;
      continue;
    }
    // Its rail failed: the piece again, on the first QP.
    RDMAD_RETURN_IF_ERROR(PostOneSided(lock, write, own, local_offset + p.offset,
                                       remote.address + remote_offset + p.offset, remote.rkey,
                                       p.len));
    RDMAD_RETURN_IF_ERROR(AwaitOneSided(lock));
  }
  return true;
}

Status RdmaChannel::PostOnRail(Lock& lock, RailQp& rail, bool write, const RdmaMemoryRegion& local,
                               size_t local_offset, uint64_t remote_address, uint32_t rkey,
                               size_t len, uint64_t wr_id, uint32_t* posted) {
  uint64_t max_wr = std::min<uint64_t>(
      kMaxRailWrBytes, rail.res->max_msg_size ? rail.res->max_msg_size : kMaxRailWrBytes);
  for (uint64_t done = 0; done < len;) {
    if (rail.outstanding >= rail.res->send_depth) {
      std::vector<RailQp*> one{&rail};
      AwaitRails(lock, one, rail.res->send_depth - 1);
    }
    if (!rail.up) return Status::Unavailable(rail.reason);
    auto n = static_cast<uint32_t>(std::min<uint64_t>(max_wr, len - done));
    ibv_sge sge;
    ibv_send_wr wr;
    FillOneSided(write, local.iova() + local_offset + done, n, local.lkey(), remote_address + done,
                 rkey, wr_id, &sge, &wr);
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(rail.res->qp, &wr, &bad); rc != 0) {
      return Status::Unavailable(std::string("ibv_post_send: ") + std::strerror(rc));
    }
    ++rail.outstanding;
    if (posted != nullptr) ++*posted;
    done += n;
  }
  return Status::Ok();
}

void RdmaChannel::TakeRailOut(RailQp& rail, const std::string& why) {
  if (!rail.up) return;
  rail.up = false;
  rail.reason = why;
  ++rail.failures;
  int64_t backoff_s = std::min<int64_t>(60, int64_t(1) << std::min<uint32_t>(rail.failures - 1, 6));
  rail.retry_at = RailQp::Clock::now() + std::chrono::seconds(backoff_s);
  // Whatever it has in flight flushes now, rather than after the QP's
  // retries (its port may be down).
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  ibv_modify_qp(rail.res->qp, &attr, IBV_QP_STATE);
  ClientLog().warn(
      "RDMA channel {}: rail {} -> {} taken out: {}; its transfers go on the other "
      "rails",
      info_.id, rail.local.device, rail.remote.device, why);
}

bool RdmaChannel::RailsBusy() const {
  return std::any_of(rails_.begin(), rails_.end(),
                     [](const auto& r) { return r->outstanding > 0; });
}

int RdmaChannel::PollRails() {
  int total = 0;
  ibv_wc wcs[16];
  for (const auto& rail : rails_) {
    if (rail->outstanding == 0) continue;
    for (;;) {
      int n = ibv_poll_cq(rail->res->cq, 16, wcs);
      if (n < 0) {
        TakeRailOut(*rail, "ibv_poll_cq failed");
        break;
      }
      for (int i = 0; i < n; ++i) OnRailCompletion(*rail, wcs[i]);
      total += n;
      if (n < 16) break;
    }
  }
  // A busy rail's port is looked at; one idle now may come back.
  if (total > 0 || RailsBusy()) WatchRails();
  return total;
}

void RdmaChannel::OnRailCompletion(RailQp& rail, const ibv_wc& wc) {
  if (rail.outstanding > 0) --rail.outstanding;
  if (wc.status != IBV_WC_SUCCESS) {
    TakeRailOut(rail, std::string(ibv_wc_status_str(wc.status)) + " on QP " +
                          std::to_string(rail.local.qpn));
  }
  if (WrIdKind(wc.wr_id) == WrKind::kBatch) OnRailPieceCompletion(wc);
}

bool RdmaChannel::TakeRailCqEvents() {
  bool took = false;
  for (const auto& rail : rails_) {
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    while (ibv_get_cq_event(rail->res->comp_channel, &cq, &ctx) == 0) {
      ibv_ack_cq_events(cq, 1);
      took = true;
    }
  }
  return took;
}

void RdmaChannel::AwaitRails(Lock& lock, const std::vector<RailQp*>& rails, uint32_t at_most) {
  auto pending = [&] {
    for (RailQp* r : rails) {
      if (r->outstanding > at_most) return true;
    }
    return false;
  };
  if (!pending()) return;
  auto now = std::chrono::steady_clock::now();
  auto spin_until = now + spin_;
  uint32_t steps = 0;
  while (pending()) {
    Drain();  // the rails' CQs with the first one's
    if (!pending()) break;
    WatchRails();            // a port gone down: taken out, its requests flush
    if (now < spin_until) {  // the clock every kLooksPerClock looks (SpinStep)
      lock.unlock();
      bool clock = SpinStep(&steps);
      lock.lock();
      if (clock) now = std::chrono::steady_clock::now();
    } else {
      if (poller_) {
        WaitOnCv(lock, now + std::chrono::milliseconds(100));
      } else {
        Sleep(lock, now + std::chrono::milliseconds(100));
      }
      now = std::chrono::steady_clock::now();
    }
  }
}

}  // namespace rdmad::internal
