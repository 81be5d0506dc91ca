// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl's human output: aligned tables and the text of each verb, built
// as strings from the client library's values (so they are testable without
// a daemon). The JSON forms are in json.h.
//
// Thread safety: pure functions over values; Table is a value.

#ifndef RDMAD_CLIENT_RDMACTL_FORMAT_H_
#define RDMAD_CLIENT_RDMACTL_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "rdmad/client.h"
#include "rdmad/devices.h"

namespace rdmactl {

// What rdmactl prints when the daemon has no RDMA devices.
inline constexpr char kNoDevicesLine[] = "no RDMA devices; channels will use TCP";

// text, or "-" when it is empty.
std::string Dash(const std::string& text);

// Every line of text with prefix in front of it.
std::string Indent(const std::string& text, const std::string& prefix);

// Columns separated by two spaces, each as wide as its widest cell (the
// last one is not padded). An empty header prints no header line. A detail
// line belongs to the row before it and is printed as is, outside the
// columns.
class Table {
 public:
  explicit Table(std::vector<std::string> header);
  void AddRow(std::vector<std::string> cells);
  void AddDetail(std::string line);
  std::string Render() const;

 private:
  struct Row {
    std::vector<std::string> cells;
    std::vector<std::string> details;
  };
  std::string RenderCells(const std::vector<std::string>& cells,
                          const std::vector<size_t>& widths) const;
  std::vector<std::string> header_;
  std::vector<Row> rows_;
};

// "2d 03:04:05".
std::string FormatUptime(double seconds);

// The distinct transports of a device's ports, "RoCE v2" or "InfiniBand,
// RoCE v2"; "-" without ports.
std::string DeviceTransports(const rdmad::Device& device);
uint32_t ActivePorts(const rdmad::Device& device);

// One line per port: "port 1: ACTIVE (LinkUp), Ethernet, RoCE v2, ...".
std::string FormatPortLine(const rdmad::Port& port);

// `rdmactl devices`: a row per device, a line per port; kNoDevicesLine when
// there are none.
std::string FormatDevices(const std::vector<rdmad::Device>& devices);

// `rdmactl devices DEV`: every field of one device, its ports and GIDs.
std::string FormatDevice(const rdmad::Device& device);

// `rdmactl gids`: DEV PORT INDEX GID TYPE NETDEV IP.
std::string FormatGids(const std::vector<rdmad::Device>& devices);

// `rdmactl route`: the path's fields, then "why:" and a line per reason.
std::string FormatPath(const std::string& peer, const rdmad::Path& path);

// `rdmactl counters`: NAME VALUE.
std::string FormatCounters(const rdmad::PortCounters& counters);

// `rdmactl status`: the daemon's state and a line per device.
std::string FormatStatus(const rdmad::DaemonStatus& status,
                         const std::vector<rdmad::Device>& devices);

// `rdmactl events`: "#7 port-state-changed mlx5_0 port 1: message", without
// repeating a "mlx5_0 port 1: " the message starts with.
std::string FormatEvent(const rdmad::Event& event);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_FORMAT_H_
