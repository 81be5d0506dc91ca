// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What rdmad reports about its sessions with other hosts' rdmad daemons.
// Plain values returned by rdmad::Client::ListPeers.
//
// Thread safety: values.

#ifndef RDMAD_PEERS_H_
#define RDMAD_PEERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rdmad/export.h"

namespace rdmad {

enum class PeerState {
  kUnspecified = 0,
  kConnecting = 1,       // the first attempt is under way
  kUp = 2,               // Hello answered, session stream open
  kDown = 3,             // not reachable; rdmad retries with backoff
  kVersionMismatch = 4,  // another major protocol version; not used
  kCircuitOpen = 5,      // failed too often; not dialled until circuit_open_until
  kIdle = 6,             // a cluster member without a session: dialled on use
};

// "connecting", "up", "down", "version-mismatch", "circuit-open", "idle"
// ("unspecified").
RDMAD_EXPORT std::string_view PeerStateName(PeerState state);

struct PeerInfo {
  std::string name;     // the [[peers]] name; the address when on demand
  std::string address;  // HOST:PORT as dialled
  PeerState state = PeerState::kUnspecified;
  double rtt_ms = 0;       // last Hello round trip; 0 before the first
  std::string last_error;  // why it is down or mismatched; "" while up
  // What the peer said in its last Hello; "" before the first.
  std::string remote_host;
  std::string remote_version;
  std::string remote_protocol;                 // "1.0"
  std::vector<std::string> remote_transports;  // RDMA transports; empty: TCP only
  bool configured = true;                      // false: discovered or opened on demand
  std::string origin;                          // "configured", "discovered", "on demand"
  double state_seconds = 0;                    // time in the current state
  uint32_t channels = 0;                       // established channels with this peer
  // While kCircuitOpen: when rdmad next tries the peer (Unix ms); else 0.
  int64_t circuit_open_until_unix_ms = 0;
  uint32_t failures = 0;  // failed attempts since it was last up
  // The peer's clock minus this host's (from its last heartbeat, half the
  // round trip allowed for); none before the first.
  std::optional<double> clock_offset_ms;
};

}  // namespace rdmad

#endif  // RDMAD_PEERS_H_
