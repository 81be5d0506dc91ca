// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The path MTU: the smallest of the local port's active MTU, the peer's
// active MTU and the configured cap (mtu.cap), with a reason that names what
// limits it - including a small netdev MTU under a RoCE port.
//
// Thread safety: pure functions over values, safe from any thread.

#ifndef RDMAD_DAEMON_POLICY_MTU_POLICY_H_
#define RDMAD_DAEMON_POLICY_MTU_POLICY_H_

#include <string>

#include "daemon/discovery/inventory.h"
#include "rdmad/status.h"

namespace rdmad {

struct MtuDecision {
  int mtu = 0;           // the path MTU, a valid IB MTU
  int local_active = 0;  // the local port's active MTU (0: unknown)
  int peer_active = 0;   // the peer port's active MTU (0: unknown)
  int cap = 0;           // mtu.cap as applied
  // "1024: local active MTU 1024 (netdev veth0 MTU 1500 limits it; >= 4200
  // gives 4096), peer 4096, cap 4096".
  std::string reason;
  friend bool operator==(const MtuDecision&, const MtuDecision&) = default;
};

// True for the IB MTUs: 256, 512, 1024, 2048, 4096.
bool IsIbMtu(int mtu);

// OK for a valid IB MTU, else INVALID_ARGUMENT naming the allowed values.
Status ValidateIbMtu(int mtu);

// Chooses the path MTU. peer_active_mtu 0 means unknown. Callers validate a
// peer's MTU with ValidateIbMtu first; values that are still not IB MTUs
// (and an invalid cap) are rounded down to one, and an unknown local MTU
// falls back to the port's max MTU, else 1024 - the reason says so.
MtuDecision ChooseMtu(const PortInfo& local, int peer_active_mtu, int cap);

// The smallest netdev MTU that lets a RoCE port reach ib_mtu: the kernel
// subtracts 96 bytes of RoCE headers (iboe_get_mtu); rounded up to 100.
int NetdevMtuFor(int ib_mtu);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_POLICY_MTU_POLICY_H_
