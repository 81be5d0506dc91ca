// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Broker: the channel lifecycle. Holds (the applications' lifelines),
// closes from either side, the loss of a peer daemon, and the table's
// hygiene. Every change is made under mu_; what follows from it (holders,
// a waiting Connect, the listener, the peer daemon) is told afterwards,
// without the lock, by Deliver.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "daemon/broker/broker.h"

namespace rdmad {
namespace {

std::string Ms(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

}  // namespace

bool IsInstanceId(const std::string& id) {
  return id.size() == 32 && std::all_of(id.begin(), id.end(), [](unsigned char c) {
           return std::isdigit(c) || (c >= 'a' && c <= 'f');
         });
}

Broker::~Broker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  sweep_cv_.notify_all();
  if (sweeper_.joinable()) sweeper_.join();
}

std::optional<Broker::Ending> Broker::EndLocked(Entry& e, ChannelEvent event,
                                                const std::string& reason, bool tell_peer,
                                                const std::string& peer_reason) {
  std::optional<ChannelPhase> next = NextPhase(e.phase, event);
  if (!next || !PhaseEnded(*next)) return std::nullopt;
  Ending ending;
  ending.was_established = e.record.state == ChannelState::kEstablished;
  bool peer_knows_it = e.phase != ChannelPhase::kPlanned;  // OpenChannel was sent
  ApplyLocked(e, event);
  e.record.reason = reason;
  for (auto& [token, holder] : e.holders) ending.holders.push_back(std::move(holder));
  e.holders.clear();
  ending.open = std::exchange(e.open, nullptr);
  ending.tell_peer = tell_peer && peer_knows_it && !e.peer_told;
  if (ending.tell_peer) e.peer_told = true;
  ending.peer_reason = peer_reason;
  ending.record = e.record;
  ending.peer_key = e.peer_key;
  return ending;
}

Broker::Ending Broker::LateTell(const Entry& e, const std::string& peer_reason) {
  Ending ending;
  ending.record = e.record;
  ending.peer_key = e.peer_key;
  ending.tell_peer = true;
  ending.peer_reason = peer_reason;
  ending.late = true;
  return ending;
}

StatusOr<Broker::HoldResult> Broker::Hold(const Caller& caller, uint64_t channel_id,
                                          std::shared_ptr<ChannelHolder> holder) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry* found = FindOwnedLocked(caller, channel_id, /*admin=*/false);
  if (found == nullptr) {
    return Status::NotFound(
        fmt::format("no channel {:#018x} on {}", channel_id, options_.host_name));
  }
  Entry& e = *found;
  if (ChannelEnded(e.record.state))
    return HoldResult{.token = 0, .state = e.record.state, .reason = e.record.reason};
  // A lifeline to a stopping daemon would end at once: the library holds
  // the channel on the next rdmad instead.
  if (stopping_) return Status::Unavailable("rdmad on " + options_.host_name + " is stopping");
  uint64_t token = next_token_++;
  e.holders[token] = std::move(holder);
  e.held = true;
  spdlog::debug("{}: held by its application", DescribeChannel(e.record));
  return HoldResult{.token = token, .state = e.record.state};
}

void Broker::Unhold(uint64_t channel_id, uint64_t token, const std::string& reason) {
  std::vector<Ending> endings;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = channels_.find(channel_id);
    if (it == channels_.end() || it->second.holders.erase(token) == 0) return;
    // Stopping: lifelines end because this daemon does; the application
    // keeps its channel and re-attaches to the next rdmad.
    if (stopping_) return;
    auto ending = LetGoLocked(it->second, reason.substr(0, internal::kMaxReasonLength));
    if (ending) endings.push_back(std::move(*ending));
  }
  Deliver(std::move(endings));
}

// The application let go of the channel: it closes, and the peer is told.
// A channel that already failed here (say the session to the peer flapped)
// is told to the peer now, which may still hold its side.
std::optional<Broker::Ending> Broker::LetGoLocked(Entry& e, const std::string& why) {
  if (!PhaseEnded(e.phase)) return EndLocked(e, ChannelEvent::kClose, why, true, why);
  if (e.peer_told || e.phase != ChannelPhase::kFailed || !e.held) return std::nullopt;
  e.peer_told = true;
  return LateTell(e, why);
}

Status Broker::Release(const Caller& caller, uint64_t channel_id, const std::string& reason) {
  std::vector<Ending> endings;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Entry* e = FindOwnedLocked(caller, channel_id, /*admin=*/true);
    if (e == nullptr) {
      return Status::NotFound(
          fmt::format("no channel {:#018x} on {}", channel_id, options_.host_name));
    }
    if (!caller.Is(e->record.owner_uid) && !caller.Is(e->record.self_acceptor_uid)) {
      spdlog::info("{}: closed by admin {} (uid {})", DescribeChannel(e->record), caller.name,
                   caller.uid);
    }
    auto ending = LetGoLocked(*e, reason.substr(0, internal::kMaxReasonLength));
    if (ending) endings.push_back(std::move(*ending));
  }
  Deliver(std::move(endings));
  return Status::Ok();
}

