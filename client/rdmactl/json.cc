// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/json.h"

#include "client/rdmactl/format.h"

namespace rdmactl {
namespace {

Json DeviceSummaryJson(const rdmad::Device& d) {
  return Json{{"name", d.name},
              {"node_type", d.node_type},
              {"transport", DeviceTransports(d)},
              {"ports", d.ports.size()},
              {"active_ports", ActivePorts(d)}};
}

}  // namespace

Json DevicesJson(const std::vector<rdmad::Device>& devices) {
  Json list = Json::array();
  for (const rdmad::Device& d : devices) list.push_back(RecordJson(d));
  return Json{{"devices", std::move(list)}};
}

Json GidsJson(const std::vector<rdmad::Device>& devices) {
  Json list = Json::array();
  for (const rdmad::Device& d : devices) {
    for (const rdmad::Port& p : d.ports) {
      for (const rdmad::Gid& g : p.gids) {
        Json row{{"device", d.name}, {"port", p.port}};
        row.update(RecordJson(g));
        list.push_back(std::move(row));
      }
    }
  }
  return Json{{"gids", std::move(list)}};
}

Json PathJson(const std::string& peer, const rdmad::Path& p) {
  Json out{{"peer", peer}};
  out.update(RecordJson(p));
  return out;
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
              {"config_loaded_unix_ms", s.config_loaded_unix_ms},
              {"config_reload_error", s.config_reload_error},
              {"devices", std::move(list)}};
}

std::string DumpJson(const Json& json, int indent) {
  return json.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace rdmactl
