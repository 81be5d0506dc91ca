// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Broker: channels across a daemon restart (docs/channels.md, "When rdmad
// restarts"). The applications own the data path, so a restart of either
// daemon leaves established channels open:
//   - the surviving daemon keeps the lost peer's channels waiting
//     (OnPeerLost, broker_lifecycle.cc) until the same instance is back
//     (OnPeerBack) or its successor reclaims them (OnReclaimChannel);
//   - the restarted daemon adopts each channel its application re-attaches
//     with the lease it kept (Adopt) and reclaims it from the peer
//     (TryReclaim, again from the sweeper while no link is up).
// A channel that no side confirms within peer_grace fails (SweepLocked).

#include <spdlog/spdlog.h>
#include <strings.h>

#include "daemon/broker/broker.h"

namespace rdmad {
namespace {

// The phases in which the broker asks the peer for the channel.
bool Reclaiming(ChannelPhase p) {
  return p == ChannelPhase::kReattaching || p == ChannelPhase::kConfirming;
}

}  // namespace

StatusOr<ChannelLease> Broker::LeaseOf(uint64_t channel_id, EndpointKind transport) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = channels_.find(channel_id);
  if (it == channels_.end()) {
    return Status::NotFound(
        fmt::format("no channel {:#018x} on {}", channel_id, options_.host_name));
  }
  const Entry& e = it->second;
  const ChannelRecord& r = e.record;
  ChannelLease lease;
  lease.channel_id = channel_id;
  lease.peer = r.peer;
  lease.peer_key = e.peer_key;
  lease.service = r.service;
  lease.initiator = r.initiator;
  lease.transport = r.transport == EndpointKind::kUnknown ? transport : r.transport;
  bool away = e.phase == ChannelPhase::kPeerLost || e.phase == ChannelPhase::kReattaching;
  lease.reason = away ? e.transport_reason : r.reason;
  lease.device = r.device;
  lease.port = r.port;
  lease.gid = r.gid;
  lease.peer_instance = r.peer_instance;
  lease.self_instance = options_.instance_id;
  lease.created = r.created;
  lease.owner_uid = r.owner_uid;
  return lease;
}

Status Broker::Adopt(const Caller& caller, uint64_t channel_id, const ChannelLease& lease) {
  if (channel_id == 0 || lease.channel_id != channel_id) {
    return Status::InvalidArgument("lease: not the lease of this channel");
  }
  if (!IsInstanceId(lease.peer_instance) || !IsInstanceId(lease.self_instance)) {
    return Status::InvalidArgument("lease: malformed instance ids");
  }
  if (lease.peer.empty() || lease.peer.size() > 255) {
    return Status::InvalidArgument("lease: peer: 1..255 bytes required");
  }
  RDMAD_RETURN_IF_ERROR(ServiceRegistry::ValidateServiceName(lease.service));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::Unavailable("rdmad on " + options_.host_name + " is stopping");
    auto known = channels_.find(channel_id);
    bool mine = caller.uid != kNoUid && caller.uid == lease.owner_uid;
    if (!mine || (known != channels_.end() && known->second.record.owner_uid != caller.uid)) {
      spdlog::warn("channel {:#018x}: {} (uid {}) re-attaching with another uid's lease: refused",
                   channel_id, caller.name, caller.uid);
      return Status::NotFound(
          fmt::format("no channel {:#018x} on {}", channel_id, options_.host_name));
    }
    if (known != channels_.end()) return Status::Ok();
    if (lease.self_instance == options_.instance_id) {
      return Status::NotFound(fmt::format("channel {:#018x} ended on {} (no longer listed)",
                                          channel_id, options_.host_name));
    }
    RDMAD_RETURN_IF_ERROR(limits_.CheckOwner(RecordsLocked(), caller, /*planning=*/false, 1));
    RDMAD_RETURN_IF_ERROR(limits_.CheckDaemon(RecordsLocked(), lease.peer, 1));
    Entry& e = channels_[channel_id];
    e.peer_key = lease.peer_key.empty() ? lease.peer : lease.peer_key;
    e.since = Now();
    e.phase = ChannelPhase::kReattaching;  // an adopted channel starts here
    e.previous_self = lease.self_instance;
    e.transport_reason = lease.reason;
    ChannelRecord& r = e.record;
    r.channel_id = channel_id;
    r.peer = lease.peer;
    r.service = lease.service;
    r.initiator = lease.initiator;
    r.transport = lease.transport;
    r.reason = "re-attached after rdmad restarted; confirming it with peer daemon " + lease.peer;
    r.state = PublicState(e.phase);
    r.created = lease.created;
    r.peer_instance = lease.peer_instance;
    r.device = lease.device;
    r.port = lease.port;
    r.gid = lease.gid;
    r.owner_uid = caller.uid;
    r.owner_pid = caller.pid;
    spdlog::info("{}: re-attached by its application after rdmad restarted ({} over {})",
                 DescribeChannel(r), r.initiator ? "initiator" : "acceptor",
                 EndpointKindName(r.transport));
  }
  TryReclaim(channel_id);
  return Status::Ok();
}

