// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/rdma_channel.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "client/src/client_log.h"
#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/resources.h"

namespace rdmad::internal {
namespace {

uint32_t RandomPsn() {
  std::random_device rd;
  return rd() & 0xFFFFFF;
}

std::string GidTypeName(uint32_t type) {
  switch (type) {
    case IBV_GID_TYPE_IB: return "IB";
    case IBV_GID_TYPE_ROCE_V1: return "RoCE v1";
    case IBV_GID_TYPE_ROCE_V2: return "RoCE v2";
  }
  return "unknown";
}

}  // namespace

PendingRdmaChannel::PendingRdmaChannel(std::unique_ptr<ChannelResources> resources)
    : res_(std::move(resources)) {}

PendingRdmaChannel::~PendingRdmaChannel() = default;

size_t PendingRdmaChannel::registered_bytes() const {
  return res_ == nullptr ? 0 : res_->ring_mem.size() + res_->staging_mem.size();
}

StatusOr<std::unique_ptr<PendingRdmaChannel>> PendingRdmaChannel::Create(const RdmaPlan& plan) {
  auto resources = ChannelResources::Create(plan);
  if (!resources.ok()) return resources.status();
  std::unique_ptr<PendingRdmaChannel> pending(new PendingRdmaChannel(std::move(resources).value()));
  RDMAD_RETURN_IF_ERROR(pending->FillLocal());
  return pending;
}

Status PendingRdmaChannel::FillLocal() {
  const RdmaPlan& plan = res_->plan;
  ibv_context* ctx = res_->device->context();
  RdmaEndpoint& e = local_;
  e.device = plan.device;
  e.port = plan.port;
  e.qpn = res_->qp->qp_num;
  e.psn = RandomPsn();
  e.gid_index = plan.gid_index;
  ibv_gid gid{};
  if (int rc = ibv_query_gid(ctx, uint8_t(plan.port), int(plan.gid_index), &gid); rc != 0) {
    return Status::InvalidArgument("RDMA device " + plan.device + " port " +
                                   std::to_string(plan.port) + ": no GID index " +
                                   std::to_string(plan.gid_index));
  }
  std::memcpy(e.gid.data(), gid.raw, 16);
  ibv_gid_entry entry{};
  if (ibv_query_gid_ex(ctx, plan.port, plan.gid_index, &entry, 0) == 0) {
    e.gid_type = GidTypeName(entry.gid_type);
  } else {
    e.gid_type = res_->roce ? "RoCE v2" : "IB";  // older kernels: assume the usual
  }
  bool zero = std::all_of(e.gid.begin(), e.gid.end(), [](uint8_t b) { return b == 0; });
  if (res_->roce && zero) {
    return Status::FailedPrecondition("RDMA device " + plan.device + " port " +
                                      std::to_string(plan.port) + ": GID index " +
                                      std::to_string(plan.gid_index) + " is empty");
  }
  e.lid = res_->lid;
  e.active_mtu = res_->active_mtu;
  e.qp = plan.qp;
  e.qp.max_inline = res_->max_inline;
  e.ring_address = res_->ring->iova();
  e.ring_rkey = res_->ring->descriptor().rkey;
  e.ring_slots = res_->recv_depth;
  e.slot_size = res_->slot_size;
  e.credits = res_->recv_depth;
  return Status::Ok();
}

Status PendingRdmaChannel::ReadyToReceive(const RdmaEndpoint& remote) {
  if (state_ != State::kInit) {
    return Status::FailedPrecondition("ReadyToReceive: the channel is past INIT");
  }
  RDMAD_RETURN_IF_ERROR(ValidateRdmaEndpoint(remote));
  if (res_->roce != (remote.gid_type != "IB")) {
    return Status::InvalidArgument("RDMA endpoint: the peer's link (" + remote.gid_type +
                                   ") does not match this side's (" + local_.gid_type + ")");
  }
  mtu_ = NegotiatedMtu(res_->plan.path_mtu_cap, local_.active_mtu, remote.active_mtu);
  if (Status s = res_->ToRtr(remote, mtu_); !s.ok()) {
    state_ = State::kFailed;
    return s;
  }
  remote_ = remote;
  state_ = State::kReadyToReceive;
  ClientLog().info(
      "RDMA channel: {} port {} GID index {} ({} {}) QP {:#x} -> peer {} GID index {} ({}) QP "
      "{:#x}; "
      "MTU {} (local active {}, peer active {}, cap {}); depth send {} recv {}, slot {} B, "
      "inline {} B, relaxed ordering {}",
      local_.device, local_.port, local_.gid_index, local_.gid_type, GidText(local_.gid.data()),
      local_.qpn, remote.device, remote.gid_index, GidText(remote.gid.data()), remote.qpn, mtu_,
      local_.active_mtu, remote.active_mtu, res_->plan.path_mtu_cap, res_->send_depth,
      res_->recv_depth, res_->slot_size, res_->max_inline, res_->relaxed_ordering.reason);
  return Status::Ok();
}

StatusOr<std::unique_ptr<Channel>> PendingRdmaChannel::ReadyToSend(ChannelInfo info) {
  if (state_ != State::kReadyToReceive) {
    return Status::FailedPrecondition("ReadyToSend: call ReadyToReceive first (once)");
  }
  if (Status s = res_->ToRts(local_.psn); !s.ok()) {
    state_ = State::kFailed;
    return s;
  }
  state_ = State::kDone;
  info.transport = ChannelTransport::kRdma;
  info.local_device = local_.device;
  info.peer_device = remote_.device;
  info.local_port = local_.port;
  info.peer_port = remote_.port;
  info.local_gid_index = local_.gid_index;
  info.peer_gid_index = remote_.gid_index;
  info.local_gid = GidText(local_.gid.data());
  info.peer_gid = GidText(remote_.gid.data());
  info.gid_type = local_.gid_type;
  info.local_qpn = local_.qpn;
  info.peer_qpn = remote_.qpn;
  info.mtu = mtu_;
  info.local_active_mtu = local_.active_mtu;
  info.peer_active_mtu = remote_.active_mtu;
  info.send_depth = res_->send_depth;
  info.recv_depth = res_->recv_depth;
  info.slot_size = res_->slot_size;
  return std::unique_ptr<Channel>(
      new RdmaChannel(std::move(res_), local_, remote_, std::move(info)));
}

}  // namespace rdmad::internal
