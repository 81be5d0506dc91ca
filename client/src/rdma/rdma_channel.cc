// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/rdma_channel.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "client/src/client_log.h"
#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/channel_rail.h"
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

// The GID at (port, index) and its type; an empty RoCE GID is no address.
Status QueryGid(const ChannelResources& res, const std::string& device, uint32_t port,
                uint32_t index, std::array<uint8_t, 16>* gid_out, std::string* type) {
  ibv_context* ctx = res.device->context();
  // One query for the GID and its type (kept for the next channels: the
  // device's); older kernels know only the GID.
  ibv_gid_entry entry{};
  if (res.device->QueryGidEntry(uint8_t(port), index, &entry) == 0) {
    std::memcpy(gid_out->data(), entry.gid.raw, 16);
    *type = GidTypeName(entry.gid_type);
  } else {
    ibv_gid gid{};
    if (int rc = ibv_query_gid(ctx, uint8_t(port), int(index), &gid); rc != 0) {
      return Status::InvalidArgument("RDMA device " + device + " port " + std::to_string(port) +
                                     ": no GID index " + std::to_string(index));
    }
    std::memcpy(gid_out->data(), gid.raw, 16);
    *type = res.roce ? "RoCE v2" : "IB";  // assume the usual
  }
  bool zero = std::all_of(gid_out->begin(), gid_out->end(), [](uint8_t b) { return b == 0; });
  if (res.roce && zero) {
    return Status::FailedPrecondition("RDMA device " + device + " port " + std::to_string(port) +
                                      ": GID index " + std::to_string(index) + " is empty");
  }
  return Status::Ok();
}

}  // namespace

RdmaEndpoint RailPeer(const RailEndpoint& remote, uint32_t qpn, uint32_t psn) {
  RdmaEndpoint peer;
  peer.qpn = qpn;
  peer.psn = psn;
  peer.gid = remote.gid;
  peer.lid = remote.lid;
  return peer;
}

StatusOr<RailEndpoint> FillRailEndpoint(const ChannelResources& res, const RailPlan& plan) {
  RailEndpoint e;
  e.device = plan.device;
  e.port = plan.port;
  e.qpn = res.qp->qp_num;
  e.psn = RandomPsn();
  e.gid_index = plan.gid_index;
  RDMAD_RETURN_IF_ERROR(QueryGid(res, plan.device, plan.port, plan.gid_index, &e.gid, &e.gid_type));
  e.lid = res.lid;
  e.active_mtu = res.active_mtu;
  e.prefix_len = plan.prefix_len;
  e.weight = std::max<uint32_t>(plan.weight, 1);
  e.device_tag = res.device->tag();
  e.responder_resources = res.device->max_dest_rd_atomic();
  return e;
}

PendingRdmaChannel::PendingRdmaChannel(std::unique_ptr<ChannelResources> resources)
    : res_(std::move(resources)) {}

PendingRdmaChannel::~PendingRdmaChannel() = default;

size_t PendingRdmaChannel::registered_bytes() const {
  return res_ == nullptr ? 0 : res_->registered_bytes();
}

StatusOr<std::unique_ptr<PendingRdmaChannel>> PendingRdmaChannel::Create(
    const RdmaPlan& plan, std::shared_ptr<CompletionGroup> group) {
  auto resources = ChannelResources::Create(plan, std::move(group));
  if (!resources.ok()) return resources.status();
  std::unique_ptr<PendingRdmaChannel> pending(new PendingRdmaChannel(std::move(resources).value()));
  RDMAD_RETURN_IF_ERROR(pending->FillLocal());
  pending->OpenRails();
  return pending;
}

// A rail that cannot be opened is left out (the channel works without it).
void PendingRdmaChannel::OpenRails() {
  for (const RailPlan& plan : res_->plan.rails) {
    auto res = ChannelResources::CreateRail(res_->plan, plan);
    StatusOr<RailEndpoint> local =
        res.ok() ? FillRailEndpoint(**res, plan) : StatusOr<RailEndpoint>(res.status());
    if (!local.ok()) {
      ClientLog().warn("RDMA channel: rail {} left out: {}", plan.device, local.status().message());
      continue;
    }
    auto rail = std::make_unique<RailQp>();
    rail->res = std::move(res).value();
    rail->local = std::move(local).value();
    rail->plan = plan;
    local_.rails.push_back(rail->local);
    rails_.push_back(std::move(rail));
  }
}

