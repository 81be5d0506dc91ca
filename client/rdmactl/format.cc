// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The table helper and the human output of status, events and counters.
// Devices and GIDs are in format_devices.cc, the path in format_path.cc.

#include "client/rdmactl/format.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace rdmactl {

Table::Table(std::vector<std::string> header) : header_(std::move(header)) {}

void Table::AddRow(std::vector<std::string> cells) { rows_.push_back({std::move(cells), {}}); }

void Table::AddDetail(std::string line) {
  if (rows_.empty()) rows_.push_back({});
  rows_.back().details.push_back(std::move(line));
}

std::string Table::RenderCells(const std::vector<std::string>& cells,
                               const std::vector<size_t>& widths) const {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) line += "  ";
    line += cells[i];
    if (i + 1 < cells.size()) line.append(widths[i] - cells[i].size(), ' ');
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

std::string Table::Render() const {
  std::vector<size_t> widths(header_.size());
  auto widen = [&widths](const std::vector<std::string>& cells) {
    if (widths.size() < cells.size()) widths.resize(cells.size());
    for (size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], cells[i].size());
  };
  widen(header_);
  for (const Row& row : rows_) widen(row.cells);
  std::string text = header_.empty() ? "" : RenderCells(header_, widths);
  for (const Row& row : rows_) {
    if (!row.cells.empty()) text += RenderCells(row.cells, widths);
    for (const std::string& detail : row.details) text += detail + "\n";
  }
  return text;
}

std::string Dash(const std::string& text) { return text.empty() ? "-" : text; }

std::string Indent(const std::string& text, const std::string& prefix) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    out += prefix + text.substr(start, end - start);
    start = end;
  }
  return out;
}

std::string FormatUptime(double seconds) {
  auto s = uint64_t(seconds);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%" PRIu64 "d %02" PRIu64 ":%02" PRIu64 ":%02" PRIu64, s / 86400,
                s / 3600 % 24, s / 60 % 60, s % 60);
  return buf;
}

std::string DeviceTransports(const rdmad::Device& device) {
  std::vector<std::string> seen;
  for (const rdmad::Port& port : device.ports) {
    if (std::find(seen.begin(), seen.end(), port.transport) == seen.end()) {
      seen.push_back(port.transport);
    }
  }
  std::string text;
  for (const std::string& t : seen) text += (text.empty() ? "" : ", ") + Dash(t);
  return Dash(text);
}

uint32_t ActivePorts(const rdmad::Device& device) {
  return uint32_t(std::count_if(device.ports.begin(), device.ports.end(),
                                [](const rdmad::Port& p) { return p.state == "ACTIVE"; }));
}

std::string FormatCounters(const rdmad::PortCounters& counters) {
  if (counters.empty()) return "no counters\n";
  Table table({"NAME", "VALUE"});
  for (const auto& [name, value] : counters) table.AddRow({name, std::to_string(value)});
  return table.Render();
}

std::string FormatStatus(const rdmad::DaemonStatus& s, const std::vector<rdmad::Device>& devices) {
  char head[1024];
  std::snprintf(head, sizeof(head),
                "rdmad %s (pid %d), up %s\n"
                "  socket:  %s\n"
                "  config:  %s (generation %" PRIu64
                ")\n"
                "  devices: %u (%u ports, %u active)\n",
                s.version.c_str(), s.pid, FormatUptime(s.uptime_seconds).c_str(),
                s.socket_path.c_str(), s.config_file.c_str(), s.config_generation, s.device_count,
                s.port_count, s.active_port_count);
  std::string text = head;
  if (!s.config_reload_error.empty()) {
    std::string first = s.config_reload_error.substr(0, s.config_reload_error.find('\n'));
    text += "  the last reload FAILED (the config above still runs): " + first + "\n";
  }
  Table table({});
  for (const rdmad::Device& d : devices) {
    table.AddRow(
        {d.name, DeviceTransports(d),
         std::to_string(ActivePorts(d)) + "/" + std::to_string(d.ports.size()) + " ports active"});
  }
  text +=
      devices.empty() ? std::string("  ") + kNoDevicesLine + "\n" : Indent(table.Render(), "    ");
  char tail[256];
  std::snprintf(tail, sizeof(tail), "  peers:   %u   services: %u   channels: %u\n", s.peer_count,
                s.service_count, s.channel_count);
  text += tail;
  if (s.cluster == "reachable") {
    text +=
        "  cluster: etcd reachable, " + std::to_string(s.cluster_members) + " other member(s)\n";
  } else if (!s.cluster.empty()) {
    text += "  cluster: etcd UNREACHABLE (" + s.cluster_error + "); " +
            std::to_string(s.cluster_members) + " member(s) last seen\n";
  }
  return text;
}

std::string FormatEvent(const rdmad::Event& event) {
  std::string subject = event.device;
  if (!subject.empty() && event.port != 0) subject += " port " + std::to_string(event.port);
  std::string message = event.message;
  // The daemon's messages often start with the same "mlx5_0 port 1: ".
  if (!subject.empty() && message.rfind(subject + ": ", 0) == 0) {
    message.erase(0, subject.size() + 2);
  }
  std::string text =
      "#" + std::to_string(event.sequence) + " " + std::string(rdmad::EventKindName(event.kind));
  if (!subject.empty()) text += " " + subject;
  return text + ": " + message + "\n";
}

}  // namespace rdmactl
