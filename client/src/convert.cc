// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/convert.h"

#include <algorithm>
#include <cstdint>

#include "client/src/record_reader.h"

namespace rdmad::internal {

DaemonStatus FromProto(const v1::GetStatusResponse& r) {
  DaemonStatus s;
  ReadRecord(r, &s);
  return s;
}

Event FromProto(const v1::Event& e) {
  Event out;
  out.sequence = e.sequence();
  out.unix_time_ms = e.unix_time_ms();
  bool known = e.kind() >= v1::CONFIG_RELOADED && e.kind() <= v1::GID_REMOVED;
  out.kind = known ? static_cast<EventKind>(e.kind()) : EventKind::kUnspecified;
  out.message = e.message();
  out.device = e.device();
  out.port = e.port();
  return out;
}

Device FromProto(const v1::Device& d) {
  Device out;
  ReadRecord(d, &out);
  return out;
}

Path FromProto(const v1::Path& p) {
  Path out;
  ReadRecord(p, &out);
  return out;
}

PeerInfo FromProto(const v1::Peer& p) {
  PeerInfo out;
  out.name = p.name();
  out.address = p.address();
  int state = int(p.state());
  out.state = state >= 1 && state <= 6 ? static_cast<PeerState>(state) : PeerState::kUnspecified;
  out.rtt_ms = p.rtt_ms();
  out.last_error = p.last_error();
  out.remote_host = p.remote_host();
  out.remote_version = p.remote_version();
  out.remote_protocol = p.remote_protocol();
  out.remote_transports.assign(p.remote_transports().begin(), p.remote_transports().end());
  out.configured = p.configured();
  out.origin = p.origin();
  out.state_seconds = p.state_seconds();
  out.channels = int(std::min<uint32_t>(p.channels(), INT32_MAX));
  out.circuit_open_until_unix_ms = p.circuit_open_until_unix_ms();
  out.failures = int(std::min<uint32_t>(p.failures(), INT32_MAX));
  return out;
}

ClusterView FromProto(const v1::ListMembersResponse& r) {
  ClusterView view;
  ReadRecord(r, &view);
  return view;
}

}  // namespace rdmad::internal