Status Broker::OnCloseChannel(const CloseChannelCall& call) {
  if (call.channel_id == 0) return Status::InvalidArgument("channel_id: required");
  if (!IsInstanceId(call.initiator_instance)) {
    return Status::InvalidArgument("initiator_instance: 32 lower-case hex digits required");
  }
  std::string reason = call.reason.substr(0, internal::kMaxReasonLength);
  if (reason.empty()) reason = "no reason given";
  std::vector<Ending> endings;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = channels_.find(call.channel_id);
    if (it == channels_.end() || it->second.record.peer_instance != call.initiator_instance) {
      // Only a party to a channel may close it: logged, for an operator to
      // see a peer that tries another's channels.
      spdlog::warn(
          "rdmad instance {} asked to close channel {:#018x}, which it does not share; refused",
          call.initiator_instance, call.channel_id);
      return Status::NotFound(fmt::format("no channel {:#018x} shared with rdmad instance {} on {}",
                                          call.channel_id, call.initiator_instance,
                                          options_.host_name));
    }
    Entry& e = it->second;
    e.peer_told = true;
    auto ending = EndLocked(e, ChannelEvent::kClose,
                            "closed by peer " + e.record.peer + ": " + reason, false, "");
    if (ending) endings.push_back(std::move(*ending));
  }
  Deliver(std::move(endings));
  return Status::Ok();
}

// Established channels wait for the peer daemon (their data path is the
// applications'); the others cannot finish their handshake and fail.
void Broker::OnPeerLost(const std::string& instance_id, const std::string& name,
                        const std::string& why) {
  if (instance_id.empty()) return;
  std::vector<Ending> endings;
  size_t waiting = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, e] : channels_) {
      if (e.record.peer_instance != instance_id || PhaseEnded(e.phase)) continue;
      // Named as the table names the peer, whichever way the loss was seen.
      std::string lost = "peer daemon " + e.record.peer + " lost: " + why;
      ChannelPhase was = e.phase;
      std::optional<ChannelPhase> next = NextPhase(was, ChannelEvent::kPeerLost);
      if (next && PhaseEnded(*next)) {  // in its handshake
        if (auto ending = EndLocked(e, ChannelEvent::kPeerLost, lost, false, "")) {
          endings.push_back(std::move(*ending));
        }
        continue;
      }
      // An adopted channel keeps its deadline and asks again once the
      // peer is back; one lost already waits.
      if (!next || *next == was) continue;
      ApplyLocked(e, ChannelEvent::kPeerLost);
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
  Deliver(std::move(endings));
}

size_t Broker::OnPathLost(const std::string& device, int port, const std::string& gid,
                          const std::string& why) {
  std::vector<Ending> endings;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, e] : channels_) {
      const ChannelRecord& r = e.record;
      if (r.device.empty() || r.device != device || r.transport == EndpointKind::kTcp) continue;
      if ((port != 0 && r.port != port) || (!gid.empty() && r.gid != gid)) continue;
      auto ending = EndLocked(e, ChannelEvent::kFail, why, true, why);
      if (ending) endings.push_back(std::move(*ending));
    }
  }
  size_t failed = endings.size();
  if (failed > 0) spdlog::warn("{}: {} RDMA channel(s) on it failed", why, failed);
  Deliver(std::move(endings));
  return failed;
}

size_t FailLostPaths(Broker& broker, const Inventory& inventory,
                     const std::vector<InventoryChange>& changes) {
  size_t failed = 0;
  for (const InventoryChange& c : changes) {
    switch (c.kind) {
      case InventoryChange::Kind::kDeviceRemoved:
        failed += broker.OnPathLost(c.device, 0, "", c.message);
        break;
      case InventoryChange::Kind::kPortStateChanged: {
        const DeviceInfo* device = inventory.Find(c.device);
        bool active = false;
        for (const PortInfo& p : device != nullptr ? device->ports : std::vector<PortInfo>{}) {
          active = active || (p.port == c.port && p.state == 4);  // IBV_PORT_ACTIVE
        }
        if (!active) failed += broker.OnPathLost(c.device, c.port, "", c.message);
        break;
      }
      case InventoryChange::Kind::kGidRemoved:
        failed += broker.OnPathLost(c.device, c.port, c.gid, c.message);
        break;
      default: break;
    }
  }
  return failed;
}

void Broker::Shutdown() {
  std::vector<Ending> endings;
  std::vector<std::shared_ptr<ChannelHolder>> stopping_holders;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    std::string why = "rdmad on " + options_.host_name + " stopped";
    size_t left = 0;
    for (auto& [id, e] : channels_) {
      if (e.record.state == ChannelState::kEstablished) {
        ++left;
        for (auto& [token, holder] : e.holders) stopping_holders.push_back(holder);
        continue;
      }
      auto ending = EndLocked(e, ChannelEvent::kClose, why, true, why);
      if (ending) endings.push_back(std::move(*ending));
    }
    spdlog::info(
        "stopping: {} established channel(s) left to their applications (they re-attach to the "
        "next rdmad), {} in their handshake closed",
        left, endings.size());
  }
  std::string stopping = "rdmad on " + options_.host_name + " is stopping";
  for (auto& holder : stopping_holders) holder->OnDaemonStopping(stopping);
  services_.Shutdown(stopping);
  Deliver(std::move(endings));
  sweep_cv_.notify_all();
}

