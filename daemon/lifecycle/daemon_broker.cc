// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The daemon's channel broker wiring: paths from the running config and
// inventory, peers from the peer hub, and the hub's hooks into the broker;
// the channel and local-client limits from the config.

#include <arpa/inet.h>
#include <grp.h>
#include <unistd.h>

#include <vector>

#include "daemon/lifecycle/daemon.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

BrokerOptions Daemon::MakeBrokerOptions() {
  BrokerOptions o;
  o.host_name = NodeName(config()->daemon.node_name);
  o.instance_id = peers_.instance_id();
  o.peer_grace = std::chrono::seconds(config()->daemon.peer_channel_grace_s);
  o.network = this;
  o.lease_sealer = lease_sealer_;
  o.refusals = &refusals_;
  return o;
}

// The broker and its hooks: OpenChannel and CloseChannel from peers, and
// the loss of a peer daemon, seen from either direction: this daemon's
// session to it going down, or its session to this daemon ending.
void Daemon::StartBroker() {
  broker_ = std::make_unique<Broker>(MakeBrokerOptions());
  Broker* broker = broker_.get();
  // Before any client can register: services are in the member record.
  broker->services().SetObserver(this);
  PeerInbound& inbound = peers_.inbound();
  inbound.SetChannels(broker);
  peers_.SetSessionUser(broker);
  broker_->StartSweeper();
  path_broker_.store(broker);
  ApplyChannelSettings(*config());
}

void Daemon::ApplyChannelSettings(const Config& config) {
  broker_->SetLimits(size_t(config.limits.max_channels),
                     size_t(config.limits.max_channels_per_peer));
  pool_.SetConfig(config.pool, config.limits.idle_timeout_s);
  const Config::Limits& l = config.limits;
  broker_->SetOwnerLimits({size_t(l.max_channels_per_client), size_t(l.max_channels_per_uid),
                           size_t(l.max_plans_per_client), size_t(l.max_plans_per_uid)});
  broker_->services().SetLimits(size_t(l.max_listeners_per_client),
                                size_t(l.max_listeners_per_uid));
  spdlog::info(
      "channels: at most {} in total and {} per peer; {} [[pool]] target(s); channels "
      "beyond a pool's target close after {} s idle",
      config.limits.max_channels, config.limits.max_channels_per_peer, config.pool.size(),
      config.limits.idle_timeout_s);
  int64_t admin_gid = -1;
  const std::string& admin = config.daemon.admin_group;
  if (!admin.empty()) {
    std::vector<char> buf(16384);
    group entry{};
    group* found = nullptr;
    if (getgrnam_r(admin.c_str(), &entry, buf.data(), buf.size(), &found) == 0 && found) {
      admin_gid = found->gr_gid;
    } else {
      spdlog::warn("daemon.admin_group = {}: no such group; only root is an admin", admin);
    }
  }
  admin_gid_ = admin_gid;
  spdlog::info("local API: admins (see and close every client's channels): root{}",
               admin_gid >= 0 ? fmt::format(" and group {} (gid {})", admin, admin_gid) : "");
  spdlog::info(
      "local API: at most {} Connect handshakes in flight per process and {} in "
      "total, {} open streams per process and {} per uid",
      l.max_connects_per_client, l.max_connects, l.max_streams_per_client, l.max_streams_per_uid);
  spdlog::info(
      "local API: per process and per uid at most {} and {} channels, {} and {} of them "
      "planned, {} and {} listeners",
      l.max_channels_per_client, l.max_channels_per_uid, l.max_plans_per_client,
      l.max_plans_per_uid, l.max_listeners_per_client, l.max_listeners_per_uid);
}

std::optional<gid_t> Daemon::admin_group() const {
  int64_t gid = admin_gid_.load();
  return gid < 0 ? std::nullopt : std::optional<gid_t>(gid_t(gid));
}

ClientLimits Daemon::client_limits() const {
  const Config::Limits& limits = config()->limits;
  return {size_t(limits.max_connects_per_client), size_t(limits.max_connects),
          size_t(limits.max_streams_per_client), size_t(limits.max_streams_per_uid)};
}

Status Daemon::SendEvent(const std::string& instance_id, const PeerEvent& event) {
  return peers_.inbound().Send(instance_id, event);
}

// A link through this daemon's up session to the daemon instance_id.
StatusOr<std::shared_ptr<PeerLink>> Daemon::LinkToInstance(const std::string& instance_id) {
  for (const PeerSnapshot& p : peers_.List()) {
    if (p.state != PeerSessionState::kUp || !p.remote || p.remote->instance_id != instance_id)
      continue;
    StatusOr<std::shared_ptr<PeerSession>> session = peers_.Peer(p.name);
    if (session.ok()) return session.value()->link();
  }
  return Status::NotFound("no session up to rdmad instance " + instance_id);
}

// A name that is neither a [[peers]] name nor an IP literal (with or
// without a port) is NOT_FOUND, checked before a session is opened on
// demand; a peer whose session is not up gives UNAVAILABLE with the
// session's last error (at once, from FindPeer, while its circuit is open).
StatusOr<BrokerPeer> Daemon::FindPeer(const std::string& name_or_address,
                                      std::optional<uid_t> opener) {
  bool known = IsIpLiteral(HostOfAddress(name_or_address)) || peers_.Knows(name_or_address);
  if (!known) {
    return Status::NotFound("unknown peer " + name_or_address +
                            ": not a [[peers]] name nor an IP address");
  }
  StatusOr<std::shared_ptr<PeerSession>> session = peers_.Peer(name_or_address, opener);
  if (!session.ok()) {
    if (session.status().code() != StatusCode::kInvalidArgument) return session.status();
    return Status::NotFound("unknown peer " + name_or_address + ": " + session.status().message());
  }
  BrokerPeer peer;
  peer.name = session.value()->name();
  peer.address = session.value()->address();
  PeerSnapshot snapshot = session.value()->snapshot();
  if (snapshot.remote) peer.instance_id = snapshot.remote->instance_id;
  StatusOr<std::shared_ptr<PeerLink>> link = session.value()->link();
  // An open circuit fails PlanChannel and Connect fast (UNAVAILABLE).
  if (link.status().code() == StatusCode::kUnavailable) return link.status();
  if (link.ok()) {
    peer.link = std::move(link).value();
  } else {
    peer.link = Status::Unavailable(link.status().message());
  }
  return peer;
}

// A channel to a peer whose session is dialling waits for that attempt
// (within timeout) rather than failing with the state before it: the first
// channel to a peer (on demand, or a cluster member not used before) finds
// its session on its first attempt, and one to a peer that is back (it
// dialled us, its record returned) or retried after its backoff finds a
// re-dial under way.
StatusOr<BrokerPeer> Daemon::AwaitPeer(const std::string& name_or_address,
                                       std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  StatusOr<BrokerPeer> peer = FindPeer(name_or_address, std::nullopt);
  if (!peer.ok() || peer->link.ok()) return peer;
  StatusOr<std::shared_ptr<PeerSession>> session = peers_.Peer(name_or_address);
  if (!session.ok() || !session.value()->AwaitDial(until)) return peer;
  return FindPeer(name_or_address, std::nullopt);  // up, or why that attempt failed
}

}  // namespace rdmad
