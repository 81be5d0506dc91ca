// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/endpoint.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string_view>

namespace rdmad::internal {
namespace {

constexpr uint32_t kMax24Bits = 0xFFFFFF;
constexpr uint32_t kMinSlots = 3;      // the credit scheme's minimum (rdma/wire.h)
constexpr uint32_t kMaxSlots = 32768;  // as qp.recv_depth
constexpr uint32_t kMinSlotSize = 64;
constexpr uint32_t kMaxSlotSize = 64u << 20;
constexpr uint32_t kMaxResponderResources = 255;  // max_dest_rd_atomic is 8 bits

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

Status Bad(std::string message) { return Status::InvalidArgument("RDMA endpoint: " + message); }

// responder_resources fits max_dest_rd_atomic's 8 bits; what: "" or "rail N (dev): ".
Status ValidateResponderResources(uint32_t v, const std::string& what) {
  if (v <= kMaxResponderResources) return Status::Ok();
  return Bad(what + "responder_resources " + std::to_string(v) + " > " +
             std::to_string(kMaxResponderResources));
}

bool IsIbMtu(uint32_t mtu) {
  return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

// One QP attribute and its range (the same ranges as the daemon's qp.*).
struct QpField {
  uint32_t QpAttributes::*field;
  std::string_view name;
  uint32_t min;
  uint32_t max;
};

constexpr QpField kQpFields[] = {
    {&QpAttributes::timeout, "timeout", 0, 31},
    {&QpAttributes::retry_cnt, "retry_cnt", 0, 7},
    {&QpAttributes::rnr_retry, "rnr_retry", 0, 7},
    {&QpAttributes::min_rnr_timer, "min_rnr_timer", 0, 31},
    {&QpAttributes::traffic_class, "traffic_class", 0, 255},
    {&QpAttributes::service_level, "service_level", 0, 15},
    {&QpAttributes::hop_limit, "hop_limit", 1, 255},
    {&QpAttributes::max_inline, "max_inline", 0, 1024},
    {&QpAttributes::send_depth, "send_depth", 1, 32768},
    {&QpAttributes::recv_depth, "recv_depth", 1, 32768},
    {&QpAttributes::qps_per_channel, "qps_per_channel", 1, 64},
};

Status ValidateQp(const QpAttributes& qp) {
  if (qp.type != "RC") return Bad("QP type \"" + qp.type + "\" is not supported; only RC");
  for (const QpField& f : kQpFields) {
    uint32_t v = qp.*f.field;
    if (v >= f.min && v <= f.max) continue;
    return Bad("QP attribute " + std::string(f.name) + " " + std::to_string(v) +
               " is out of range " + std::to_string(f.min) + ".." + std::to_string(f.max));
  }
  return Status::Ok();
}

Status ValidateAddress(const RdmaEndpoint& e) {
  if (e.port < 1 || e.port > 255)
    return Bad("port " + std::to_string(e.port) + " is out of range 1..255");
  if (e.gid_index > 255)
    return Bad("gid_index " + std::to_string(e.gid_index) + " is out of range 0..255");
  if (e.gid_type == "IB") {
    if (e.lid == 0 || e.lid >= 0xC000) return Bad("lid " + Hex(e.lid) + " is not a unicast LID");
    return Status::Ok();
  }
  if (e.gid_type != "RoCE v1" && e.gid_type != "RoCE v2") {
    return Bad("gid_type \"" + e.gid_type + "\" is not one of IB, RoCE v1, RoCE v2");
  }
  if (std::all_of(e.gid.begin(), e.gid.end(), [](uint8_t b) { return b == 0; })) {
    return Bad("gid is all zeros (no address for RoCE)");
  }
  return Status::Ok();
}

Status ValidateRing(const RdmaEndpoint& e) {
  if (e.ring_slots < kMinSlots || e.ring_slots > kMaxSlots) {
    return Bad("ring_slots " + std::to_string(e.ring_slots) + " is out of range " +
               std::to_string(kMinSlots) + ".." + std::to_string(kMaxSlots));
  }
  if (e.slot_size < kMinSlotSize || e.slot_size > kMaxSlotSize) {
    return Bad("slot_size " + std::to_string(e.slot_size) + " is out of range " +
               std::to_string(kMinSlotSize) + ".." + std::to_string(kMaxSlotSize));
  }
  if (e.credits < 2 || e.credits > e.ring_slots) {
    return Bad("credits " + std::to_string(e.credits) + " is out of range 2..ring_slots (" +
               std::to_string(e.ring_slots) + ")");
  }
  if (e.ring_address == 0) return Bad("ring_address is 0");
  return Status::Ok();
}

// A further rail: the same checks as the first rail's address and QP.
Status ValidateRail(const RailEndpoint& r, size_t index) {
  std::string what = "rail " + std::to_string(index + 1) + " (" + r.device + "): ";
  if (r.qpn > kMax24Bits || r.qpn < 2) return Bad(what + "qpn " + Hex(r.qpn) + " is not an RC QP");
  if (r.psn > kMax24Bits) return Bad(what + "psn " + Hex(r.psn) + " does not fit 24 bits");
  if (!IsIbMtu(r.active_mtu)) {
    return Bad(what + "active_mtu " + std::to_string(r.active_mtu) + " is not an IB MTU");
  }
  if (r.prefix_len > 32) return Bad(what + "prefix_len " + std::to_string(r.prefix_len) + " > 32");
  if (r.weight < 1 || r.weight > 100000) {
    return Bad(what + "weight " + std::to_string(r.weight) + " is out of range 1..100000");
  }
  if (r.pair >= kMaxRails - 1) return Bad(what + "pair " + std::to_string(r.pair) + " is no rail");
  RDMAD_RETURN_IF_ERROR(ValidateResponderResources(r.responder_resources, what));
  RdmaEndpoint address;
  address.port = r.port;
  address.gid = r.gid;
  address.gid_index = r.gid_index;
  address.gid_type = r.gid_type;
  address.lid = r.lid;
  Status s = ValidateAddress(address);
  if (!s.ok()) return Bad(what + std::string(s.message().substr(sizeof("RDMA endpoint: ") - 1)));
  return Status::Ok();
}

// The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d), if it is one.
std::optional<uint32_t> MappedIpv4(const std::array<uint8_t, 16>& gid) {
  for (int i = 0; i < 10; ++i) {
    if (gid[i] != 0) return std::nullopt;
  }
  if (gid[10] != 0xff || gid[11] != 0xff) return std::nullopt;
  return (uint32_t(gid[12]) << 24) | (uint32_t(gid[13]) << 16) | (uint32_t(gid[14]) << 8) |
         uint32_t(gid[15]);
}

// a's address lies in b's subnet (b's prefix 0, or not IPv4: any).
bool InSubnetOf(const RailEndpoint& a, const RailEndpoint& b) {
  std::optional<uint32_t> ia = MappedIpv4(a.gid), ib = MappedIpv4(b.gid);
  if (!ia || !ib || b.prefix_len == 0) return true;
  uint32_t mask = b.prefix_len >= 32 ? 0xffffffffu : ~(0xffffffffu >> b.prefix_len);
  return (*ia & mask) == (*ib & mask);
}

bool RailsMatch(const RailEndpoint& a, const RailEndpoint& b) {
  bool a_ib = a.gid_type == "IB", b_ib = b.gid_type == "IB";
  if (a_ib != b_ib) return false;
  if (!a_ib && a.gid_type != b.gid_type) return false;  // RoCE v1 with v2: no
  return InSubnetOf(a, b) && InSubnetOf(b, a);
}

}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> PairRails(const std::vector<RailEndpoint>& initiator,
                                                     const std::vector<RailEndpoint>& acceptor) {
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  std::vector<bool> taken(acceptor.size(), false);
  for (uint32_t i = 0; i < initiator.size(); ++i) {
    for (uint32_t j = 0; j < acceptor.size(); ++j) {
      if (taken[j] || !RailsMatch(initiator[i], acceptor[j])) continue;
      taken[j] = true;
      pairs.emplace_back(i, j);
      break;
    }
  }
  return pairs;
}

Status ValidateRdmaEndpoint(const RdmaEndpoint& endpoint) {
  const RdmaEndpoint& e = endpoint;
  if (e.qpn > kMax24Bits) return Bad("qpn " + Hex(e.qpn) + " does not fit 24 bits");
  if (e.qpn < 2) return Bad("qpn " + Hex(e.qpn) + " is reserved (0 and 1 are not RC QPs)");
  if (e.psn > kMax24Bits) return Bad("psn " + Hex(e.psn) + " does not fit 24 bits");
  if (!IsIbMtu(e.active_mtu)) {
    return Bad("active_mtu " + std::to_string(e.active_mtu) +
               " is not an IB MTU (256, 512, 1024, 2048, 4096)");
  }
  RDMAD_RETURN_IF_ERROR(ValidateAddress(e));
  RDMAD_RETURN_IF_ERROR(ValidateQp(e.qp));
  RDMAD_RETURN_IF_ERROR(ValidateRing(e));
  RDMAD_RETURN_IF_ERROR(ValidateResponderResources(e.responder_resources, ""));
  if (e.rails.size() > kMaxRails - 1) {
    return Bad(std::to_string(e.rails.size()) + " further rails; at most " +
               std::to_string(kMaxRails - 1));
  }
  for (size_t i = 0; i < e.rails.size(); ++i) RDMAD_RETURN_IF_ERROR(ValidateRail(e.rails[i], i));
  return Status::Ok();
}

// Zeros mean "unknown" and are ignored; the smallest known value is rounded
// down to an IB MTU (a cap of 1500 gives 1024) and kept in 256..4096. With
// nothing known the answer is 1024, which every RDMA port supports.
uint32_t NegotiatedMtu(uint32_t cap, uint32_t local_active, uint32_t peer_active) {
  uint32_t m = 0;
  for (uint32_t v : {cap, local_active, peer_active}) {
    if (v != 0 && (m == 0 || v < m)) m = v;
  }
  if (m == 0) return 1024;
  uint32_t mtu = 4096;
  while (mtu > 256 && mtu > m) mtu /= 2;
  return mtu;
}

uint32_t NegotiatedReadDepth(uint32_t local_initiator_depth, uint32_t peer_responder_resources) {
  uint32_t depth = local_initiator_depth;
  if (peer_responder_resources != 0) depth = std::min(depth, peer_responder_resources);
  return std::max<uint32_t>(depth, 1);
}

}  // namespace rdmad::internal
