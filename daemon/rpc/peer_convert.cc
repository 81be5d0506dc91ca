// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/peer_convert.h"

#include <algorithm>
#include <chrono>
#include <climits>

namespace rdmad {
namespace {

int Clamp(uint32_t value) { return int(std::min<uint32_t>(value, INT_MAX)); }

v1::PeerState ToProto(PeerSessionState state) {
  switch (state) {
    case PeerSessionState::kConnecting: return v1::PEER_CONNECTING;
    case PeerSessionState::kUp: return v1::PEER_UP;
    case PeerSessionState::kDown: return v1::PEER_DOWN;
    case PeerSessionState::kVersionMismatch: return v1::PEER_VERSION_MISMATCH;
    case PeerSessionState::kCircuitOpen: return v1::PEER_CIRCUIT_OPEN;
    case PeerSessionState::kIdle: return v1::PEER_IDLE;
  }
  return v1::PEER_STATE_UNSPECIFIED;
}

}  // namespace

void ToProto(const PeerHello& hello, v1::HelloInfo* out) {
  out->mutable_protocol()->set_major(hello.protocol.major);
  out->mutable_protocol()->set_minor(hello.protocol.minor);
  out->set_host_name(hello.host_name);
  out->set_daemon_version(hello.daemon_version);
  out->set_instance_id(hello.instance_id);
  v1::PeerCapabilities* caps = out->mutable_capabilities();
  for (const std::string& t : hello.transports) caps->add_transports(t);
  for (const PeerPort& p : hello.ports) {
    v1::PeerPort* port = caps->add_ports();
    port->set_device(p.device);
    port->set_port(uint32_t(p.port));
    port->set_active_mtu(uint32_t(p.active_mtu));
    port->set_transport(p.transport);
  }
}

PeerHello FromProto(const v1::HelloInfo& in) {
  PeerHello hello;
  hello.protocol = {in.protocol().major(), in.protocol().minor()};
  hello.host_name = in.host_name();
  hello.daemon_version = in.daemon_version();
  hello.instance_id = in.instance_id();
  // Over the limit: keep one too many so that ValidateHello says so.
  const auto& caps = in.capabilities();
  int transports = std::min<int>(caps.transports_size(), int(kMaxPeerPorts) + 1);
  for (int i = 0; i < transports; ++i) hello.transports.push_back(caps.transports(i));
  int ports = std::min<int>(caps.ports_size(), int(kMaxPeerPorts) + 1);
  for (int i = 0; i < ports; ++i) {
    const v1::PeerPort& p = caps.ports(i);
    hello.ports.push_back({p.device(), Clamp(p.port()), Clamp(p.active_mtu()), p.transport()});
  }
  return hello;
}

void ToProto(const SessionOpen& open, v1::SessionRequest* out) {
  out->mutable_protocol()->set_major(open.protocol.major);
  out->mutable_protocol()->set_minor(open.protocol.minor);
  out->set_host_name(open.host_name);
  out->set_instance_id(open.instance_id);
  out->set_heartbeat_interval_ms(uint32_t(open.heartbeat_interval_ms));
}

SessionOpen FromProto(const v1::SessionRequest& in) {
  SessionOpen open;
  open.protocol = {in.protocol().major(), in.protocol().minor()};
  open.host_name = in.host_name();
  open.instance_id = in.instance_id();
  open.heartbeat_interval_ms = Clamp(in.heartbeat_interval_ms());
  return open;
}

void ToProto(const PeerEvent& event, v1::PeerEvent* out) {
  out->Clear();
  out->set_sequence(event.sequence);
  switch (event.kind) {
    case PeerEvent::Kind::kHeartbeat:
      out->mutable_heartbeat()->set_unix_time_ms(event.unix_time_ms);
      break;
    case PeerEvent::Kind::kChannelClosed:
      out->mutable_channel_closed()->set_channel_id(event.channel_id);
      out->mutable_channel_closed()->set_reason(event.reason);
      break;
    case PeerEvent::Kind::kUnknown: break;
  }
}

PeerEvent FromProto(const v1::PeerEvent& in) {
  PeerEvent event;
  event.sequence = in.sequence();
  switch (in.event_case()) {
    case v1::PeerEvent::kHeartbeat:
      event.kind = PeerEvent::Kind::kHeartbeat;
      event.unix_time_ms = in.heartbeat().unix_time_ms();
      break;
    case v1::PeerEvent::kChannelClosed:
      event.kind = PeerEvent::Kind::kChannelClosed;
      event.channel_id = in.channel_closed().channel_id();
      event.reason = in.channel_closed().reason().substr(0, 1024);
      break;
    default: event.kind = PeerEvent::Kind::kUnknown; break;
  }
  return event;
}

void ToProto(const PeerSnapshot& peer, v1::Peer* out) {
  out->set_name(peer.name);
  out->set_address(peer.address);
  out->set_state(ToProto(peer.state));
  out->set_rtt_ms(peer.rtt_ms);
  out->set_last_error(peer.last_error);
  if (peer.remote) {
    out->set_remote_host(peer.remote->host_name);
    out->set_remote_version(peer.remote->daemon_version);
    out->set_remote_protocol(FormatProtocol(peer.remote->protocol));
    for (const std::string& t : peer.remote->transports) out->add_remote_transports(t);
  }
  out->set_configured(peer.configured);
  out->set_origin(PeerOriginName(peer.origin));
  out->set_state_seconds(peer.state_seconds);
  out->set_failures(uint32_t(std::max(peer.failures, 0)));
  if (peer.clock_offset_ms) out->set_clock_offset_ms(*peer.clock_offset_ms);
  if (peer.state == PeerSessionState::kCircuitOpen) {
    out->set_circuit_open_until_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            peer.circuit_open_until.time_since_epoch())
                                            .count());
  }
}

int EstablishedChannelsWith(const PeerSnapshot& peer, const std::vector<ChannelRecord>& channels) {
  int count = 0;
  for (const ChannelRecord& c : channels) {
    if (c.state != ChannelState::kEstablished) continue;
    bool same_instance =
        peer.remote && !c.peer_instance.empty() && c.peer_instance == peer.remote->instance_id;
    if (same_instance || c.peer == peer.name) ++count;
  }
  return count;
}

PeerIdentity IdentityOf(const std::shared_ptr<const grpc::AuthContext>& auth) {
  PeerIdentity identity;
  if (auth == nullptr) return identity;
  for (const grpc::string_ref& type : auth->FindPropertyValues("transport_security_type")) {
    identity.tls = identity.tls || std::string(type.data(), type.size()) == "ssl";
  }
  if (!identity.tls) return identity;
  for (const grpc::string_ref& name : auth->FindPropertyValues("x509_subject_alternative_name")) {
    identity.names.emplace_back(name.data(), name.size());
  }
  return identity;
}

}  // namespace rdmad
