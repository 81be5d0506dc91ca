// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/convert.h"

#include <algorithm>
#include <cstdint>

namespace rdmad::internal {
namespace {

Gid FromProto(const v1::Gid& g) { return Gid{g.index(), g.gid(), g.type(), g.netdev(), g.ip()}; }

Port FromProto(const v1::Port& p) {
  Port out;
  out.port = p.port();
  out.state = p.state();
  out.state_code = p.state_code();
  out.phys_state = p.phys_state();
  out.link_layer = p.link_layer();
  out.transport = p.transport();
  out.rate_gbps = p.rate_gbps();
  out.rate = p.rate();
  out.max_mtu = p.max_mtu();
  out.active_mtu = p.active_mtu();
  out.lid = p.lid();
  out.sm_lid = p.sm_lid();
  out.netdev = p.netdev();
  out.netdev_mtu = p.netdev_mtu();
  for (const auto& g : p.gids()) out.gids.push_back(FromProto(g));
  return out;
}

QpAttributes FromProto(const v1::QpAttributes& q) {
  return QpAttributes{q.type(),          q.timeout(),          q.retry_cnt(),
                      q.rnr_retry(),     q.min_rnr_timer(),    q.traffic_class(),
                      q.service_level(), q.hop_limit(),        q.max_inline(),
                      q.send_depth(),    q.recv_depth(),       q.qps_per_channel(),
                      q.spin_us(),       q.relaxed_ordering(), q.slot_size()};
}

}  // namespace

DaemonStatus FromProto(const v1::GetStatusResponse& r) {
  DaemonStatus s;
  s.version = r.version();
  s.pid = r.pid();
  s.uptime_seconds = r.uptime_seconds();
  s.config_file = r.config_file();
  s.config_generation = r.config_generation();
  s.socket_path = r.socket_path();
  s.device_count = r.device_count();
  s.port_count = r.port_count();
  s.active_port_count = r.active_port_count();
  s.peer_count = r.peer_count();
  s.service_count = r.service_count();
  s.channel_count = r.channel_count();
  s.connections_accepted = r.connections_accepted();
  s.event_subscribers = r.event_subscribers();
  s.cluster = r.cluster();
  s.cluster_error = r.cluster_error();
  s.cluster_members = r.cluster_members();
  return s;
}

Event FromProto(const v1::Event& e) {
  Event out;
  out.sequence = e.sequence();
  out.unix_time_ms = e.unix_time_ms();
  bool known = e.kind() >= v1::CONFIG_RELOADED && e.kind() <= v1::GID_REMOVED;
  out.kind = known ? static_cast<EventKind>(e.kind()) : EventKind::kUnspecified;
  out.message = e.message();
  out.device = e.device();
  out.port = e.port();
  return out;
}

Device FromProto(const v1::Device& d) {
  Device out;
  out.name = d.name();
  out.node_guid = d.node_guid();
  out.vendor_id = d.vendor_id();
  out.vendor_part_id = d.vendor_part_id();
  out.vendor = d.vendor();
  out.driver = d.driver();
  out.fw_ver = d.fw_ver();
  out.hw_rev = d.hw_rev();
  out.node_type = d.node_type();
  out.numa_node = d.numa_node();
  out.pci_address = d.pci_address();
  out.parent_netdev = d.parent_netdev();
  out.max_qp = d.max_qp();
  out.max_mr = d.max_mr();
  out.max_cq = d.max_cq();
  out.relaxed_ordering = d.relaxed_ordering();
  out.dmabuf = d.dmabuf();
  for (const auto& p : d.ports()) out.ports.push_back(FromProto(p));
  return out;
}

Path FromProto(const v1::Path& p) {
  Path out;
  out.device = p.device();
  out.port = p.port();
  out.transport = p.transport();
  out.gid_index = p.gid_index();
  out.gid = p.gid();
  out.gid_type = p.gid_type();
  out.source_ip = p.source_ip();
  out.netdev = p.netdev();
  out.lid = p.lid();
  out.mtu = p.mtu();
  out.local_active_mtu = p.local_active_mtu();
  out.peer_active_mtu = p.peer_active_mtu();
  out.mtu_cap = p.mtu_cap();
  out.qp = FromProto(p.qp());
  out.reasons.assign(p.reasons().begin(), p.reasons().end());
  return out;
}

PeerInfo FromProto(const v1::Peer& p) {
  PeerInfo out;
  out.name = p.name();
  out.address = p.address();
  int state = int(p.state());
  out.state = state >= 1 && state <= 6 ? static_cast<PeerState>(state) : PeerState::kUnspecified;
  out.rtt_ms = p.rtt_ms();
  out.last_error = p.last_error();
  out.remote_host = p.remote_host();
  out.remote_version = p.remote_version();
  out.remote_protocol = p.remote_protocol();
  out.remote_transports.assign(p.remote_transports().begin(), p.remote_transports().end());
  out.configured = p.configured();
  out.origin = p.origin();
  out.state_seconds = p.state_seconds();
  out.channels = int(std::min<uint32_t>(p.channels(), INT32_MAX));
  out.circuit_open_until_unix_ms = p.circuit_open_until_unix_ms();
  out.failures = int(std::min<uint32_t>(p.failures(), INT32_MAX));
  return out;
}

ClusterView FromProto(const v1::ListMembersResponse& r) {
  ClusterView view;
  view.endpoints = r.endpoints();
  view.reachable = r.reachable();
  view.last_error = r.last_error();
  view.unreachable_seconds = r.unreachable_seconds();
  view.revision = r.revision();
  view.registered = r.registered();
  for (const v1::Member& m : r.members()) {
    ClusterMember member{m.name(), m.peer_address(), m.version(), m.protocol(), {}, {}, m.self()};
    for (const v1::MemberPort& p : m.ports()) {
      member.ports.push_back({p.device(), p.port(), p.transport(), p.state(), p.active_mtu()});
    }
    member.services.assign(m.services().begin(), m.services().end());
    view.members.push_back(std::move(member));
  }
  return view;
}

}  // namespace rdmad::internal