// The acceptor pairs its rails with the initiator's (PairRails) and names
// the pair in each; the initiator takes the acceptor's pairs. Rails left
// unpaired, or whose QP cannot reach RTR, are dropped.
void PendingRdmaChannel::ConnectRails(const RdmaEndpoint& remote, RailRole role) {
  std::vector<std::unique_ptr<RailQp>> kept;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;  // (mine, theirs)
  if (role == RailRole::kAcceptor) {
    for (auto [theirs, mine] : PairRails(remote.rails, local_.rails))
      pairs.emplace_back(mine, theirs);
  } else {
    std::vector<bool> used(rails_.size(), false);
    for (uint32_t j = 0; j < remote.rails.size(); ++j) {
      uint32_t mine = remote.rails[j].pair;
      if (mine >= rails_.size() || used[mine]) {
        ClientLog().warn(
            "RDMA channel: the peer's rail {} pairs with rail {}, which is no rail "
            "of ours or taken: not used",
            remote.rails[j].device, mine);
        continue;
      }
      used[mine] = true;
      pairs.emplace_back(mine, j);
    }
  }
  std::vector<RailEndpoint> shown;
  for (auto [mine, theirs] : pairs) {
    std::unique_ptr<RailQp>& rail = rails_[mine];
    if (rail == nullptr) continue;
    rail->remote = remote.rails[theirs];
    if (role == RailRole::kAcceptor) rail->local.pair = theirs;
    rail->mtu =
        NegotiatedMtu(res_->plan.path_mtu_cap, rail->local.active_mtu, rail->remote.active_mtu);
    rail->weight = std::min(rail->local.weight, std::max<uint32_t>(rail->remote.weight, 1));
    RdmaEndpoint peer = RailPeer(rail->remote, rail->remote.qpn, rail->remote.psn);
    if (Status s = rail->res->ToRtr(peer, rail->mtu); !s.ok()) {
      ClientLog().warn("RDMA channel: rail {} -> {} left out: {}", rail->local.device,
                       rail->remote.device, s.message());
      continue;
    }
    if (ClientLog().should_log(spdlog::level::info)) {  // not the GIDs' text for nothing
      ClientLog().info(
          "RDMA channel: rail {} port {} GID index {} ({}) QP {:#x} -> peer {} ({}) "
          "QP {:#x}; MTU {}, weight {}",
          rail->local.device, rail->local.port, rail->local.gid_index,
          GidText(rail->local.gid.data()), rail->local.qpn, rail->remote.device,
          GidText(rail->remote.gid.data()), rail->remote.qpn, rail->mtu, rail->weight);
    }
    shown.push_back(rail->local);
    kept.push_back(std::move(rail));
  }
  rails_ = std::move(kept);
  local_.rails = std::move(shown);
}

Status PendingRdmaChannel::FillLocal() {
  const RdmaPlan& plan = res_->plan;
  RdmaEndpoint& e = local_;
  e.device = plan.device;
  e.port = plan.port;
  e.qpn = res_->qp->qp_num;
  e.psn = RandomPsn();
  e.gid_index = plan.gid_index;
  RDMAD_RETURN_IF_ERROR(
      QueryGid(*res_, plan.device, plan.port, plan.gid_index, &e.gid, &e.gid_type));
  e.device_tag = res_->device->tag();
  e.responder_resources = res_->device->max_dest_rd_atomic();
  e.lid = res_->lid;
  e.active_mtu = res_->active_mtu;
  e.qp = plan.qp;
  e.qp.max_inline = res_->max_inline;
  e.ring_address = reinterpret_cast<uintptr_t>(res_->first_piece.data());
  e.ring_rkey = res_->first_piece.rkey();
  e.ring_slots = res_->recv_depth;  // what the ring grows to
  e.slot_size = res_->slot_size;
  e.credits = res_->ring_size();  // what it starts with
  return Status::Ok();
}

Status PendingRdmaChannel::ReadyToReceive(const RdmaEndpoint& remote, RailRole role) {
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
  ConnectRails(remote, role);
  if (!ClientLog().should_log(log_level_)) return Status::Ok();
  ClientLog().log(
      log_level_,
      "RDMA channel: {} port {} GID index {} ({} {}) QP {:#x} -> peer {} GID index {} ({}) QP "
      "{:#x}; "
      "MTU {} (local active {}, peer active {}, cap {}); depth send {} recv {}, slot {} B, "
      "inline {} B, READs in flight {} (local limit {}, peer responder resources {}), relaxed "
      "ordering {}",
      local_.device, local_.port, local_.gid_index, local_.gid_type, GidText(local_.gid.data()),
      local_.qpn, remote.device, remote.gid_index, GidText(remote.gid.data()), remote.qpn, mtu_,
      local_.active_mtu, remote.active_mtu, res_->plan.path_mtu_cap, res_->send_depth,
      res_->recv_depth, res_->slot_size, res_->max_inline,
      NegotiatedReadDepth(res_->device->max_rd_atomic(), remote.responder_resources),
      res_->device->max_rd_atomic(),
      remote.responder_resources == 0 ? std::string("not said")
                                      : std::to_string(remote.responder_resources),
      res_->relaxed_ordering.reason);
  return Status::Ok();
}

StatusOr<std::unique_ptr<Channel>> PendingRdmaChannel::ReadyToSend(ChannelInfo info) {
  if (state_ != State::kReadyToReceive) {
    return Status::FailedPrecondition("ReadyToSend: call ReadyToReceive first (once)");
  }
  if (Status s = res_->ToRts(local_.psn, remote_.responder_resources); !s.ok()) {
    state_ = State::kFailed;
    return s;
  }
  state_ = State::kDone;
  std::vector<std::unique_ptr<RailQp>> rails;
  for (auto& rail : rails_) {
    if (Status s = rail->res->ToRts(rail->local.psn, rail->remote.responder_resources); !s.ok()) {
      ClientLog().warn("RDMA channel: rail {} left out: {}", rail->local.device, s.message());
      continue;
    }
    rails.push_back(std::move(rail));
  }
  rails_.clear();
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
  auto channel = std::make_unique<RdmaChannel>(std::move(res_), local_, remote_, std::move(info));
  channel->AdoptRails(std::move(rails));
  return std::unique_ptr<Channel>(std::move(channel));
}

}  // namespace rdmad::internal
