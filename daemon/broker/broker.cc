// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Broker: planning, the initiator's Connect and the acceptor's OpenChannel.
// The lifecycle (holds, closes, peer loss, the table's hygiene) is in
// broker_lifecycle.cc.

#include "daemon/broker/broker.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/secure_random.h"

namespace rdmad {
namespace {

// Unguessable: a channel id names the channel in leases and peer calls.
uint64_t RandomChannelId() {
  uint64_t id = 0;
  while (id == 0) id = SecureRandomU64();
  return id;
}

bool IsLoopback(const std::string& ip) { return ip == "::1" || ip.rfind("127.", 0) == 0; }

// No network: no path and no peer (a broker that only serves local calls).
class NoNetwork final : public BrokerNetwork {
 public:
  StatusOr<PathDecision> ResolvePath(const PathRequest&) const override {
    return Status::NotFound("no path policy");
  }
  StatusOr<BrokerPeer> FindPeer(const std::string& name, std::optional<uid_t>) override {
    return Status::NotFound("unknown peer " + name + ": no peers");
  }
  StatusOr<std::shared_ptr<PeerLink>> LinkToInstance(const std::string& instance_id) override {
    return Status::NotFound("no session up to rdmad instance " + instance_id);
  }
  Status SendEvent(const std::string&, const PeerEvent&) override {
    return Status::Unavailable("no peer sessions");
  }
};

BrokerOptions WithDefaults(BrokerOptions o) {
  static NoNetwork none;
  if (o.network == nullptr) o.network = &none;
  if (!o.lease_sealer) o.lease_sealer = std::make_shared<const LeaseSealer>();
  if (o.clock == nullptr) o.clock = &Clock::System();
  if (o.source_address == nullptr) o.source_address = &KernelSourceAddresses();
  return o;
}

}  // namespace

// The local RDMA path of plan, if it is one, into record.
void Broker::SetPath(const ChannelPlan& plan, ChannelRecord* record) {
  if (!plan.path) return;
  record->device = plan.path->device;
  record->port = plan.path->port;
  record->gid = plan.path->gid;
}

Broker::Broker(BrokerOptions options)
    : options_(WithDefaults(std::move(options))),
      services_(options_.host_name),
      teller_(options_.network, &services_, options_.instance_id),
      limits_(options_.host_name, options_.max_channels, options_.max_channels_per_peer) {}

void Broker::SetLimits(size_t max_channels, size_t max_channels_per_peer) {
  std::lock_guard<std::mutex> lock(mu_);
  limits_.SetDaemonLimits(max_channels, max_channels_per_peer);
}

void Broker::SetOwnerLimits(const OwnerLimits& limits) {
  std::lock_guard<std::mutex> lock(mu_);
  limits_.SetOwnerLimits(limits);
}

Status Broker::AdmitChannels(const Caller& caller, const std::vector<uint64_t>& channel_ids) const {
  std::lock_guard<std::mutex> lock(mu_);
  return limits_.CheckOwner(RecordsLocked(), caller, /*planning=*/false, channel_ids.size(),
                            channel_ids);
}

// The TCP acceptor listens where the initiator can reach it: the loopback
// address for a loopback peer, else the kernel's source address for
// reaching the peer (the address it routes from), else the wildcard.
std::string Broker::TcpBindHost(const std::string& peer_ip) const {
  if (IsLoopback(peer_ip)) return peer_ip;
  std::optional<std::string> source = options_.source_address->SourceAddressFor(peer_ip);
  if (source && !source->empty()) {
    spdlog::debug("TCP for {}: listening on {}, the kernel's source address for it", peer_ip,
                  *source);
    return *source;
  }
  std::string wildcard = peer_ip.find(':') != std::string::npos ? "::" : "0.0.0.0";
  spdlog::warn("TCP for {}: no source address for it (no route?); listening on the wildcard {}",
               peer_ip, wildcard);
  return wildcard;
}

ChannelPlan Broker::Plan(const std::string& peer_ip, const std::string& tcp_reason) const {
  ChannelPlan plan;
  if (!tcp_reason.empty() || options_.force_tcp) {
    plan.tcp_reason = tcp_reason.empty() ? "the config forces TCP" : tcp_reason;
    return plan;
  }
  StatusOr<PathDecision> path = options_.network->ResolvePath(PathRequest{peer_ip, 0});
  if (!path.ok()) {
    plan.tcp_reason = "no RDMA path to " + peer_ip + ": " + path.status().message();
    return plan;
  }
  plan.path = std::move(path).value();
  return plan;
}

StatusOr<PlannedChannel> Broker::PlanChannel(const Caller& caller, const std::string& peer,
                                             const std::string& service, bool force_tcp,
                                             size_t count) {
  RDMAD_RETURN_IF_ERROR(ServiceRegistry::ValidateServiceName(service));
  if (count < 1 || count > kMaxChannelBatch) {
    return Status::InvalidArgument(
        fmt::format("count: 1..{} channels per batch, not {}", kMaxChannelBatch, count));
  }
  StatusOr<BrokerPeer> found = options_.network->FindPeer(
      peer, caller.self ? std::nullopt : std::optional<uid_t>(caller.uid));
  if (!found.ok()) return found.status();
  PlannedChannel planned;
  const uint64_t first = RandomChannelId();
  planned.peer_address = HostOfAddress(found.value().address);
  planned.plan = Plan(planned.peer_address, force_tcp ? "TCP requested by the application" : "");
  std::string what = count == 1 ? fmt::format("channel {:#018x}", first)
                                : fmt::format("{} channels ({:#018x} ...)", count, first);
  if (planned.plan.path) {
    spdlog::info("{} to {} service {}: RDMA planned on {} port {} GID index {}", what, peer,
                 service, planned.plan.path->device, planned.plan.path->port,
                 planned.plan.path->gid_index);
  } else {
    spdlog::info("{} to {} service {}: TCP planned: {}", what, peer, service,
                 planned.plan.tcp_reason);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return Status::Unavailable("rdmad on " + options_.host_name + " is stopping");
  RDMAD_RETURN_IF_ERROR(limits_.CheckDaemon(RecordsLocked(), found.value().name, count));
  RDMAD_RETURN_IF_ERROR(limits_.CheckOwner(RecordsLocked(), caller, /*planning=*/true, count));
  RDMAD_RETURN_IF_ERROR(limits_.CheckOwner(RecordsLocked(), caller, /*planning=*/false, count));
  for (size_t i = 0; i < count; ++i) {
    uint64_t id = first;
    if (i > 0) {
      do id = RandomChannelId();
      while (channels_.count(id) != 0);
    }
    planned.channel_ids.push_back(id);
    Entry& entry = channels_[id];
    entry.peer_key = peer;
    entry.since = Now();
    entry.record = ChannelRecord{};
    entry.record.channel_id = id;
    entry.record.peer = found.value().name;
    entry.record.service = service;
    entry.record.initiator = true;
    entry.phase = ChannelPhase::kPlanned;
    entry.record.state = PublicState(entry.phase);
    entry.record.created = options_.clock->WallNow();
    entry.record.owner_uid = caller.uid;
    entry.record.owner_pid = caller.pid;
    SetPath(planned.plan, &entry.record);
  }
  return planned;
}

void Broker::Fail(uint64_t channel_id, const std::string& reason) {
  std::vector<Ending> endings;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = channels_.find(channel_id);
    if (it == channels_.end()) return;
    auto ending = EndLocked(it->second, ChannelEvent::kFail, reason, false, "");
    if (ending) endings.push_back(std::move(*ending));
  }
  Deliver(std::move(endings));
}

bool Broker::ApplyLocked(Entry& e, ChannelEvent event) {
  std::optional<ChannelPhase> next = NextPhase(e.phase, event);
  if (!next) {
    spdlog::debug("{}: {} changes nothing in phase {}", DescribeChannel(e.record),
                  ChannelEventName(event), ChannelPhaseName(e.phase));
    return false;
  }
  if (*next != e.phase) {
    spdlog::debug("{}: {} -> {} ({})", DescribeChannel(e.record), ChannelPhaseName(e.phase),
                  ChannelPhaseName(*next), ChannelEventName(event));
    e.phase = *next;
    e.since = Now();
  }
  e.record.state = PublicState(e.phase);
  return true;
}

Broker::Entry* Broker::FindOwnedLocked(const Caller& caller, uint64_t channel_id, bool admin) {
  auto it = channels_.find(channel_id);
  if (it == channels_.end()) return nullptr;
  const ChannelRecord& r = it->second.record;
  bool owns = caller.Is(r.owner_uid) || caller.Is(r.self_acceptor_uid);
  return owns || (admin && caller.admin) ? &it->second : nullptr;
}

std::vector<ChannelRecord> Broker::ChannelsFor(const Caller& caller) const {
  std::vector<ChannelRecord> all = Channels();
  std::erase_if(all, [&](const ChannelRecord& r) {
    return !caller.Reaches(r.owner_uid) && !caller.Reaches(r.self_acceptor_uid);
  });
  return all;
}

bool Broker::HasChannelsWith(const std::string& name, const std::string& address,
                             const std::string& instance_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, e] : channels_) {
    if (ChannelEnded(e.record.state)) continue;
    const ChannelRecord& r = e.record;
    if (r.peer == name || r.peer == address || e.peer_key == name || e.peer_key == address ||
        (!instance_id.empty() && r.peer_instance == instance_id)) {
      return true;
    }
  }
  return false;
}

std::vector<ChannelRecord> Broker::Channels() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ChannelRecord> out;
  for (const auto& [id, entry] : channels_) out.push_back(entry.record);
  std::sort(out.begin(), out.end(),
            [](const ChannelRecord& a, const ChannelRecord& b) { return a.created < b.created; });
  return out;
}

}  // namespace rdmad
