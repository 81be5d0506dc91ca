// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/channel_reattach.h"

#include <spdlog/spdlog.h>
#include <strings.h>
namespace rdmad {
namespace {

// The phases in which the broker asks the peer for the channel.
bool Reclaiming(ChannelPhase p) {
  return p == ChannelPhase::kReattaching || p == ChannelPhase::kConfirming;
}

std::string Ms(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

}  // namespace

StatusOr<ChannelLease> ChannelReattach::LeaseOf(uint64_t channel_id, EndpointKind transport) const {
  auto lock = table_.Lock();
  const Entry* found = table_.FindLocked(channel_id);
  if (found == nullptr) {
    return Status::NotFound(
        fmt::format("no channel {:#018x} on {}", channel_id, options_.host_name));
  }
  const Entry& e = *found;
  const ChannelRecord& r = e.record;
  ChannelLease lease;
  static_cast<ChannelFacts&>(lease) = r;
  lease.peer_key = e.peer_key;
  if (r.transport == EndpointKind::kUnknown) lease.transport = transport;
  bool away = e.phase == ChannelPhase::kPeerLost || e.phase == ChannelPhase::kReattaching;
  lease.reason = away ? e.transport_reason : r.reason;
  lease.self_instance = options_.instance_id;
  lease.owner_uid = r.owner_uid;
  return lease;
}

Status ChannelReattach::Adopt(const Caller& caller, uint64_t channel_id,
                              const ChannelLease& lease) {
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
    auto lock = table_.Lock();
    RDMAD_RETURN_IF_ERROR(table_.CheckRunningLocked());
    const Entry* known = table_.FindLocked(channel_id);
    bool mine = caller.uid != kNoUid && caller.uid == lease.owner_uid;
    if (!mine || (known != nullptr && known->record.owner_uid != caller.uid)) {
      spdlog::warn("channel {:#018x}: {} (uid {}) re-attaching with another uid's lease: refused",
                   channel_id, caller.name, caller.uid);
      return Status::NotFound(
          fmt::format("no channel {:#018x} on {}", channel_id, options_.host_name));
    }
    if (known != nullptr) return Status::Ok();
    if (lease.self_instance == options_.instance_id) {
      return Status::NotFound(fmt::format("channel {:#018x} ended on {} (no longer listed)",
                                          channel_id, options_.host_name));
    }
    const ChannelLimits& limits = table_.LimitsLocked();
    RDMAD_RETURN_IF_ERROR(limits.CheckOwner(table_.RecordsLocked(), caller, /*planning=*/false, 1));
    RDMAD_RETURN_IF_ERROR(limits.CheckDaemon(table_.RecordsLocked(), lease.peer, 1));
    // An adopted channel starts in reattaching.
    Entry& e = table_.AddLocked(channel_id, ChannelPhase::kReattaching);
    e.peer_key = lease.peer_key.empty() ? lease.peer : lease.peer_key;
    e.previous_self = lease.self_instance;
    e.transport_reason = lease.reason;
    ChannelRecord& r = e.record;
    static_cast<ChannelFacts&>(r) = lease;
    r.reason = "re-attached after rdmad restarted; confirming it with peer daemon " + lease.peer;
    r.owner_uid = caller.uid;
    r.owner_pid = caller.pid;
    spdlog::info("{}: re-attached by its application after rdmad restarted ({} over {})",
                 DescribeChannel(r), r.initiator ? "initiator" : "acceptor",
                 EndpointKindName(r.transport));
  }
  TryReclaim(channel_id);
  return Status::Ok();
}

void ChannelReattach::TryReclaim(uint64_t channel_id) {
  ReclaimChannelCall call;
  std::string instance;
  std::string peer_key;
  {
    auto lock = table_.Lock();
    const Entry* e = table_.FindLocked(channel_id);
    if (e == nullptr || !Reclaiming(e->phase) || e->reclaim_in_flight) return;
    call = ReclaimChannelCall{channel_id, e->previous_self, options_.instance_id};
    instance = e->record.peer_instance;
    peer_key = e->peer_key;
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
    auto lock = table_.Lock();
    Entry* e = table_.FindLocked(channel_id);
    if (e == nullptr || !Reclaiming(e->phase) || e->reclaim_in_flight) return;
    e->reclaim_in_flight = true;
  }
  link->ReclaimChannel(call, [this, channel_id, peer_now](const Status& answer) {
    Reclaimed(channel_id, peer_now, answer);
  });
}

void ChannelReattach::Reclaimed(uint64_t channel_id, const std::string& peer_instance,
                                const Status& answer) {
  std::vector<ChannelEnding> endings;
  {
    auto lock = table_.Lock();
    Entry* found = table_.FindLocked(channel_id);
    if (found == nullptr) return;
    Entry& e = *found;
    e.reclaim_in_flight = false;
    if (!Reclaiming(e.phase)) return;
    if (answer.ok()) {
      e.record.peer_instance = peer_instance;
      table_.ResumeLocked(e, ChannelEvent::kConfirmed);
      spdlog::info("{}: confirmed by peer daemon {}; it goes on", DescribeChannel(e.record),
                   e.record.peer);
    } else if (answer.code() == StatusCode::kNotFound ||
               answer.code() == StatusCode::kInvalidArgument) {
      std::string why = (e.phase == ChannelPhase::kConfirming
                             ? "peer daemon " + e.record.peer + " is back but"
                             : "rdmad restarted and peer daemon " + e.record.peer) +
                        " no longer has the channel: " + answer.message();
      e.peer_told = true;
      auto ending = table_.EndLocked(e, ChannelEvent::kRefused, why, false, "");
      if (ending) endings.push_back(std::move(*ending));
    } else {
      spdlog::debug("{}: reclaim: {}; trying again", DescribeChannel(e.record), answer.ToString());
    }
  }
  teller_.Deliver(std::move(endings));
}

Status ChannelReattach::OnReclaimChannel(const ReclaimChannelCall& call) {
  if (call.channel_id == 0) return Status::InvalidArgument("channel_id: required");
  if (!IsInstanceId(call.previous_instance) || !IsInstanceId(call.instance)) {
    return Status::InvalidArgument("instance ids: 32 lower-case hex digits required");
  }
  auto lock = table_.Lock();
  Entry* found = table_.FindLocked(call.channel_id);
  // The previous instance unknown to the peer layer (this daemon restarted
  // since): the channel's peer must be the caller's node.
  bool other_node = found != nullptr && !call.caller_node.empty() && !call.previous_node_known &&
                    strcasecmp(found->record.peer.c_str(), call.caller_node.c_str()) != 0;
  if (found == nullptr || found->record.peer_instance != call.previous_instance || other_node) {
    return RefuseUnshared(call.instance, "take back", call.channel_id, call.previous_instance,
                          options_.host_name);
  }
  Entry& e = *found;
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
    table_.ResumeLocked(e, ChannelEvent::kReclaimedByPeer);
  } else {
    table_.ApplyLocked(e, ChannelEvent::kReclaimedByPeer);
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
void ChannelReattach::OnPeerBack(const std::string& instance_id) {
  if (instance_id.empty()) return;
  std::vector<uint64_t> verify, reclaim;
  std::string name;
  {
    auto lock = table_.Lock();
    for (auto& [id, e] : table_.EntriesLocked()) {
      if (e.record.peer_instance != instance_id) continue;
      if (e.phase == ChannelPhase::kReattaching) {  // adopted: ask now the peer is up
        if (!e.reclaim_in_flight) reclaim.push_back(id);
        continue;
      }
      if (e.phase != ChannelPhase::kPeerLost) continue;
      table_.ResumeLocked(e, ChannelEvent::kPeerBack);
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

// Established channels wait for the peer daemon (their data path is the
// applications'); the others cannot finish their handshake and fail.
void ChannelReattach::OnPeerLost(const std::string& instance_id, const std::string& name,
                                 const std::string& why) {
  if (instance_id.empty()) return;
  std::vector<ChannelEnding> endings;
  size_t waiting = 0;
  {
    auto lock = table_.Lock();
    for (auto& [id, e] : table_.EntriesLocked()) {
      if (e.record.peer_instance != instance_id || PhaseEnded(e.phase)) continue;
      // Named as the table names the peer, whichever way the loss was seen.
      std::string lost = "peer daemon " + e.record.peer + " lost: " + why;
      ChannelPhase was = e.phase;
      std::optional<ChannelPhase> next = NextPhase(was, ChannelEvent::kPeerLost);
      if (next && PhaseEnded(*next)) {  // in its handshake
        if (auto ending = table_.EndLocked(e, ChannelEvent::kPeerLost, lost, false, "")) {
          endings.push_back(std::move(*ending));
        }
        continue;
      }
      // An adopted channel keeps its deadline and asks again once the
      // peer is back; one lost already waits.
      if (!next || *next == was) continue;
      table_.ApplyLocked(e, ChannelEvent::kPeerLost);
      ++waiting;
      e.lost_why = lost;
      if (was == ChannelPhase::kEstablished) e.transport_reason = e.record.reason;
      e.record.reason = lost + "; waiting up to " + Ms(options_.peer_grace) + " for it";
    }
  }
  if (waiting > 0 || !endings.empty()) {
    spdlog::warn(
        "peer daemon {} lost ({}): {} established channel(s) wait up to {} for it to come back, "
        "{} in their handshake failed",
        name, why, waiting, Ms(options_.peer_grace), endings.size());
  }
  teller_.Deliver(std::move(endings));
}

std::optional<ChannelEnding> ChannelReattach::SweepLocked(Entry& e, SteadyTime now) {
  bool due = now - e.since >= options_.peer_grace;
  switch (e.phase) {
    case ChannelPhase::kPeerLost:
      if (!due) return std::nullopt;
      return table_.EndLocked(e, ChannelEvent::kGraceExpired,
                              e.lost_why + " (not back within " + Ms(options_.peer_grace) + ")",
                              false, "");
    case ChannelPhase::kConfirming:
      if (due) {
        spdlog::info(
            "{}: peer daemon {} could not be asked whether it still has the channel; it goes on",
            DescribeChannel(e.record), e.record.peer);
        table_.ApplyLocked(e, ChannelEvent::kGraceExpired);
      } else if (!e.reclaim_in_flight) {
        queued_.push_back(e.record.channel_id);
      }
      return std::nullopt;
    case ChannelPhase::kReattaching:
      if (due) {
        std::string why = "rdmad restarted and peer daemon " + e.record.peer +
                          " did not confirm the channel within " + Ms(options_.peer_grace);
        return table_.EndLocked(e, ChannelEvent::kGraceExpired, why, true, why);
      }
      if (!e.reclaim_in_flight) queued_.push_back(e.record.channel_id);
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace rdmad
