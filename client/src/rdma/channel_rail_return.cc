// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: a further rail's port and GID watched, and the rail coming
// back (docs/topology.md, "Rails in a channel"). Before it stripes, and
// while transfers wait on the rails, the sending side looks at each rail's
// port at most once a second: a rail whose port left ACTIVE or whose GID
// changed is taken out (what it has in flight flushes and is done again on
// the first QP). Once a rail that is out has its port ACTIVE again, its
// backoff has passed (1 s after it was taken out, doubling while it keeps
// failing, up to a minute) and nothing of it is in flight, this side opens
// a new QP on the rail's device and offers it to the peer in a RAIL
// message on the first QP (the rail's index, the QP number and PSN;
// wire.h). The peer opens a new QP of its own, connects it to the offered
// one, puts it in place of its old one and answers with it; this side
// connects its new QP on the answer and the rail is up again. An offer not
// answered within kOfferTimeout is dropped, and made again later. A rail's
// QP is replaced only while no transfer waits on it (busy, or work
// requests out), else when that transfer ends.

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstring>

#include "client/src/client_log.h"
#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/channel_rail.h"

namespace rdmad::internal {
namespace {

constexpr std::chrono::seconds kLookEvery{1};
constexpr std::chrono::seconds kOfferTimeout{5};

// Why the rail's port or GID cannot carry it now; "" when it can.
std::string PortTrouble(const RailQp& rail) {
  ibv_context* ctx = rail.res->device->context();
  ibv_port_attr port{};
  if (int rc = ibv_query_port(ctx, uint8_t(rail.plan.port), &port); rc != 0) {
    return std::string("ibv_query_port: ") + std::strerror(rc);
  }
  if (port.state != IBV_PORT_ACTIVE) {
    return "port " + std::to_string(rail.plan.port) + " is " + ibv_port_state_str(port.state);
  }
  ibv_gid gid{};
  if (ibv_query_gid(ctx, uint8_t(rail.plan.port), int(rail.plan.gid_index), &gid) != 0 ||
      std::memcmp(gid.raw, rail.local.gid.data(), 16) != 0) {
    return "GID index " + std::to_string(rail.plan.gid_index) + " changed";
  }
  return "";
}

}  // namespace

void RdmaChannel::WatchRails() {
  auto now = RailQp::Clock::now();
  for (size_t i = 0; i < rails_.size(); ++i) {
    RailQp& rail = *rails_[i];
    if (rail.next != nullptr && now - rail.offered_at > kOfferTimeout) {
      ClientLog().info(
          "RDMA channel {}: rail {} -> {}: the peer did not answer the offer; "
          "trying again later",
          info_.id, rail.local.device, rail.remote.device);
      rail.next.reset();
    }
    if (now < rail.next_look || rail.next != nullptr) continue;
    if (rail.up) {  // even while transfers wait on it: they flush, and are done again
      rail.next_look = now + kLookEvery;
      if (std::string trouble = PortTrouble(rail); !trouble.empty()) TakeRailOut(rail, trouble);
      continue;
    }
    if (rail.busy || rail.outstanding > 0 || now < rail.retry_at) continue;
    rail.next_look = now + kLookEvery;
    if (!PortTrouble(rail).empty()) continue;
    // Back: a new QP, offered to the peer.
    auto res = ChannelResources::CreateRail(res_->plan, rail.plan);
    StatusOr<RailEndpoint> local =
        res.ok() ? FillRailEndpoint(**res, rail.plan) : StatusOr<RailEndpoint>(res.status());
    if (!local.ok()) {
      ClientLog().warn("RDMA channel {}: rail {} cannot come back yet: {}", info_.id,
                       rail.local.device, local.status().message());
      continue;
    }
    rail.next = std::move(res).value();
    rail.next_local = std::move(local).value();
    rail.offered_at = now;
    RailMessage offer;
    offer.rail = static_cast<uint8_t>(i);
    offer.qpn = rail.next_local.qpn;
    offer.psn = rail.next_local.psn;
    rail_outbox_.push_back(offer);
    ClientLog().info("RDMA channel {}: rail {} -> {}: port ACTIVE again; offering QP {:#x}",
                     info_.id, rail.local.device, rail.remote.device, offer.qpn);
  }
  FlushRails();
}

void RdmaChannel::OnRailMessage(const uint8_t* payload, uint32_t len) {
  std::optional<RailMessage> m = DecodeRail(payload, len);
  if (!m || m->rail >= rails_.size()) {
    Fail(Status(StatusCode::kDataLoss, "RDMA channel: malformed RAIL message from the peer"));
    return;
  }
  RailQp& rail = *rails_[m->rail];
  if (m->answer) {
    if (rail.next == nullptr) return;  // an offer given up on: the next one counts
    rail.answer = m;
  } else {
    rail.offer = m;
  }
  FlushRails();
}

// Connects qp (INIT) to the peer's new QP on the rail (mu_ held).
Status RdmaChannel::ConnectRailQp(RailQp& rail, ChannelResources& qp, uint32_t local_psn,
                                  const RailMessage& peer) {
  RDMAD_RETURN_IF_ERROR(qp.ToRtr(RailPeer(rail.remote, peer.qpn, peer.psn), rail.mtu));
  return qp.ToRts(local_psn, rail.remote.responder_resources);
}

void RdmaChannel::RailBack(RailQp& rail, std::unique_ptr<ChannelResources> res,
                           const RailEndpoint& local, const RailMessage& peer) {
  rail.res = std::move(res);  // the old QP goes (nothing waits on it)
  rail.local.qpn = local.qpn;
  rail.local.psn = local.psn;
  rail.remote.qpn = peer.qpn;
  rail.remote.psn = peer.psn;
  rail.outstanding = 0;
  rail.up = true;
  rail.reason.clear();
  rail.next_look = RailQp::Clock::now() + kLookEvery;
  ClientLog().info("RDMA channel {}: rail {} -> {} is back (QP {:#x} -> {:#x})", info_.id,
                   rail.local.device, rail.remote.device, rail.local.qpn, rail.remote.qpn);
}

void RdmaChannel::FlushRails() {
  for (size_t i = 0; i < rails_.size(); ++i) {
    RailQp& rail = *rails_[i];
    if (rail.busy || rail.outstanding > 0) continue;
    if (rail.offer) {  // the peer's rail came back: a QP of ours for it
      RailMessage offer = *rail.offer;
      rail.offer.reset();
      rail.next.reset();  // both offered at once: the peer's offer wins
      auto res = ChannelResources::CreateRail(res_->plan, rail.plan);
      StatusOr<RailEndpoint> local =
          res.ok() ? FillRailEndpoint(**res, rail.plan) : StatusOr<RailEndpoint>(res.status());
      Status s = local.ok() ? ConnectRailQp(rail, **res, local->psn, offer) : local.status();
      if (!s.ok()) {
        ClientLog().warn("RDMA channel {}: rail {}: cannot take the peer's offer: {}", info_.id,
                         rail.local.device, s.message());
        continue;
      }
      RailBack(rail, std::move(res).value(), *local, offer);
      RailMessage answer;
      answer.rail = static_cast<uint8_t>(i);
      answer.answer = true;
      answer.qpn = rail.local.qpn;
      answer.psn = rail.local.psn;
      rail_outbox_.push_back(answer);
    }
    if (rail.answer && rail.next != nullptr) {  // our offer taken
      RailMessage answer = *rail.answer;
      rail.answer.reset();
      Status s = ConnectRailQp(rail, *rail.next, rail.next_local.psn, answer);
      if (!s.ok()) {
        ClientLog().warn("RDMA channel {}: rail {}: cannot connect to the peer's answer: {}",
                         info_.id, rail.local.device, s.message());
        rail.next.reset();
        continue;
      }
      RailEndpoint local = rail.next_local;
      RailBack(rail, std::move(rail.next), local, answer);
    }
  }
  // The RAIL messages, while credits, send slots and staging chunks last;
  // the rest go at the next chance (Drain, the next transfer).
  while (!rail_outbox_.empty() && error_.ok() && !closed_ && !peer_closed_) {
    if (!CanPostFragment(kRailMessageBytes > res_->max_inline)) break;
    uint8_t raw[kRailMessageBytes];
    EncodeRail(rail_outbox_.front(), raw);
    rail_outbox_.pop_front();
    if (!PostFragment(raw, kRailMessageBytes, nullptr, false, false, MessageType::kRail).ok()) {
      break;  // the channel failed (PostFragment says why)
    }
  }
}

}  // namespace rdmad::internal
