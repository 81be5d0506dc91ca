// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/metrics/metric_families.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>
#include <tuple>

#include "daemon/metrics/family_builder.h"

namespace rdmad {
namespace {

using metrics_internal::Add;
using metrics_internal::Family;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

std::string TransportLabel(EndpointKind kind) {
  switch (kind) {
    case EndpointKind::kRdma: return "rdma";
    case EndpointKind::kTcp: return "tcp";
    case EndpointKind::kUnknown: break;
  }
  return "unknown";  // not yet known (planned, opening)
}

constexpr PeerSessionState kPeerStates[] = {
    PeerSessionState::kConnecting,      PeerSessionState::kUp,          PeerSessionState::kDown,
    PeerSessionState::kVersionMismatch, PeerSessionState::kCircuitOpen, PeerSessionState::kIdle};

}  // namespace

void AddPeerFamilies(const std::vector<PeerSnapshot>& peers, Families* out) {
  MetricFamily sessions =
      Family("rdmad_peer_sessions", "Peer sessions by state.", MetricType::Gauge);
  for (PeerSessionState state : kPeerStates) {
    double n = 0;
    for (const PeerSnapshot& p : peers) n += p.state == state ? 1 : 0;
    Add(sessions, {{"state", std::string(PeerSessionStateName(state))}}, n);
  }
  MetricFamily up =
      Family("rdmad_peer_up", "1 while the session to the peer is up.", MetricType::Gauge);
  MetricFamily rtt =
      Family("rdmad_peer_rtt_seconds", "The last Hello round trip to the peer.", MetricType::Gauge);
  for (const PeerSnapshot& p : peers) {
    Add(up, {{"peer", p.name}}, p.state == PeerSessionState::kUp ? 1 : 0);
    if (p.rtt_ms > 0) Add(rtt, {{"peer", p.name}}, p.rtt_ms / 1000.0);
  }
  out->push_back(std::move(sessions));
  out->push_back(std::move(up));
  out->push_back(std::move(rtt));
}

void AddChannelFamilies(const std::vector<ChannelRecord>& channels, Families* out) {
  std::map<std::tuple<std::string, std::string, std::string>, double> by_state;
  std::map<std::tuple<std::string, std::string, std::string>, double> rails;
  for (const ChannelRecord& c : channels) {
    by_state[{std::string(ChannelStateName(c.state)), TransportLabel(c.transport), c.peer}] += 1;
    if (ChannelEnded(c.state)) continue;
    for (const ChannelRailRecord& r : c.rails) {
      rails[{r.device, r.peer_device, r.up ? "1" : "0"}] += 1;
    }
  }
  MetricFamily states = Family("rdmad_channels",
                               "Channels the broker holds, by state, transport and peer (ended "
                               "ones while they are listed).",
                               MetricType::Gauge);
  for (const auto& [key, n] : by_state) {
    const auto& [state, transport, peer] = key;
    Add(states, {{"peer", peer}, {"state", state}, {"transport", transport}}, n);
  }
  MetricFamily rail = Family("rdmad_channel_rails",
                             "Rails of the live RDMA channels, by local and peer device, and "
                             "whether they are up.",
                             MetricType::Gauge);
  for (const auto& [key, n] : rails) {
    const auto& [device, peer_device, is_up] = key;
    Add(rail, {{"device", device}, {"peer_device", peer_device}, {"up", is_up}}, n);
  }
  out->push_back(std::move(states));
  out->push_back(std::move(rail));
}

void AddHandshakeFamilies(const HandshakeCounts& counts, Families* out) {
  MetricFamily connects = Family("rdmad_connect_duration_seconds",
                                 "How long this daemon's Connects took: the relay to the peer "
                                 "daemon, its listener's accept, and back.",
                                 MetricType::Histogram);
  ClientMetric m;
  for (size_t i = 0; i < HandshakeCounts::kBounds.size(); ++i) {
    m.histogram.bucket.push_back({counts.cumulative[i], HandshakeCounts::kBounds[i]});
  }
  m.histogram.bucket.push_back({counts.count, std::numeric_limits<double>::infinity()});
  m.histogram.sample_count = counts.count;
  m.histogram.sample_sum = counts.sum_seconds;
  connects.metric.push_back(std::move(m));
  MetricFamily failures = Family("rdmad_handshake_failures_total",
                                 "Channel handshakes that failed, by this daemon's side and the "
                                 "status code.",
                                 MetricType::Counter);
  for (const auto& [key, n] : counts.failures) {
    Add(failures, {{"reason", key.second}, {"side", key.first}}, double(n));
  }
  out->push_back(std::move(connects));
  out->push_back(std::move(failures));
}

void AddPortFamilies(const Inventory& inventory, const PortCounterReader& counters, Families* out) {
  MetricFamily active =
      Family("rdmad_port_active", "1 while the port is ACTIVE.", MetricType::Gauge);
  MetricFamily rate =
      Family("rdmad_port_rate_gbps", "The port's rate (speed x width).", MetricType::Gauge);
  MetricFamily hw = Family("rdmad_port_hw_counter_total",
                           "A port's counter as the device keeps it (sysfs counters/ and "
                           "hw_counters/; port_xmit_data and port_rcv_data are in 4-byte words).",
                           MetricType::Counter);
  for (const DeviceInfo& d : inventory.devices) {
    for (const PortInfo& p : d.ports) {
      std::string port = std::to_string(p.port);
      Add(active,
          {{"device", d.name},
           {"link_layer", std::string(LinkLayerName(p.link_layer))},
           {"port", port}},
          p.state == 4 ? 1 : 0);
      Add(rate, {{"device", d.name}, {"port", port}}, p.rate_gbps);
      if (!counters) continue;
      auto values = counters(d.name, p.port);
      if (!values.ok()) continue;
      for (const auto& [name, value] : *values) {
        Add(hw, {{"counter", name}, {"device", d.name}, {"port", port}}, double(value));
      }
    }
  }
  out->push_back(std::move(active));
  out->push_back(std::move(rate));
  out->push_back(std::move(hw));
}

StatusOr<ProcessStats> ReadProcessStats() {
  ProcessStats s;
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (!std::getline(stat, line)) return Status::Unavailable("cannot read /proc/self/stat");
  // Fields after the command (which may hold spaces): from the last ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return Status::Internal("malformed /proc/self/stat");
  std::istringstream fields(line.substr(close + 2));
  std::vector<std::string> f;
  for (std::string v; fields >> v;) f.push_back(v);
  // f[0] is field 3 (state): utime 14, stime 15, starttime 22, vsize 23, rss 24.
  if (f.size() < 22) return Status::Internal("short /proc/self/stat");
  double ticks = double(sysconf(_SC_CLK_TCK));
  double page = double(sysconf(_SC_PAGESIZE));
  s.cpu_seconds = (std::stod(f[11]) + std::stod(f[12])) / ticks;
  s.virtual_bytes = std::stod(f[20]);
  s.resident_bytes = std::stod(f[21]) * page;
  std::ifstream proc_stat("/proc/stat");
  for (std::string l; std::getline(proc_stat, l);) {
    if (l.rfind("btime ", 0) == 0) {
      s.start_time_seconds = std::stod(l.substr(6)) + std::stod(f[19]) / ticks;
      break;
    }
  }
  if (DIR* dir = opendir("/proc/self/fd")) {
    int n = 0;
    while (dirent* e = readdir(dir)) n += e->d_name[0] != '.' ? 1 : 0;
    closedir(dir);
    s.open_fds = n - 1;  // not the directory's own
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) s.max_fds = double(limit.rlim_cur);
  return s;
}

void AddProcessFamilies(const ProcessStats& stats, Families* out) {
  auto one = [&](const char* name, const char* help, MetricType type, double value) {
    MetricFamily f = Family(name, help, type);
    Add(f, {}, value);
    out->push_back(std::move(f));
  };
  one("process_cpu_seconds_total", "User and system CPU time spent in seconds.",
      MetricType::Counter, stats.cpu_seconds);
  one("process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
      stats.resident_bytes);
  one("process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge,
      stats.virtual_bytes);
  one("process_open_fds", "Number of open file descriptors.", MetricType::Gauge, stats.open_fds);
  one("process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge,
      stats.max_fds);
  one("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
      MetricType::Gauge, stats.start_time_seconds);
}

void AddBuildInfo(const std::string& version, Families* out) {
  MetricFamily f = Family("rdmad_build_info", "The running rdmad's version.", MetricType::Gauge);
  Add(f, {{"version", version}}, 1);
  out->push_back(std::move(f));
}

}  // namespace rdmad
