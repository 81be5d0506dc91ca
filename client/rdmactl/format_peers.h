// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// `rdmactl peers`: the human table and the --json form of the daemon's
// peer sessions. JSON keys are rdmad::PeerInfo's member names (json.h's
// rule), plus the state as its name.
//
// Thread safety: pure functions over values.

#ifndef RDMAD_CLIENT_RDMACTL_FORMAT_PEERS_H_
#define RDMAD_CLIENT_RDMACTL_FORMAT_PEERS_H_

#include <string>
#include <vector>

#include "client/rdmactl/json.h"
#include "rdmad/peers.h"

namespace rdmactl {

// What rdmactl prints when the daemon has no peer sessions.
inline constexpr char kNoPeersLine[] = "no peers; add [[peers]] to rdmad.toml";

// NAME ADDRESS STATE RTT CHANNELS REMOTE SINCE LAST-ERROR, one row per
// peer; CHANNELS counts the established ones.
std::string FormatPeers(const std::vector<rdmad::PeerInfo>& peers);

// {"peers": [{"name", "address", "state", "rtt_ms", "last_error",
// "remote_host", "remote_version", "remote_protocol", "remote_transports",
// "configured", "state_seconds", "channels", "circuit_open_until_unix_ms",
// "failures"}...]}
Json PeersJson(const std::vector<rdmad::PeerInfo>& peers);

// The state's name; "circuit-open until 12:00:30Z" (UTC) while open.
std::string FormatPeerState(const rdmad::PeerInfo& p);

// "4s", "3m07s", "2h05m", "3d 04h".
std::string FormatAge(double seconds);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_FORMAT_PEERS_H_
