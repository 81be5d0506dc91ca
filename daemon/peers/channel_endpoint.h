// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The endpoints and plans the channel broker relays, as the core sees them
// (the RPC edge converts rdmad.v1.Endpoint / ChannelPlan to and from these).
// The broker validates every endpoint it relays with the client library's
// own checks (common/endpoint.h), so a peer's or an application's
// garbage is refused with INVALID_ARGUMENT naming the field, never relayed.
//
// Thread safety: values; the functions are pure.

#ifndef RDMAD_DAEMON_PEERS_CHANNEL_ENDPOINT_H_
#define RDMAD_DAEMON_PEERS_CHANNEL_ENDPOINT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/endpoint.h"
#include "daemon/policy/path_policy.h"
#include "daemon/policy/rail_paths.h"
#include "rdmad/status.h"

namespace rdmad {

// One side of a channel: exactly one of rdma and tcp is set.
using ChannelEndpoint = internal::WireEndpoint;
// The endpoints of a batch's channels, in the batch's order.
using ChannelEndpoints = std::vector<ChannelEndpoint>;

// This side's plan: an RDMA path, or TCP and why.
struct ChannelPlan {
  std::optional<PathDecision> path;  // set: RDMA
  std::string tcp_reason;            // set when path is not
  std::string tcp_bind_host;         // TCP acceptor: the address to listen on
  ChannelRails rails;                // RDMA: the path's weight and the further rails
};

using internal::kMaxChannelBatch;

// One channel of a batch: its id and the opening side's endpoint.
struct ChannelOpening {
  uint64_t channel_id = 0;
  ChannelEndpoint endpoint;
};

// OpenChannel, daemon to daemon (peer.proto OpenChannelRequest).
struct OpenChannelCall {
  std::string service;
  std::string initiator_host;
  std::string initiator_instance;
  // One channel or a batch (at most kMaxChannelBatch), all or nothing, each
  // with the initiator's endpoint. Answered with one endpoint per channel,
  // in order.
  std::vector<ChannelOpening> channels;
};

struct CloseChannelCall {
  uint64_t channel_id = 0;
  std::string reason;
  std::string initiator_instance;
};

// A restarted daemon's ReclaimChannel: channel_id was shared with the
// caller's previous_instance; the caller is instance now.
struct ReclaimChannelCall {
  ReclaimChannelCall() = default;
  ReclaimChannelCall(uint64_t id, std::string previous, std::string now)
      : channel_id(id), previous_instance(std::move(previous)), instance(std::move(now)) {}

  uint64_t channel_id = 0;
  std::string previous_instance;
  std::string instance;
  // Set by PeerInbound: the node instance belongs to, and whether this
  // daemon knows previous_instance's (then it is that node too). Unknown
  // (this daemon restarted since), the channel's peer must be that node.
  std::string caller_node;
  bool previous_node_known = false;
};

// OK, or INVALID_ARGUMENT naming the field: neither or both transports, a
// bad RDMA field (ValidateRdmaEndpoint), a TCP host that is not a numeric
// IPv4/IPv6 address, port 0, an all-zero token. An initiator's TCP
// endpoint (listening false) only says "TCP": its port and token are not
// used (the acceptor listens) and may be 0.
Status ValidateChannelEndpoint(const ChannelEndpoint& endpoint, bool listening = true);

// The transport a channel runs on: its endpoints' (kUnknown before they
// are known).
enum class EndpointKind : uint8_t { kUnknown, kRdma, kTcp };
EndpointKind KindOf(const ChannelEndpoint& endpoint);
// "RDMA", "TCP", "" (kUnknown): the local API's, the leases' and the logs'
// words; ParseEndpointKind reads them back (nullopt for anything else).
const char* EndpointKindName(EndpointKind kind);
std::optional<EndpointKind> ParseEndpointKind(std::string_view name);

// EndpointKindName(KindOf(endpoint)).
std::string EndpointTransport(const ChannelEndpoint& endpoint);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_CHANNEL_ENDPOINT_H_
