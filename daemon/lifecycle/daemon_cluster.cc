// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The daemon's part in cluster membership (docs/cluster.md): the record it
// registers in etcd (its name, peer listener, ports and services, put
// again when they change), and the other members as peer sessions.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "daemon/lifecycle/daemon.h"
#include "daemon/peers/peer_protocol.h"

namespace rdmad {
namespace {

// "HOST:PORT", IPv6 in brackets.
std::string HostPort(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

MemberRecord Daemon::SelfRecord() const {
  std::shared_ptr<const Config> cfg = config();
  MemberRecord r;
  r.name = NodeName(cfg->daemon.node_name);
  r.peer_address = HostPort(cfg->daemon.peer_address, cfg->daemon.peer_port);
  r.version = RDMAD_VERSION;
  r.protocol = LocalProtocolVersion().major;
  for (const DeviceInfo& d : inventory()->devices) {
    for (const PortInfo& p : d.ports) {
      r.ports.push_back({d.name, uint32_t(p.port), std::string(TransportName(p.transport)),
                         p.state_name, uint32_t(std::max(p.active_mtu, 0))});
    }
  }
  if (Broker* broker = path_broker_.load(); broker != nullptr) {
    r.services = broker->services().ServiceNames();
  }
  return r;
}

void Daemon::OnMembers(const std::vector<MemberRecord>& members) {
  std::vector<PeerConfig> peers;
  for (const MemberRecord& m : members) peers.push_back({m.name, m.peer_address});
  peers_.SetDiscoveredPeers(peers);
}

Status Daemon::StartCluster(const DaemonEdge& edge) {
  const Config::Cluster& c = config()->cluster;
  if (c.endpoints.empty()) return Status::Ok();
  if (edge.cluster == nullptr) {
    spdlog::warn("cluster: cluster.endpoints is set but this build has no etcd client");
    return Status::Ok();
  }
  StoreOptions store_options;
  store_options.endpoints = c.endpoints;
  store_options.tls_ca = c.tls_ca;
  store_options.tls_cert = c.tls_cert;
  store_options.tls_key = c.tls_key;
  auto store = edge.cluster->Make(store_options);
  if (!store.ok()) return store.status();
  ClusterOptions options;
  options.prefix = c.prefix;
  options.ttl = std::chrono::seconds(c.lease_ttl_s);
  options.endpoints = fmt::format("{}", fmt::join(c.endpoints, ", "));
  cluster_ = std::make_unique<ClusterMembership>(std::move(store).value(), options,
                                                 static_cast<MembersObserver*>(this));
  cluster_->Start(SelfRecord());
  running_cluster_ = cluster_.get();
  return Status::Ok();
}

void Daemon::UpdateClusterRecord() {
  if (ClusterMembership* cluster = running_cluster_.load(); cluster != nullptr) {
    cluster->Update(SelfRecord());
  }
}

StatusOr<ClusterView> Daemon::ClusterMembers() const {
  ClusterMembership* cluster = running_cluster_.load();
  if (cluster == nullptr) {
    return Status::FailedPrecondition("cluster membership is off (cluster.endpoints is empty)");
  }
  ClusterView view;
  view.health = cluster->health();
  view.self = cluster->self();
  view.members = cluster->Members();
  return view;
}

}  // namespace rdmad