void Broker::TryReclaim(uint64_t channel_id) {
  ReclaimChannelCall call;
  std::string instance;
  std::string peer_key;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = channels_.find(channel_id);
    if (it == channels_.end()) return;
    Entry& e = it->second;
    if (!Reclaiming(e.phase) || e.reclaim_in_flight) return;
    call = ReclaimChannelCall{channel_id, e.previous_self, options_.instance_id};
    instance = e.record.peer_instance;
    peer_key = e.peer_key;
  }
  // The peer daemon did not restart: its instance is the lease's, reached
  // through this daemon's session to it.
  std::shared_ptr<PeerLink> link;
  if (auto found = options_.network->LinkToInstance(instance); found.ok()) link = found.value();
  // The peer restarted too since the lease was given (its instance is
  // another now): ask the peer by name; it checks the channel and this
  // daemon's previous instance itself.
  std::string peer_now = instance;
  if (!link) {
    StatusOr<BrokerPeer> peer = options_.network->FindPeer(peer_key, std::nullopt);
    if (peer.ok() && peer->link.ok() && !peer->instance_id.empty()) {
      link = peer->link.value();
      peer_now = peer->instance_id;
    }
  }
  if (!link) return;  // the sweeper tries again until peer_grace
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = channels_.find(channel_id);
    if (it == channels_.end() || !Reclaiming(it->second.phase) || it->second.reclaim_in_flight) {
      return;
    }
    it->second.reclaim_in_flight = true;
  }
  link->ReclaimChannel(call, [this, channel_id, peer_now](const Status& answer) {
    Reclaimed(channel_id, peer_now, answer);
  });
}

void Broker::Reclaimed(uint64_t channel_id, const std::string& peer_instance,
                       const Status& answer) {
  std::vector<Ending> endings;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = channels_.find(channel_id);
    if (it == channels_.end()) return;
    Entry& e = it->second;
    e.reclaim_in_flight = false;
    if (!Reclaiming(e.phase)) return;
    if (answer.ok()) {
      e.record.peer_instance = peer_instance;
      ResumeLocked(e, ChannelEvent::kConfirmed);
      spdlog::info("{}: confirmed by peer daemon {}; it goes on", DescribeChannel(e.record),
                   e.record.peer);
    } else if (answer.code() == StatusCode::kNotFound ||
               answer.code() == StatusCode::kInvalidArgument) {
      std::string why = (e.phase == ChannelPhase::kConfirming
                             ? "peer daemon " + e.record.peer + " is back but"
                             : "rdmad restarted and peer daemon " + e.record.peer) +
                        " no longer has the channel: " + answer.message();
      e.peer_told = true;
      auto ending = EndLocked(e, ChannelEvent::kRefused, why, false, "");
      if (ending) endings.push_back(std::move(*ending));
    } else {
      spdlog::debug("{}: reclaim: {}; trying again", DescribeChannel(e.record), answer.ToString());
    }
  }
  Deliver(std::move(endings));
}

