// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: memory registration and one-sided operations. Write and
// Read are signaled RDMA WRITE / RDMA READ work requests on the channel's
// QP (split at the port's max message size); they need send slots but no
// credits, since they consume no receive at the peer. Each call returns
// when all its work requests have completed.

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstring>
#include <typeinfo>

#include "client/src/client_log.h"
#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/channel_rail.h"

namespace rdmad::internal {
namespace {

constexpr uint64_t kMaxOneSidedBytes = 1ull << 30;  // per work request

std::string Range(uint64_t offset, uint64_t len) {
  return "[" + std::to_string(offset) + ", " + std::to_string(offset) + " + " +
         std::to_string(len) + ")";
}

}  // namespace

StatusOr<std::unique_ptr<MemoryRegion>> RdmaChannel::RegisterMemory(void* addr, size_t len,
                                                                    MemoryAccess access) {
  auto region =
      RdmaMemoryRegion::RegisterHost(res_->device, addr, len, access, res_->relaxed_ordering);
  if (!region.ok()) return region.status();
  // Also on each rail's device, for striped transfers (descriptor().rail_keys).
  for (const auto& rail : rails_) {
    auto sibling = RdmaMemoryRegion::RegisterHost(rail->res->device, addr, len, access,
                                                  rail->res->relaxed_ordering);
    if (!sibling.ok()) {
      ClientLog().warn(
          "RDMA channel {}: registering {} bytes on rail {} failed ({}); transfers "
          "from this region keep to {}",
          info_.id, len, rail->local.device, sibling.status().message(), res_->device->name());
      continue;
    }
    region.value()->AddSibling(std::move(sibling).value());
  }
  return std::unique_ptr<MemoryRegion>(std::move(region).value());
}

StatusOr<std::unique_ptr<MemoryRegion>> RdmaChannel::RegisterDmabuf(int fd, uint64_t offset,
                                                                    size_t len) {
  auto region =
      RdmaMemoryRegion::RegisterDmabuf(res_->device, fd, offset, len, res_->relaxed_ordering.on);
  if (!region.ok()) return region.status();
  return std::unique_ptr<MemoryRegion>(std::move(region).value());
}

Status RdmaChannel::ForeignRegion(const MemoryRegion& region, const char* what) const {
  if (typeid(region) != typeid(RdmaMemoryRegion)) {
    return Status::InvalidArgument(std::string(what) +
                                   ": the region was not registered by an "
                                   "RDMA channel");
  }
  const auto* own = static_cast<const RdmaMemoryRegion*>(&region);
  return Status::InvalidArgument(std::string(what) + ": the region is registered on " +
                                 own->device()->name() + ", this channel uses " +
                                 res_->device->name());
}

Status RdmaChannel::Write(const MemoryRegion& local, size_t local_offset,
                          const RegionDescriptor& remote, uint64_t remote_offset, size_t len) {
  return OneSided(true, local, local_offset, remote, remote_offset, len);
}

Status RdmaChannel::Read(const MemoryRegion& local, size_t local_offset,
                         const RegionDescriptor& remote, uint64_t remote_offset, size_t len) {
  return OneSided(false, local, local_offset, remote, remote_offset, len);
}

Status RdmaChannel::OneSided(bool write, const MemoryRegion& local, size_t local_offset,
                             const RegionDescriptor& remote, uint64_t remote_offset, size_t len) {
  const char* what = write ? "Write" : "Read";
  auto own = OwnRegion(local, what);
  if (!own.ok()) return own.status();
  if (local_offset > local.size() || len > local.size() - local_offset) {
    return Status::OutOfRange(std::string(what) + ": local range " + Range(local_offset, len) +
                              " exceeds the region's " + std::to_string(local.size()) + " bytes");
  }
  if (remote_offset > remote.length || len > remote.length - remote_offset) {
    return Status::OutOfRange(std::string(what) + ": remote range " + Range(remote_offset, len) +
                              " exceeds the remote region's " + std::to_string(remote.length) +
                              " bytes");
  }
  Lock lock(mu_);
  RDMAD_RETURN_IF_ERROR(Usable(Side::kSend));
  // Large enough, on a channel with rails: striped (channel_stripe.cc).
  StatusOr<bool> striped =
      Stripe(lock, write, *own.value(), local_offset, remote, remote_offset, len);
  if (!striped.ok() || *striped) return striped.status();
  RDMAD_RETURN_IF_ERROR(PostOneSided(lock, write, *own.value(), local_offset,
                                     remote.address + remote_offset, remote.rkey, len));
  return AwaitOneSided(lock);
}

Status RdmaChannel::PostOneSided(Lock& lock, bool write, const RdmaMemoryRegion& own,
                                 size_t local_offset, uint64_t remote_address, uint32_t rkey,
                                 size_t len) {
  uint64_t max_wr = std::min<uint64_t>(kMaxOneSidedBytes,
                                       res_->max_msg_size ? res_->max_msg_size : kMaxOneSidedBytes);
  one_sided_op_ = write ? "WRITE" : "READ";
  for (uint64_t done = 0; done < len;) {
    auto n = static_cast<uint32_t>(std::min<uint64_t>(max_wr, len - done));
    auto has_slot = [&] { return sq_outstanding_ < res_->send_depth; };
    if (!has_slot()) RDMAD_RETURN_IF_ERROR(WaitFor(lock, has_slot, std::nullopt, Side::kSend));
    ibv_sge sge;
    ibv_send_wr wr;
    FillOneSided(write, own.iova() + local_offset + done, n, own.lkey(), remote_address + done,
                 rkey, WithCovered(MakeWrId(WrKind::kOneSided, 0), uncovered_), &sge, &wr);
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(res_->qp, &wr, &bad); rc != 0) {
      Status s = Status::Unavailable(std::string("RDMA channel: ibv_post_send (") + one_sided_op_ +
                                     "): " + std::strerror(rc));
      Fail(s);
      return s;
    }
    ++sq_outstanding_;
    ++one_sided_outstanding_;
    uncovered_ = 0;
    done += n;
  }
  (write ? first_written_ : first_read_) += len;
  return Status::Ok();
}

Status RdmaChannel::AwaitOneSided(Lock& lock) {
  if (one_sided_outstanding_ == 0) return Status::Ok();
  return WaitFor(
      lock, [&] { return one_sided_outstanding_ == 0; }, std::nullopt, Side::kSend);
}

}  // namespace rdmad::internal
