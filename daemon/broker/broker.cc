// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Broker: its construction, the calls it passes to its parts, the limits
// and the table's queries. The lifecycle (holds, closes, path loss, the
// table's hygiene) is in broker_lifecycle.cc.

#include "daemon/broker/broker.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace rdmad {
namespace {

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

Broker::Broker(BrokerOptions options)
    : options_(WithDefaults(std::move(options))),
      services_(options_.host_name, options_.refusals),
      teller_(options_.network, &services_, &table_, options_.instance_id),
      table_(options_.host_name, options_.clock,
             ChannelLimits(options_.host_name, options_.max_channels,
                           options_.max_channels_per_peer, options_.refusals)),
      handshake_(&options_, &table_, &services_, &teller_),
      reattach_(&options_, &table_, &teller_) {}

StatusOr<PlannedChannel> Broker::PlanChannel(const Caller& caller, const std::string& peer,
                                             const std::string& service, bool force_tcp,
                                             size_t count) {
  return handshake_.PlanChannel(caller, peer, service, force_tcp, count);
}

StatusOr<ChannelEndpoints> Broker::Connect(const Caller& caller,
                                           const std::vector<ChannelOpening>& channels) {
  auto start = std::chrono::steady_clock::now();
  StatusOr<ChannelEndpoints> reply = handshake_.Connect(caller, channels);
  if (reply.ok()) {
    stats_.Succeeded(std::chrono::steady_clock::now() - start);
  } else {
    stats_.Failed("initiator", reply.status().code());
  }
  return reply;
}

StatusOr<ChannelEndpoint> Broker::Connect(const Caller& caller, uint64_t channel_id,
                                          const ChannelEndpoint& endpoint) {
  StatusOr<ChannelEndpoints> reply = Connect(caller, {ChannelOpening{channel_id, endpoint}});
  if (!reply.ok()) return reply.status();
  return std::move(reply.value().front());
}

StatusOr<ChannelEndpoints> Broker::OnOpenChannel(const OpenChannelCall& call,
                                                 const std::string& peer_ip) {
  StatusOr<ChannelEndpoints> reply = handshake_.OnOpenChannel(call, peer_ip);
  if (!reply.ok()) stats_.Failed("acceptor", reply.status().code());
  return reply;
}

StatusOr<ChannelLease> Broker::LeaseOf(uint64_t channel_id, EndpointKind transport) const {
  return reattach_.LeaseOf(channel_id, transport);
}

Status Broker::Adopt(const Caller& caller, uint64_t channel_id, const ChannelLease& lease) {
  return reattach_.Adopt(caller, channel_id, lease);
}

Status Broker::OnReclaimChannel(const ReclaimChannelCall& call) {
  return reattach_.OnReclaimChannel(call);
}

void Broker::OnPeerBack(const std::string& instance_id) { reattach_.OnPeerBack(instance_id); }

void Broker::OnPeerLost(const std::string& instance_id, const std::string& name,
                        const std::string& why) {
  reattach_.OnPeerLost(instance_id, name, why);
}

void Broker::SetLimits(size_t max_channels, size_t max_channels_per_peer) {
  auto lock = table_.Lock();
  table_.LimitsLocked().SetDaemonLimits(max_channels, max_channels_per_peer);
}

void Broker::SetOwnerLimits(const OwnerLimits& limits) {
  auto lock = table_.Lock();
  table_.LimitsLocked().SetOwnerLimits(limits);
}

Status Broker::AdmitChannels(const Caller& caller, const std::vector<uint64_t>& channel_ids) const {
  auto lock = table_.Lock();
  return table_.LimitsLocked().CheckOwner(table_.RecordsLocked(), caller, /*planning=*/false,
                                          channel_ids.size(), channel_ids);
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
  auto lock = table_.Lock();
  for (const auto& [id, e] : table_.EntriesLocked()) {
    if (ChannelEnded(e.record.state) && !e.telling) continue;
    const ChannelRecord& r = e.record;
    if (r.peer == name || r.peer == address || e.peer_key == name || e.peer_key == address ||
        (!instance_id.empty() && r.peer_instance == instance_id)) {
      return true;
    }
  }
  return false;
}

std::vector<ChannelRecord> Broker::Channels() const {
  auto lock = table_.Lock();
  std::vector<ChannelRecord> out;
  for (const auto& [id, entry] : table_.EntriesLocked()) out.push_back(entry.record);
  std::sort(out.begin(), out.end(),
            [](const ChannelRecord& a, const ChannelRecord& b) { return a.created < b.created; });
  return out;
}

}  // namespace rdmad
