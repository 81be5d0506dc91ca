// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The output of `rdmactl connect` and `rdmactl ping`: how a channel was set
// up (rdmad::ChannelInfo), ping's reply lines and summary, and their JSON.
// JSON keys are ChannelInfo's member names in declaration order (json.h's
// rule); "id" is hex text as in `rdmactl channels`, "transport" the name.
//
// Thread safety: pure functions over values.

#ifndef RDMAD_CLIENT_RDMACTL_FORMAT_CONNECT_H_
#define RDMAD_CLIENT_RDMACTL_FORMAT_CONNECT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "client/rdmactl/json.h"
#include "client/rdmactl/latency_stats.h"
#include "rdmad/channel.h"

namespace rdmactl {

// `rdmactl connect`: "connected to PEER (rdmad.echo): RDMA, channel 0x1f",
// then why, both sides' device, port, GID (index, address, type) and QPN
// (RDMA) or TCP addresses (TCP), the MTU (chosen, local and peer active),
// queue depths and slot size, the handshake time and the first round trip
// of size bytes.
std::string FormatConnect(const rdmad::ChannelInfo& info, double round_trip_us, size_t size);

Json ChannelInfoJson(const rdmad::ChannelInfo& info);

// {"channel": ChannelInfoJson, "size", "round_trip_us"}
Json ConnectJson(const rdmad::ChannelInfo& info, double round_trip_us, size_t size);

// What a ping run counted. received: verified replies; lost = sent -
// received (no reply in time, a corrupt reply, or the channel failed).
struct PingTally {
  uint64_t sent = 0;
  uint64_t received = 0;
  uint64_t corrupt = 0;
  double elapsed_ms = 0;
  uint64_t lost() const { return sent - received; }
};

// "PING PEER (rdmad.echo): 64 bytes over TCP (why)".
std::string FormatPingHeader(const rdmad::ChannelInfo& info, size_t size);

// "64 bytes from PEER (RDMA): seq=1 time=0.123 ms".
std::string FormatPingReply(const rdmad::ChannelInfo& info, size_t size, uint64_t seq, double us);

// "--- PEER echo statistics ---", "5 sent, 5 received, 0 lost (0%), time
// 812 ms", and "rtt min/avg/p50/p99/max = 8.1/9.0/8.9/12.0/14.3 µs" (µs
// when the maximum is below 1 ms, else ms) when anything was received.
std::string FormatPingSummary(const std::string& peer, const PingTally& tally,
                              const LatencySummary& rtt);

// {"min", "avg", "p50", "p90", "p99", "p999", "max", "stddev"}, µs.
Json LatencyJson(const LatencySummary& rtt);

// {"channel", "size", "count", "interval_ms", "sent", "received", "lost",
//  "corrupt", "elapsed_ms", "rtt_us": LatencyJson, "samples_us": [...]}.
// count is what was asked for.
Json PingJson(const rdmad::ChannelInfo& info, size_t size, uint64_t count, uint64_t interval_ms,
              const PingTally& tally, const LatencyStats& samples);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_FORMAT_CONNECT_H_
