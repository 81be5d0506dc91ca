// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl top's view: two samples of the daemon (its status, peers and
// channel table) a few seconds apart make one frame of rates - per peer,
// per rail and per channel - from the traffic the applications' libraries
// reported (docs/operations.md, "Metrics"). A channel's sent bytes are its
// messages sent and its Writes; received, its messages received and its
// Reads. A rail's rate is what went over it: a channel with one rail (or
// TCP) puts all of its traffic on it; with more, each rail's Write and
// Read bytes, and the messages on the first. A channel new since the
// first sample counts whole; one gone by the second, not at all.
//
// Thread safety: pure functions over values.

#ifndef RDMAD_CLIENT_RDMACTL_TOP_VIEW_H_
#define RDMAD_CLIENT_RDMACTL_TOP_VIEW_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "client/rdmactl/json.h"
#include "rdmad/client.h"

namespace rdmactl {

struct TopSample {
  std::chrono::steady_clock::time_point at;
  rdmad::DaemonStatus status;
  std::vector<rdmad::PeerInfo> peers;
  std::vector<rdmad::ChannelSummary> channels;
};

struct TopRates {
  double tx_bytes = 0, rx_bytes = 0;  // per second
  double messages = 0, operations = 0;
};

struct TopPeerRow {
  std::string peer;
  std::string state;  // as rdmactl peers says it; "-" for a peer only channels name
  double rtt_ms = 0;
  uint32_t channels = 0;  // established
  TopRates rates;
};

struct TopRailRow {
  std::string device, peer_device;  // "TCP" and "" for TCP channels
  uint32_t channels = 0;            // established over it
  uint32_t down = 0;                // of them, with the rail out
  double bytes = 0;                 // per second, both ways
};

struct TopChannelRow {
  uint64_t id = 0;
  std::string peer, service, transport, state;
  TopRates rates;
};

struct TopView {
  double interval_s = 0;
  std::string version;
  double uptime_seconds = 0;
  uint32_t peers_up = 0, peers = 0;
  uint32_t established = 0, rdma = 0, tcp = 0;
  TopRates total;
  std::vector<TopPeerRow> peer_rows;        // configured order, then the rest by name
  std::vector<TopRailRow> rail_rows;        // by device
  std::vector<TopChannelRow> channel_rows;  // busiest first
};

TopView ComputeTopView(const TopSample& before, const TopSample& now);
// The frame as text: a summary line, then the peers, the rails and the
// busiest max_channels channels.
std::string RenderTop(const TopView& view, size_t max_channels);
Json TopJson(const TopView& view);
// "0 B/s", "512 B/s", "1.5 KiB/s", "12.3 MiB/s", "1.1 GiB/s".
std::string FormatRate(double bytes_per_second);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_TOP_VIEW_H_
