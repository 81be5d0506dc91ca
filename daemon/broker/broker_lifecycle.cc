// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Broker: the channel lifecycle. Holds (the applications' lifelines),
// closes from either side, the loss of a local path, the daemon's stop and
// the table's hygiene. Every change is made under the table's lock; what
// follows from it (holders, a waiting Connect, the listener, the peer
// daemon) is told afterwards, without the lock, by the teller.

#include <spdlog/spdlog.h>

#include <algorithm>

#include "daemon/broker/broker.h"

namespace rdmad {
namespace {

std::string Ms(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

}  // namespace

Broker::~Broker() {
  {
    auto lock = table_.Lock();
    table_.SetStoppingLocked();
  }
  sweep_cv_.notify_all();
  if (sweeper_.joinable()) sweeper_.join();
}

StatusOr<Broker::HoldResult> Broker::Hold(const Caller& caller, uint64_t channel_id,
                                          std::shared_ptr<ChannelHolder> holder) {
  auto lock = table_.Lock();
  Entry* found = table_.FindOwnedLocked(caller, channel_id, /*admin=*/false);
  if (found == nullptr) {
    return Status::NotFound(
        fmt::format("no channel {:#018x} on {}", channel_id, options_.host_name));
  }
  Entry& e = *found;
  if (ChannelEnded(e.record.state))
    return HoldResult{.token = 0, .state = e.record.state, .reason = e.record.reason};
  // A lifeline to a stopping daemon would end at once: the library holds
  // the channel on the next rdmad instead.
  RDMAD_RETURN_IF_ERROR(table_.CheckRunningLocked());
  uint64_t token = table_.NextTokenLocked();
  e.holders[token] = std::move(holder);
  e.held = true;
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("{}: held by its application", DescribeChannel(e.record));
  }
  return HoldResult{.token = token, .state = e.record.state, .reason = {}};
}

void Broker::Unhold(uint64_t channel_id, uint64_t token, const std::string& reason) {
  std::vector<ChannelEnding> endings;
  {
    auto lock = table_.Lock();
    Entry* e = table_.FindLocked(channel_id);
    if (e == nullptr || e->holders.erase(token) == 0) return;
    // Stopping: lifelines end because this daemon does; the application
    // keeps its channel and re-attaches to the next rdmad.
    if (table_.StoppingLocked()) return;
    auto ending = table_.LetGoLocked(*e, reason.substr(0, internal::kMaxReasonLength));
    if (ending) endings.push_back(std::move(*ending));
  }
  teller_.Deliver(std::move(endings));
}

Status Broker::Release(const Caller& caller, uint64_t channel_id, const std::string& reason) {
  std::vector<ChannelEnding> endings;
  {
    auto lock = table_.Lock();
    Entry* e = table_.FindOwnedLocked(caller, channel_id, /*admin=*/true);
    if (e == nullptr) {
      return Status::NotFound(
          fmt::format("no channel {:#018x} on {}", channel_id, options_.host_name));
    }
    if (!caller.Is(e->record.owner_uid) && !caller.Is(e->record.self_acceptor_uid)) {
      spdlog::info("{}: closed by admin {} (uid {})", DescribeChannel(e->record), caller.name,
                   caller.uid);
    }
    auto ending = table_.LetGoLocked(*e, reason.substr(0, internal::kMaxReasonLength));
    if (ending) endings.push_back(std::move(*ending));
  }
  teller_.Deliver(std::move(endings));
  return Status::Ok();
}

Status Broker::ReportRails(const Caller& caller, uint64_t channel_id,
                           const std::vector<ChannelRailRecord>& rails,
                           std::vector<std::string>* changes) {
  auto lock = table_.Lock();
  Entry* e = table_.FindOwnedLocked(caller, channel_id, /*admin=*/false);
  if (e == nullptr) {
    return Status::NotFound(
        fmt::format("no channel {:#018x} on {}", channel_id, options_.host_name));
  }
  ChannelRecord& r = e->record;
  if (IsSelfAcceptorSide(r, caller)) return Status::Ok();
  if (rails.size() != r.rails.size()) {
    return Status::InvalidArgument(
        fmt::format("rails: {} reported, the channel has {}", rails.size(), r.rails.size()));
  }
  for (size_t i = 0; i < rails.size(); ++i) {
    ChannelRailRecord& rail = r.rails[i];
    bool was_up = rail.up;
    rail.bytes_written = rails[i].bytes_written;
    rail.bytes_read = rails[i].bytes_read;
    rail.up = rails[i].up;
    rail.reason = rails[i].reason.substr(0, internal::kMaxReasonLength);
    if (rail.up == was_up) continue;
    std::string line = fmt::format("{}: rail {} -> {} {}", DescribeChannel(r), rail.device,
                                   rail.peer_device, rail.up ? "is back" : "out: " + rail.reason);
    spdlog::info("{}", line);
    if (changes != nullptr) changes->push_back(std::move(line));
  }
  return Status::Ok();
}

Status Broker::OnCloseChannel(const CloseChannelCall& call) {
  if (call.channel_id == 0) return Status::InvalidArgument("channel_id: required");
  if (!IsInstanceId(call.initiator_instance)) {
    return Status::InvalidArgument("initiator_instance: 32 lower-case hex digits required");
  }
  std::string reason = call.reason.substr(0, internal::kMaxReasonLength);
  if (reason.empty()) reason = "no reason given";
  std::vector<ChannelEnding> endings;
  {
    auto lock = table_.Lock();
    Entry* found = table_.FindLocked(call.channel_id);
    if (found == nullptr || found->record.peer_instance != call.initiator_instance) {
      // Only a party to a channel may close it.
      return RefuseUnshared(call.initiator_instance, "close", call.channel_id,
                            call.initiator_instance, options_.host_name);
    }
    Entry& e = *found;
    e.peer_told = true;
    auto ending = table_.EndLocked(e, ChannelEvent::kClose,
                                   "closed by peer " + e.record.peer + ": " + reason, false, "");
    if (ending) endings.push_back(std::move(*ending));
  }
  teller_.Deliver(std::move(endings));
  return Status::Ok();
}

size_t Broker::OnPathLost(const std::string& device, int port, const std::string& gid,
                          const std::string& why) {
  std::vector<ChannelEnding> endings;
  {
    auto lock = table_.Lock();
    for (auto& [id, e] : table_.EntriesLocked()) {
      const ChannelRecord& r = e.record;
      if (r.device.empty() || r.device != device || r.transport == EndpointKind::kTcp) continue;
      if ((port != 0 && r.port != port) || (!gid.empty() && r.gid != gid)) continue;
      auto ending = table_.EndLocked(e, ChannelEvent::kFail, why, true, why);
      if (ending) endings.push_back(std::move(*ending));
    }
  }
  size_t failed = endings.size();
  if (failed > 0) spdlog::warn("{}: {} RDMA channel(s) on it failed", why, failed);
  teller_.Deliver(std::move(endings));
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
  std::vector<ChannelEnding> endings;
  std::vector<std::shared_ptr<ChannelHolder>> stopping_holders;
  {
    auto lock = table_.Lock();
    table_.SetStoppingLocked();
    std::string why = "rdmad on " + options_.host_name + " stopped";
    size_t left = 0;
    for (auto& [id, e] : table_.EntriesLocked()) {
      if (e.record.state == ChannelState::kEstablished) {
        ++left;
        for (auto& [token, holder] : e.holders) stopping_holders.push_back(holder);
        continue;
      }
      auto ending = table_.EndLocked(e, ChannelEvent::kClose, why, true, why);
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
  teller_.Deliver(std::move(endings));
  sweep_cv_.notify_all();
}

std::vector<ChannelEnding> Broker::SweepLocked(SteadyTime now) {
  std::vector<ChannelEnding> endings;
  std::vector<std::pair<SteadyTime, uint64_t>> ended;
  for (auto& [id, e] : table_.EntriesLocked()) {
    std::optional<ChannelEnding> ending;
    switch (e.phase) {
      case ChannelPhase::kPlanned:
        if (now - e.since < options_.plan_lifetime) break;
        ending = table_.EndLocked(
            e, ChannelEvent::kPlanExpired,
            "expired: the application did not Connect within " + Ms(options_.plan_lifetime), false,
            "");
        break;
      case ChannelPhase::kPeerLost:
      case ChannelPhase::kConfirming:
      case ChannelPhase::kReattaching: ending = reattach_.SweepLocked(e, now); break;
      case ChannelPhase::kEstablished:
        if (e.held || now - e.since < options_.hold_grace) break;
        {
          std::string why = "the application did not hold the channel within " +
                            Ms(options_.hold_grace) + " (HoldChannel)";
          ending = table_.EndLocked(e, ChannelEvent::kHoldExpired, why, true, why);
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
    if (i < excess || now - ended[i].first >= options_.keep_ended) {
      table_.EraseLocked(ended[i].second);
    }
  }
  return endings;
}

void Broker::SweepAndTell(std::unique_lock<std::mutex>& lock) {
  std::vector<ChannelEnding> endings = SweepLocked(table_.Now());
  std::vector<uint64_t> reclaim = reattach_.TakeQueuedLocked();
  lock.unlock();
  teller_.Deliver(std::move(endings));
  for (uint64_t id : reclaim) reattach_.TryReclaim(id);
  lock.lock();
}

void Broker::Sweep() {
  auto lock = table_.Lock();
  SweepAndTell(lock);
}

void Broker::StartSweeper(std::chrono::milliseconds period) {
  sweeper_ = std::thread([this, period] {
    auto lock = table_.Lock();
    while (!table_.StoppingLocked()) {
      sweep_cv_.wait_for(lock, period, [this] { return table_.StoppingLocked(); });
      if (table_.StoppingLocked()) break;
      SweepAndTell(lock);
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