std::vector<Broker::Ending> Broker::SweepLocked(BrokerClock::time_point now) {
  std::vector<Ending> endings;
  std::vector<std::pair<BrokerClock::time_point, uint64_t>> ended;
  for (auto& [id, e] : channels_) {
    std::optional<Ending> ending;
    bool due = now - e.since >= options_.peer_grace;  // in peer_lost, reattaching, confirming
    switch (e.phase) {
      case ChannelPhase::kPlanned:
        if (now - e.since < options_.plan_lifetime) break;
        ending = EndLocked(
            e, ChannelEvent::kPlanExpired,
            "expired: the application did not Connect within " + Ms(options_.plan_lifetime), false,
            "");
        break;
      case ChannelPhase::kPeerLost:
        if (!due) break;
        ending =
            EndLocked(e, ChannelEvent::kGraceExpired,
                      e.lost_why + " (not back within " + Ms(options_.peer_grace) + ")", false, "");
        break;
      case ChannelPhase::kConfirming:
        if (due) {
          spdlog::info(
              "{}: peer daemon {} could not be asked whether it still has the channel; it "
              "goes on",
              DescribeChannel(e.record), e.record.peer);
          ApplyLocked(e, ChannelEvent::kGraceExpired);
        } else if (!e.reclaim_in_flight) {
          reclaim_.push_back(id);
        }
        break;
      case ChannelPhase::kReattaching:
        if (due) {
          std::string why = "rdmad restarted and peer daemon " + e.record.peer +
                            " did not confirm the channel within " + Ms(options_.peer_grace);
          ending = EndLocked(e, ChannelEvent::kGraceExpired, why, true, why);
        } else if (!e.reclaim_in_flight) {
          reclaim_.push_back(id);
        }
        break;
      case ChannelPhase::kEstablished:
        if (e.held || now - e.since < options_.hold_grace) break;
        {
          std::string why = "the application did not hold the channel within " +
                            Ms(options_.hold_grace) + " (HoldChannel)";
          ending = EndLocked(e, ChannelEvent::kHoldExpired, why, true, why);
        }
        break;
      case ChannelPhase::kOpening:
      case ChannelPhase::kClosed:
      case ChannelPhase::kFailed: break;
    }
    if (ending) endings.push_back(std::move(*ending));
    if (ChannelEnded(e.record.state)) ended.emplace_back(e.since, id);
  }
  std::sort(ended.begin(), ended.end());  // oldest end first
  size_t excess = ended.size() > options_.max_ended ? ended.size() - options_.max_ended : 0;
  for (size_t i = 0; i < ended.size(); ++i) {
    if (i < excess || now - ended[i].first >= options_.keep_ended) channels_.erase(ended[i].second);
  }
  return endings;
}

void Broker::Sweep() {
  std::vector<Ending> endings;
  std::vector<uint64_t> reclaim;
  {
    std::lock_guard<std::mutex> lock(mu_);
    endings = SweepLocked(Now());
    reclaim.swap(reclaim_);
  }
  Deliver(std::move(endings));
  for (uint64_t id : reclaim) TryReclaim(id);
}

void Broker::StartSweeper(std::chrono::milliseconds period) {
  sweeper_ = std::thread([this, period] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      sweep_cv_.wait_for(lock, period, [this] { return stopping_; });
      if (stopping_) break;
      std::vector<Ending> endings = SweepLocked(Now());
      std::vector<uint64_t> reclaim;
      reclaim.swap(reclaim_);
      lock.unlock();
      Deliver(std::move(endings));
      for (uint64_t id : reclaim) TryReclaim(id);
      lock.lock();
    }
  });
}

void Broker::OnSessionState(const PeerSnapshot& peer) {
  if (!peer.remote) return;
  if (peer.state == PeerSessionState::kUp) OnPeerBack(peer.remote->instance_id);
  if (peer.state == PeerSessionState::kDown || peer.state == PeerSessionState::kVersionMismatch ||
      peer.state == PeerSessionState::kCircuitOpen) {
    OnPeerLost(peer.remote->instance_id, peer.name, peer.last_error);
  }
}

void Broker::OnSessionEvent(const PeerSnapshot& peer, const PeerEvent& event) {
  if (event.kind != PeerEvent::Kind::kChannelClosed || !peer.remote) return;
  Status closed = OnCloseChannel(CloseChannelCall{.channel_id = event.channel_id,
                                                  .reason = event.reason,
                                                  .initiator_instance = peer.remote->instance_id});
  if (!closed.ok()) spdlog::debug("peer {}: ChannelClosed: {}", peer.name, closed.message());
}

bool Broker::UsesSession(const PeerSnapshot& peer) const {
  return HasChannelsWith(peer.name, peer.address, peer.remote ? peer.remote->instance_id : "");
}

}  // namespace rdmad
