// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: Expose and Revoke, a registered region shown to this
// channel's peer alone. Each exposure is a type 2 memory window of its own,
// bound by a signaled BIND_MW on this channel's QP over the whole region
// (so the window's range is the registration's, on every device) with the
// access asked for, and waited for: once Expose returns, the descriptor
// works from the peer's end of this QP and from nowhere else. Revoke
// deallocates the window, which invalidates it. The windows go with the channel
// (FreeExposures) or with the region (ExposedWindow), whichever is first.

#include <infiniband/verbs.h>

#include <cstring>

#include "client/src/client_log.h"
#include "client/src/rdma/channel_impl.h"

namespace rdmad::internal {

StatusOr<RegionDescriptor> RdmaChannel::Expose(const MemoryRegion& region, MemoryAccess access) {
  auto own = OwnRegion(region, "Expose");
  if (!own.ok()) return own.status();
  RDMAD_RETURN_IF_ERROR(CheckExposure(region, access));
  if (!(*own)->host() || !device_->memory_windows()) {
    return Status::Unimplemented("Expose: " + device_->name() +
                                 (!(*own)->host() ? ": a dmabuf region cannot be exposed"
                                                  : " has no type 2 memory windows") +
                                 "; register the region for the peer instead");
  }
  Lock lock(mu_);
  RDMAD_RETURN_IF_ERROR(Usable(Side::kSend));
  ibv_mw* mw = ibv_alloc_mw(device_->pd(), IBV_MW_TYPE_2);
  if (mw == nullptr) {
    return Status::ResourceExhausted("Expose: ibv_alloc_mw on " + device_->name() + ": " +
                                     std::strerror(errno));
  }
  uint32_t rkey = ibv_inc_rkey(mw->rkey);
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_BIND_MW;
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = rkey;
  wr.bind_mw.bind_info.mr = (*own)->mr();
  wr.bind_mw.bind_info.addr = (*own)->iova();
  wr.bind_mw.bind_info.length = region.size();
  wr.bind_mw.bind_info.mw_access_flags = access == MemoryAccess::kReadWrite
                                             ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE
                                             : IBV_ACCESS_REMOTE_READ;
  Status bound = PostAndAwaitExposure(lock, wr);
  if (!bound.ok()) {
    ibv_dealloc_mw(mw);
    return bound;
  }
  mw->rkey = rkey;
  auto window = std::make_shared<ExposedWindow>(mw);
  (*own)->Track(window);
  exposed_[rkey] = std::move(window);
  ClientLog().debug(
      "RDMA channel {} QP {:#x}: exposed {} bytes at {:#x} to the peer ({}), rkey {:#x}", info_.id,
      local_.qpn, region.size(), (*own)->iova(),
      access == MemoryAccess::kReadWrite ? "read-write" : "read-only", rkey);
  RegionDescriptor d;
  d.address = (*own)->iova();
  d.length = region.size();
  d.rkey = rkey;
  return d;
}

Status RdmaChannel::Revoke(const RegionDescriptor& exposed) {
  Lock lock(mu_);
  auto it = exposed_.find(exposed.rkey);
  if (it == exposed_.end()) {
    return Status::NotFound("Revoke: this channel has not exposed a region with rkey " +
                            std::to_string(exposed.rkey));
  }
  std::shared_ptr<ExposedWindow> window = std::move(it->second);
  exposed_.erase(it);
  // Deallocating the window invalidates it before the call returns (the
  // region may have freed it already): no LOCAL_INV needed first.
  window->Free();
  return Status::Ok();
}

Status RdmaChannel::PostAndAwaitExposure(Lock& lock, ibv_send_wr& wr) {
  RDMAD_RETURN_IF_ERROR(PostLocalOp(lock, wr, WrKind::kExpose, "BIND_MW", &exposures_posted_));
  uint64_t mine = exposures_posted_;
  return WaitFor(
      lock, [&] { return exposures_done_ >= mine; }, std::nullopt, Side::kSend);
}

Status RdmaChannel::PostLocalOp(Lock& lock, ibv_send_wr& wr, WrKind kind, const char* what,
                                uint64_t* posted) {
  auto has_slot = [&] { return sq_outstanding_ < res_->send_depth; };
  if (!has_slot()) RDMAD_RETURN_IF_ERROR(WaitFor(lock, has_slot, std::nullopt, Side::kSend));
  RDMAD_RETURN_IF_ERROR(Usable(Side::kSend));
  wr.wr_id = MakeWrId(kind, 0);
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(res_->qp, &wr, &bad); rc != 0) {
    Status s = Status::Unavailable(std::string("RDMA channel: ibv_post_send (") + what +
                                   "): " + std::strerror(rc));
    Fail(s);
    return s;
  }
  ++sq_outstanding_;
  ++*posted;
  return Status::Ok();
}

void RdmaChannel::FreeExposures() {
  for (const auto& [rkey, window] : exposed_) window->Free();
  exposed_.clear();
}

}  // namespace rdmad::internal
