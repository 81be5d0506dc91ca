// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What the two ends of a channel tell each other through the daemons, and
// what a daemon plans for its side. Internal to the client library; the
// daemons carry these as rdmad.v1 messages (proto/rdmad/v1/).
//
// Thread safety: values.

#ifndef RDMAD_COMMON_ENDPOINT_H_
#define RDMAD_COMMON_ENDPOINT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rdmad/devices.h"
#include "rdmad/status.h"

namespace rdmad::internal {

// Channels set up as one batch at most (Client::ConnectMany): one plan, one
// request to the peer daemon, one answer from its listener.
inline constexpr size_t kMaxChannelBatch = 64;

// The longest reason text a channel carries: a listener's reject reason and
// an endpoint's transport_reason beyond it are INVALID_ARGUMENT; a close
// reason is cut to it.
inline constexpr size_t kMaxReasonLength = 1024;

// The most rails a channel has: its first (the path policy's) and up to 7
// further ones (docs/topology.md, "Rails in a channel").
inline constexpr size_t kMaxRails = 8;

// A further rail of an RDMA endpoint: one more RC QP, on another device.
// The acceptor's rails name the initiator's rail each pairs with (pair).
struct RailEndpoint {
  std::string device;
  uint32_t port = 1;
  uint32_t qpn = 0;
  uint32_t psn = 0;
  std::array<uint8_t, 16> gid{};
  uint32_t gid_index = 0;
  std::string gid_type;
  uint32_t lid = 0;
  uint32_t active_mtu = 0;
  uint32_t prefix_len = 0;           // the subnet of an IPv4-mapped GID's address (0: any)
  uint32_t weight = 1;               // share of a striped transfer
  uint32_t device_tag = 0;           // names the device in a region's rail keys
  uint32_t pair = 0;                 // acceptor: the initiator's rail index
  uint32_t responder_resources = 0;  // as RdmaEndpoint's, for this rail's QP
};

// One side of an RDMA channel, as the other side needs it.
struct RdmaEndpoint {
  std::string device;  // for logs: "rxe0"
  uint32_t port = 1;
  uint32_t qpn = 0;  // 24 bits
  uint32_t psn = 0;  // random, 24 bits
  std::array<uint8_t, 16> gid{};
  uint32_t gid_index = 0;
  std::string gid_type;       // "RoCE v2", "RoCE v1", "IB"
  uint32_t lid = 0;           // InfiniBand only
  uint32_t active_mtu = 0;    // bytes: 256..4096, this side's port
  QpAttributes qp;            // this side's attributes
  uint64_t ring_address = 0;  // the receive ring (for logs and checks)
  uint32_t ring_rkey = 0;
  uint32_t ring_slots = 0;          // receives posted = initial credits
  uint32_t slot_size = 0;           // bytes per slot
  uint32_t credits = 0;             // sends the peer may start with
  std::vector<RailEndpoint> rails;  // further rails, at most kMaxRails - 1
  uint32_t device_tag = 0;          // as RailEndpoint::device_tag
  // The QP's max_dest_rd_atomic: RDMA READs the peer may have in flight to
  // it, which caps the peer's initiator depth (max_rd_atomic). 0: not said
  // (an older peer): the peer keeps its own limit.
  uint32_t responder_resources = 0;
};

// OK, or INVALID_ARGUMENT naming the first bad field ("qpn 0x1000000 does
// not fit 24 bits", "active_mtu 1500 is not an IB MTU", ...).
Status ValidateRdmaEndpoint(const RdmaEndpoint& endpoint);

// One side of a TCP (fallback) channel: the acceptor listens, the initiator
// connects and sends the token first.
struct TcpEndpoint {
  std::string host;  // numeric IPv4/IPv6
  uint16_t port = 0;
  std::array<uint8_t, 32> token{};
};

// One side's answer in a handshake: exactly one of rdma and tcp is set, with
// why this side chose its transport. The daemons relay it as
// rdmad.v1.Endpoint (endpoint_convert.h).
struct WireEndpoint {
  std::optional<RdmaEndpoint> rdma;
  std::optional<TcpEndpoint> tcp;
  std::string transport_reason;
};

// A further rail the daemon planned (rdmad.v1.RailPath).
struct RailPlan {
  std::string device;
  uint32_t port = 1;
  uint32_t gid_index = 0;
  uint32_t prefix_len = 0;
  uint32_t weight = 1;
};

// What this side's daemon planned: the path policy's answer (see
// docs/discovery.md) plus the library's own knobs.
struct RdmaPlan {
  std::string device;
  uint32_t port = 1;
  uint32_t gid_index = 0;
  uint32_t path_mtu_cap = 4096;  // min(local active, peer active if known, mtu.cap)
  QpAttributes qp;
  uint32_t slot_size = 4096;
  uint32_t spin_us = 50;        // spin before sleeping on the CQ channel
  int relaxed_ordering = 2;     // 0 off, 1 on if supported, 2 auto
  uint32_t weight = 1;          // the first rail's share of a striped transfer
  bool first_striped = true;    // false: none while a further rail is up (outside the rail plan)
  std::vector<RailPlan> rails;  // further rails, at most kMaxRails - 1
};

// Which of the initiator's rails each of the acceptor's rails pairs with:
// rails on the same subnet, both ways (an IPv4-mapped GID's address in the
// other's prefix; IB and prefix 0 match any), greedily in the initiator's
// order, each used once. Returns (initiator index, acceptor index) pairs.
std::vector<std::pair<uint32_t, uint32_t>> PairRails(const std::vector<RailEndpoint>& initiator,
                                                     const std::vector<RailEndpoint>& acceptor);

// The MTU both ends use: the smallest of the cap and the two active MTUs.
uint32_t NegotiatedMtu(uint32_t cap, uint32_t local_active, uint32_t peer_active);

// RDMA READs a QP keeps in flight (its max_rd_atomic, the initiator depth):
// its device's limit, at most the peer QP's responder resources (0: the
// peer did not say), and at least 1. More than the responder has resources
// for would be refused by the peer's HCA (a remote invalid request error).
uint32_t NegotiatedReadDepth(uint32_t local_initiator_depth, uint32_t peer_responder_resources);

}  // namespace rdmad::internal

#endif  // RDMAD_COMMON_ENDPOINT_H_
