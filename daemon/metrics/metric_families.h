// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The daemon's Prometheus series (docs/operations.md, "Metrics"), built at
// scrape time from the daemon's own snapshots: nothing is counted twice
// and nothing on the data path waits for a scrape. Label values are
// bounded: peers (configured or cluster members), devices, ports, states,
// transports; never a channel id or a pid.
//
// Thread safety: pure functions over values; ReadProcessStats reads /proc.

#ifndef RDMAD_DAEMON_METRICS_METRIC_FAMILIES_H_
#define RDMAD_DAEMON_METRICS_METRIC_FAMILIES_H_

#include <prometheus/metric_family.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "daemon/broker/channel_record.h"
#include "daemon/broker/handshake_stats.h"
#include "daemon/broker/traffic_ledger.h"
#include "daemon/discovery/inventory.h"
#include "daemon/lifecycle/unix_listener.h"
#include "daemon/peers/peer_session.h"
#include "daemon/pool/pool_registry.h"
#include "rdmad/status.h"

namespace rdmad {

using Families = std::vector<prometheus::MetricFamily>;

// rdmad_peer_sessions{state} (every state, 0 included), rdmad_peer_up{peer}
// and rdmad_peer_rtt_seconds{peer} (peers with a measured round trip).
void AddPeerFamilies(const std::vector<PeerSnapshot>& peers, Families* out);

// rdmad_channels{state,transport,peer} and rdmad_channel_rails{device,
// peer_device,up} over the broker's records, live and recently ended.
void AddChannelFamilies(const std::vector<ChannelRecord>& channels, Families* out);

// rdmad_connect_duration_seconds (histogram: the initiator's Connects, the
// peer daemon and the listener's accept included) and
// rdmad_handshake_failures_total{side,reason}.
void AddHandshakeFamilies(const HandshakeCounts& counts, Families* out);

// What the applications' channels moved (traffic_families.cc):
// rdmad_channel_bytes_total and rdmad_channel_operations_total{peer,
// service,op} (op: send, recv, write, read), rdmad_transfer_duration_seconds
// {peer,service} and rdmad_channel_open_duration_seconds{peer,service,
// source} (source: cold, pool).
void AddTrafficFamilies(const TrafficView& view, Families* out);

// The daemon's local side (host_families.cc): rdmad_quota_refusals_total
// {quota} (the config key), rdmad_local_connections and rdmad_local_clients,
// and per peer and service rdmad_pool_target_channels,
// rdmad_pool_warm_channels and rdmad_pool_in_use_channels (summed over the
// following clients).
void AddQuotaFamilies(const std::map<std::string, uint64_t, std::less<>>& refusals, Families* out);
void AddLocalClientFamilies(const LocalClientCount& clients, Families* out);
void AddPoolFamilies(const std::vector<PoolRow>& rows, Families* out);

// A port's hardware counters by name (sysfs counters/ and hw_counters/).
using PortCounterReader =
    std::function<StatusOr<std::map<std::string, uint64_t>>(const std::string& device, int port)>;

// rdmad_port_active{device,port,link_layer}, rdmad_port_rate_gbps and
// rdmad_port_hw_counter_total{device,port,counter} for every port of the
// inventory (counters a port does not have are left out).
void AddPortFamilies(const Inventory& inventory, const PortCounterReader& counters, Families* out);

// The process's own figures, under the names every Prometheus client uses.
struct ProcessStats {
  double cpu_seconds = 0;
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double open_fds = 0;
  double max_fds = 0;
  double start_time_seconds = 0;  // since the epoch
};
StatusOr<ProcessStats> ReadProcessStats();
void AddProcessFamilies(const ProcessStats& stats, Families* out);

// rdmad_build_info{version} 1.
void AddBuildInfo(const std::string& version, Families* out);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_METRICS_METRIC_FAMILIES_H_
