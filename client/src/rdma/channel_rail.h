// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RailQp: one further rail of an RdmaChannel (docs/topology.md, "Rails in
// a channel"): an RC QP on another device of this host, connected to the
// peer's QP on the device it pairs with. It carries only the RDMA WRITE and
// READ pieces of striped transfers (channel_stripe.cc); messages keep the
// channel's first QP, in order.
//
// Thread safety: none of its own; the channel's sending thread posts and
// polls, and the channel's mutex guards the counters and up/reason.

#ifndef RDMAD_CLIENT_SRC_RDMA_CHANNEL_RAIL_H_
#define RDMAD_CLIENT_SRC_RDMA_CHANNEL_RAIL_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "client/src/rdma/resources.h"
#include "client/src/rdma/wire.h"
#include "common/endpoint.h"

namespace rdmad::internal {

struct RailQp {
  using Clock = std::chrono::steady_clock;
  RailPlan plan;  // to open it again
  std::unique_ptr<ChannelResources> res;
  RailEndpoint local, remote;
  uint32_t mtu = 0;
  uint32_t weight = 1;       // min of both ends' weights
  uint32_t outstanding = 0;  // work requests posted, not completed
  uint64_t bytes_written = 0, bytes_read = 0;
  bool up = true;
  std::string reason;             // why it is out
  bool busy = false;              // a transfer waits on its QP: the QP must stay
  Clock::time_point next_look{};  // when to look at the port (and GID) again
  // Taken out this many times since it last carried a piece: it may come
  // back from retry_at on (1 s, doubling up to a minute), so that a rail
  // whose port is ACTIVE but whose peer it cannot reach does not flap.
  uint32_t failures = 0;
  Clock::time_point retry_at{};
  // Coming back (channel_rail_return.cc): the new QP offered to the peer
  // and since when; the peer's offer or answer, kept until the rail is idle.
  std::unique_ptr<ChannelResources> next;
  RailEndpoint next_local;
  Clock::time_point offered_at{};
  std::optional<RailMessage> offer, answer;
};

// The address a rail's QP moves to RTR with: the peer's QP (qpn, psn) on
// the rail's remote device.
RdmaEndpoint RailPeer(const RailEndpoint& remote, uint32_t qpn, uint32_t psn);

// The local side of a further rail created for plan: device, QP, PSN, GID.
StatusOr<RailEndpoint> FillRailEndpoint(const ChannelResources& res, const RailPlan& plan);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_CHANNEL_RAIL_H_
