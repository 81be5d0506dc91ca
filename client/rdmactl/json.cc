// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/json.h"

#include "client/rdmactl/format.h"

namespace rdmactl {
namespace {

Json QpJson(const rdmad::QpAttributes& q) {
  return Json{{"type", q.type},
              {"timeout", q.timeout},
              {"retry_cnt", q.retry_cnt},
              {"rnr_retry", q.rnr_retry},
              {"min_rnr_timer", q.min_rnr_timer},
              {"traffic_class", q.traffic_class},
              {"service_level", q.service_level},
              {"hop_limit", q.hop_limit},
              {"max_inline", q.max_inline},
              {"send_depth", q.send_depth},
              {"recv_depth", q.recv_depth},
              {"qps_per_channel", q.qps_per_channel},
              {"spin_us", q.spin_us},
              {"relaxed_ordering", q.relaxed_ordering},
              {"slot_size", q.slot_size}};
}

Json DeviceSummaryJson(const rdmad::Device& d) {
  return Json{{"name", d.name},
              {"node_type", d.node_type},
              {"transport", DeviceTransports(d)},
              {"ports", d.ports.size()},
              {"active_ports", ActivePorts(d)}};
}

}  // namespace

Json GidJson(const rdmad::Gid& g) {
  return Json{
      {"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"netdev", g.netdev}, {"ip", g.ip}};
}

Json PortJson(const rdmad::Port& p) {
  Json gids = Json::array();
  for (const rdmad::Gid& g : p.gids) gids.push_back(GidJson(g));
  return Json{{"port", p.port},
              {"state", p.state},
              {"state_code", p.state_code},
              {"phys_state", p.phys_state},
              {"link_layer", p.link_layer},
              {"transport", p.transport},
              {"rate_gbps", p.rate_gbps},
              {"rate", p.rate},
              {"max_mtu", p.max_mtu},
              {"active_mtu", p.active_mtu},
              {"lid", p.lid},
              {"sm_lid", p.sm_lid},
              {"netdev", p.netdev},
              {"netdev_mtu", p.netdev_mtu},
              {"gids", std::move(gids)}};
}

Json DeviceJson(const rdmad::Device& d) {
  Json ports = Json::array();
  for (const rdmad::Port& p : d.ports) ports.push_back(PortJson(p));
  return Json{{"name", d.name},
              {"node_guid", d.node_guid},
              {"vendor_id", d.vendor_id},
              {"vendor_part_id", d.vendor_part_id},
              {"vendor", d.vendor},
              {"driver", d.driver},
              {"fw_ver", d.fw_ver},
              {"hw_rev", d.hw_rev},
              {"node_type", d.node_type},
              {"numa_node", d.numa_node},
              {"pci_address", d.pci_address},
              {"parent_netdev", d.parent_netdev},
              {"max_qp", d.max_qp},
              {"max_mr", d.max_mr},
              {"max_cq", d.max_cq},
              {"relaxed_ordering", d.relaxed_ordering},
              {"dmabuf", d.dmabuf},
              {"ports", std::move(ports)}};
}

Json DevicesJson(const std::vector<rdmad::Device>& devices) {
  Json list = Json::array();
  for (const rdmad::Device& d : devices) list.push_back(DeviceJson(d));
  return Json{{"devices", std::move(list)}};
}

Json GidsJson(const std::vector<rdmad::Device>& devices) {
  Json list = Json::array();
  for (const rdmad::Device& d : devices) {
    for (const rdmad::Port& p : d.ports) {
      for (const rdmad::Gid& g : p.gids) {
        Json row{{"device", d.name}, {"port", p.port}};
        row.update(GidJson(g));
        list.push_back(std::move(row));
      }
    }
  }
  return Json{{"gids", std::move(list)}};
}

Json PathJson(const std::string& peer, const rdmad::Path& p) {
  return Json{{"peer", peer},
              {"device", p.device},
              {"port", p.port},
              {"transport", p.transport},
              {"gid_index", p.gid_index},
              {"gid", p.gid},
              {"gid_type", p.gid_type},
              {"source_ip", p.source_ip},
              {"netdev", p.netdev},
              {"lid", p.lid},
              {"mtu", p.mtu},
              {"local_active_mtu", p.local_active_mtu},
              {"peer_active_mtu", p.peer_active_mtu},
              {"mtu_cap", p.mtu_cap},
              {"qp", QpJson(p.qp)},
              {"reasons", p.reasons}};
}

Json TcpFallbackJson(const std::string& peer, const std::string& reason) {
  return Json{{"peer", peer}, {"transport", "TCP"}, {"reason", reason}};
}

Json CountersJson(const std::string& device, uint32_t port, const rdmad::PortCounters& counters) {
  Json values = Json::object();
  for (const auto& [name, value] : counters) values[name] = value;
  return Json{{"device", device}, {"port", port}, {"counters", std::move(values)}};
}

Json StatusJson(const rdmad::DaemonStatus& s, const std::vector<rdmad::Device>& devices) {
  Json list = Json::array();
  for (const rdmad::Device& d : devices) list.push_back(DeviceSummaryJson(d));
  return Json{{"version", s.version},
              {"pid", s.pid},
              {"uptime_seconds", s.uptime_seconds},
              {"config_file", s.config_file},
              {"config_generation", s.config_generation},
              {"socket_path", s.socket_path},
              {"device_count", s.device_count},
              {"ports", s.port_count},
              {"active_ports", s.active_port_count},
              {"peers", s.peer_count},
              {"services", s.service_count},
              {"channels", s.channel_count},
              {"connections_accepted", s.connections_accepted},
              {"event_subscribers", s.event_subscribers},
              {"cluster", s.cluster},
              {"cluster_error", s.cluster_error},
              {"cluster_members", s.cluster_members},
              {"devices", std::move(list)}};
}

Json EventJson(const rdmad::Event& e) {
  return Json{{"sequence", e.sequence},
              {"unix_time_ms", e.unix_time_ms},
              {"kind", rdmad::EventKindName(e.kind)},
              {"message", e.message},
              {"device", e.device},
              {"port", e.port}};
}

std::string DumpJson(const Json& json, int indent) {
  return json.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace rdmactl
