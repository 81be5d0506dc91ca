// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/proto_convert.h"

#include <string>

namespace rdmad {
namespace {

void ToProto(const GidEntry& g, v1::Gid* out) {
  out->set_index(uint32_t(g.index));
  out->set_gid(g.gid);
  out->set_type(std::string(GidTypeName(g.type)));
  out->set_netdev(g.netdev);
  out->set_ip(g.ip);
}

void ToProto(const PortInfo& p, v1::Port* out) {
  out->set_port(uint32_t(p.port));
  out->set_state(p.state_name);
  out->set_state_code(uint32_t(p.state));
  out->set_phys_state(p.phys_state_name);
  out->set_link_layer(std::string(LinkLayerName(p.link_layer)));
  out->set_transport(std::string(TransportName(p.transport)));
  out->set_rate_gbps(p.rate_gbps);
  out->set_rate(p.rate);
  out->set_max_mtu(uint32_t(p.max_mtu));
  out->set_active_mtu(uint32_t(p.active_mtu));
  out->set_lid(p.lid);
  out->set_sm_lid(p.sm_lid);
  out->set_netdev(p.netdev);
  out->set_netdev_mtu(uint32_t(p.netdev_mtu));
  for (const GidEntry& g : p.gids) ToProto(g, out->add_gids());
}

void ToProto(const QpPlan& q, v1::QpAttributes* out) {
  out->set_type(q.type);
  out->set_timeout(uint32_t(q.timeout));
  out->set_retry_cnt(uint32_t(q.retry_cnt));
  out->set_rnr_retry(uint32_t(q.rnr_retry));
  out->set_min_rnr_timer(uint32_t(q.min_rnr_timer));
  out->set_traffic_class(uint32_t(q.traffic_class));
  out->set_service_level(uint32_t(q.service_level));
  out->set_hop_limit(uint32_t(q.hop_limit));
  out->set_max_inline(uint32_t(q.max_inline));
  out->set_send_depth(uint32_t(q.send_depth));
  out->set_recv_depth(uint32_t(q.recv_depth));
  out->set_qps_per_channel(uint32_t(q.qps_per_channel));
  out->set_spin_us(uint32_t(q.spin_us));
  out->set_relaxed_ordering(uint32_t(q.relaxed_ordering));
  out->set_slot_size(uint32_t(q.slot_size));
}

}  // namespace

void ToProto(const DaemonStatus& s, v1::GetStatusResponse* out) {
  out->set_version(s.version);
  out->set_pid(s.pid);
  out->set_uptime_seconds(s.uptime_seconds);
  out->set_config_file(s.config_file);
  out->set_config_generation(s.config_generation);
  out->set_socket_path(s.socket_path);
  out->set_device_count(s.device_count);
  out->set_port_count(s.port_count);
  out->set_active_port_count(s.active_port_count);
  out->set_peer_count(s.peer_count);
  out->set_service_count(s.service_count);
  out->set_channel_count(s.channel_count);
  out->set_connections_accepted(s.connections_accepted);
  out->set_event_subscribers(s.event_subscribers);
  out->set_cluster(s.cluster);
  out->set_cluster_error(s.cluster_error);
  out->set_cluster_members(s.cluster_members);
  out->set_config_loaded_unix_ms(s.config_loaded_unix_ms);
  out->set_config_reload_error(s.config_reload_error);
}

void ToProto(const DeviceInfo& d, v1::Device* out) {
  out->set_name(d.name);
  out->set_node_guid(d.node_guid);
  out->set_vendor_id(d.vendor_id);
  out->set_vendor_part_id(d.vendor_part_id);
  out->set_vendor(d.vendor);
  out->set_driver(d.driver);
  out->set_fw_ver(d.fw_ver);
  out->set_hw_rev(d.hw_rev);
  out->set_node_type(std::string(NodeTypeName(d.node_type)));
  out->set_numa_node(d.numa_node);
  out->set_pci_address(d.pci_address);
  out->set_parent_netdev(d.parent_netdev);
  out->set_max_qp(uint32_t(d.max_qp));
  out->set_max_mr(uint32_t(d.max_mr));
  out->set_max_cq(uint32_t(d.max_cq));
  out->set_relaxed_ordering(d.relaxed_ordering);
  out->set_dmabuf(d.dmabuf);
  for (const PortInfo& p : d.ports) ToProto(p, out->add_ports());
}

void ToProto(const PathDecision& p, v1::Path* out) {
  out->set_device(p.device);
  out->set_port(uint32_t(p.port));
  out->set_transport(std::string(TransportName(p.transport)));
  out->set_gid_index(uint32_t(std::max(p.gid_index, 0)));
  out->set_gid(p.gid);
  out->set_gid_type(p.gid.empty() ? "" : std::string(GidTypeName(p.gid_type)));
  out->set_source_ip(p.source_ip);
  out->set_netdev(p.netdev);
  out->set_lid(p.lid);
  out->set_mtu(uint32_t(p.mtu.mtu));
  out->set_local_active_mtu(uint32_t(p.mtu.local_active));
  out->set_peer_active_mtu(uint32_t(p.mtu.peer_active));
  out->set_mtu_cap(uint32_t(p.mtu.cap));
  ToProto(p.qp, out->mutable_qp());
  for (const std::string& r : p.reasons) out->add_reasons(r);
}

}  // namespace rdmad
