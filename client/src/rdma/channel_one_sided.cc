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

#include "client/src/rdma/channel_impl.h"

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
  return std::unique_ptr<MemoryRegion>(std::move(region).value());
}

StatusOr<std::unique_ptr<MemoryRegion>> RdmaChannel::RegisterDmabuf(int fd, uint64_t offset,
                                                                    size_t len) {
  auto region =
      RdmaMemoryRegion::RegisterDmabuf(res_->device, fd, offset, len, res_->relaxed_ordering.on);
  if (!region.ok()) return region.status();
  return std::unique_ptr<MemoryRegion>(std::move(region).value());
}

StatusOr<const RdmaMemoryRegion*> RdmaChannel::OwnRegion(const MemoryRegion& region,
                                                         const char* what) const {
  const auto* own = dynamic_cast<const RdmaMemoryRegion*>(&region);
  if (own == nullptr) {
    return Status::InvalidArgument(std::string(what) +
                                   ": the region was not registered by an "
                                   "RDMA channel");
  }
  if (own->device() != res_->device.get()) {
    return Status::InvalidArgument(std::string(what) + ": the region is registered on " +
                                   own->device()->name() + ", this channel uses " +
                                   res_->device->name());
  }
  return own;
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
  uint64_t max_wr = std::min<uint64_t>(kMaxOneSidedBytes,
                                       res_->max_msg_size ? res_->max_msg_size : kMaxOneSidedBytes);
  one_sided_op_ = write ? "RDMA WRITE" : "RDMA READ";
  for (uint64_t done = 0; done < len;) {
    auto n = static_cast<uint32_t>(std::min<uint64_t>(max_wr, len - done));
    auto has_slot = [&] { return sq_outstanding_ < res_->send_depth; };
    if (!has_slot()) RDMAD_RETURN_IF_ERROR(WaitFor(lock, has_slot, std::nullopt, Side::kSend));
    ibv_sge sge{};
    sge.addr = own.value()->iova() + local_offset + done;
    sge.length = n;
    sge.lkey = own.value()->lkey();
    ibv_send_wr wr{};
    wr.wr_id = WithCovered(MakeWrId(WrKind::kOneSided, 0), uncovered_);
    wr.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr.rdma.remote_addr = remote.address + remote_offset + done;
    wr.wr.rdma.rkey = remote.rkey;
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
  if (one_sided_outstanding_ == 0) return Status::Ok();
  return WaitFor(
      lock, [&] { return one_sided_outstanding_ == 0; }, std::nullopt, Side::kSend);
}

}  // namespace rdmad::internal
