// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/policy/mtu_policy.h"

#include <algorithm>

namespace rdmad {
namespace {

constexpr int kMinIbMtu = 256;
constexpr int kMaxIbMtu = 4096;
// RoCE headers the kernel takes off the netdev MTU (iboe_get_mtu): GRH 40,
// UDP 8, BTH 12, XRC 4, AtomicETH 28, ICRC 4.
constexpr int kRoceOverhead = 96;

// The largest IB MTU <= bytes (256 for anything smaller).
int FloorIbMtu(int bytes) {
  int mtu = kMinIbMtu;
  while (mtu * 2 <= std::min(bytes, kMaxIbMtu)) mtu *= 2;
  return mtu;
}

// Whether the RoCE port's netdev MTU is what keeps active below max.
bool NetdevLimits(const PortInfo& port, int local_active) {
  if (port.netdev.empty() || port.netdev_mtu <= 0) return false;
  if (port.link_layer == LinkLayer::kInfiniBand) return false;
  if (port.max_mtu <= local_active) return false;
  return port.netdev_mtu < local_active * 2 + kRoceOverhead;
}

// "local active MTU 1024 (netdev veth0 MTU 1500 limits it; >= 4200 gives
// 4096)" and its variants.
std::string LocalText(const PortInfo& port, int local_active, bool limiting) {
  std::string text = "local active MTU ";
  if (port.active_mtu <= 0) {
    text += "unknown (assuming " + std::to_string(local_active) + ")";
  } else {
    text += std::to_string(port.active_mtu);
    if (port.active_mtu != local_active) {
      text += " (not an IB MTU; using " + std::to_string(local_active) + ")";
    }
  }
  if (limiting && NetdevLimits(port, local_active)) {
    int target = FloorIbMtu(port.max_mtu);
    text += " (netdev " + port.netdev + " MTU " + std::to_string(port.netdev_mtu) +
            " limits it; >= " + std::to_string(NetdevMtuFor(target)) + " gives " +
            std::to_string(target) + ")";
  } else if (limiting) {
    text += " (limits it)";
  }
  return text;
}

}  // namespace

bool IsIbMtu(int mtu) {
  return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

Status ValidateIbMtu(int mtu) {
  if (IsIbMtu(mtu)) return Status::Ok();
  return Status::InvalidArgument("MTU " + std::to_string(mtu) +
                                 " is not an IB MTU (256, 512, 1024, 2048 "
                                 "or 4096)");
}

int NetdevMtuFor(int ib_mtu) { return (ib_mtu + kRoceOverhead + 99) / 100 * 100; }

MtuDecision ChooseMtu(const PortInfo& local, int peer_active_mtu, int cap) {
  MtuDecision d;
  if (local.active_mtu > 0) {
    d.local_active = FloorIbMtu(local.active_mtu);
  } else {
    d.local_active = local.max_mtu > 0 ? FloorIbMtu(local.max_mtu) : 1024;
  }
  d.peer_active = peer_active_mtu > 0 ? FloorIbMtu(peer_active_mtu) : 0;
  d.cap = cap > 0 ? FloorIbMtu(cap) : kMaxIbMtu;
  d.mtu = std::min(d.local_active, d.cap);
  if (d.peer_active > 0) d.mtu = std::min(d.mtu, d.peer_active);
  int largest = std::max({d.local_active, d.peer_active, d.cap});
  auto limits = [&](int value) { return value == d.mtu && d.mtu < largest; };

  std::string peer = "peer unknown";
  if (d.peer_active > 0) {
    peer = "peer " + std::to_string(peer_active_mtu);
    if (peer_active_mtu != d.peer_active) {
      peer += " (not an IB MTU; using " + std::to_string(d.peer_active) + ")";
    }
    if (limits(d.peer_active)) peer += " (limits it)";
  }
  std::string cap_text = "cap " + std::to_string(d.cap);
  if (cap != d.cap) cap_text += " (mtu.cap " + std::to_string(cap) + ")";
  if (limits(d.cap)) cap_text += " (mtu.cap limits it)";
  d.reason = std::to_string(d.mtu) + ": " +
             LocalText(local, d.local_active, limits(d.local_active)) + ", " + peer + ", " +
             cap_text;
  return d;
}

}  // namespace rdmad