void Broker::ResumeLocked(Entry& e, ChannelEvent event) {
  if (ApplyLocked(e, event)) e.record.reason = e.transport_reason;
}

Status Broker::OnReclaimChannel(const ReclaimChannelCall& call) {
  if (call.channel_id == 0) return Status::InvalidArgument("channel_id: required");
  if (!IsInstanceId(call.previous_instance) || !IsInstanceId(call.instance)) {
    return Status::InvalidArgument("instance ids: 32 lower-case hex digits required");
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = channels_.find(call.channel_id);
  // The previous instance unknown to the peer layer (this daemon restarted
  // since): the channel's peer must be the caller's node.
  bool other_node = it != channels_.end() && !call.caller_node.empty() &&
                    !call.previous_node_known &&
                    strcasecmp(it->second.record.peer.c_str(), call.caller_node.c_str()) != 0;
  if (it == channels_.end() || it->second.record.peer_instance != call.previous_instance ||
      other_node) {
    spdlog::warn(
        "rdmad instance {} asked to take back channel {:#018x}, which it did not share; "
        "refused",
        call.instance, call.channel_id);
    return Status::NotFound(fmt::format("no channel {:#018x} shared with rdmad instance {} on {}",
                                        call.channel_id, call.previous_instance,
                                        options_.host_name));
  }
  Entry& e = it->second;
  if (PhaseEnded(e.phase)) {
    e.peer_told = true;
    return Status::NotFound(fmt::format("channel {:#018x} is {} on {}: {}", call.channel_id,
                                        ChannelStateName(e.record.state), options_.host_name,
                                        e.record.reason));
  }
  if (e.record.state != ChannelState::kEstablished) {
    return Status::NotFound(fmt::format("channel {:#018x} is still {} on {}", call.channel_id,
                                        ChannelStateName(e.record.state), options_.host_name));
  }
  e.record.peer_instance = call.instance;
  bool was_waiting = e.phase == ChannelPhase::kPeerLost;
  if (was_waiting) {
    ResumeLocked(e, ChannelEvent::kReclaimedByPeer);
  } else {
    ApplyLocked(e, ChannelEvent::kReclaimedByPeer);
  }
  if (call.previous_instance == call.instance) {
    spdlog::info("{}: still open here, as peer daemon {} asked after a session loss",
                 DescribeChannel(e.record), e.record.peer);
  } else {
    spdlog::info("{}: taken back by the restarted peer daemon (instance {}){}",
                 DescribeChannel(e.record), call.instance, was_waiting ? "; it goes on" : "");
  }
  return Status::Ok();
}

// The peer may have closed some of them while the daemons were apart (and
// could not tell): each is verified with a ReclaimChannel from this very
// instance, which the peer answers OK only for a channel it still has.
void Broker::OnPeerBack(const std::string& instance_id) {
  if (instance_id.empty()) return;
  std::vector<uint64_t> verify, reclaim;
  std::string name;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, e] : channels_) {
      if (e.record.peer_instance != instance_id) continue;
      if (e.phase == ChannelPhase::kReattaching) {  // adopted: ask now the peer is up
        if (!e.reclaim_in_flight) reclaim.push_back(id);
        continue;
      }
      if (e.phase != ChannelPhase::kPeerLost) continue;
      ResumeLocked(e, ChannelEvent::kPeerBack);
      e.previous_self = options_.instance_id;
      name = e.record.peer;
      verify.push_back(id);
    }
  }
  if (!verify.empty()) {
    spdlog::info(
        "peer daemon {} is back (same instance): {} waiting channel(s) go on once it confirms "
        "them",
        name, verify.size());
  }
  for (uint64_t id : verify) TryReclaim(id);
  for (uint64_t id : reclaim) TryReclaim(id);
}

}  // namespace rdmad
