// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// BrokerOptions: what the broker and its parts (the handshake, re-attaching,
// the lifecycle) are configured with; PlannedChannel: a plan's answer.
//
// Thread safety: plain values; the pointers' objects say their own.

#ifndef RDMAD_DAEMON_BROKER_BROKER_OPTIONS_H_
#define RDMAD_DAEMON_BROKER_BROKER_OPTIONS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "daemon/broker/broker_network.h"
#include "daemon/broker/lease_sealer.h"
#include "daemon/clients/quota_refusals.h"
#include "daemon/discovery/route_lookup.h"
#include "daemon/peers/channel_endpoint.h"

namespace rdmad {

struct BrokerOptions {
  std::string host_name;
  std::string instance_id;
  bool force_tcp = false;                            // the config forces TCP for every channel
  std::chrono::milliseconds accept_deadline{10000};  // the listener's answer
  std::chrono::milliseconds open_timeout{12000};     // the peer's answer
  // A plan's life: PlanChannel to Connect (the application creates its QP
  // and registers its ring meanwhile: slow on a loaded or emulated host).
  std::chrono::milliseconds plan_lifetime{60000};
  std::chrono::milliseconds hold_grace{30000};  // established, never held
  std::chrono::milliseconds keep_ended{60000};  // closed/failed entries listed
  // How long an established channel waits for its lost peer daemon to come
  // back (or, adopted after a restart, for the peer to confirm it)
  // (daemon.peer_channel_grace_s).
  std::chrono::milliseconds peer_grace{10000};
  size_t max_ended = 256;
  // Live (not ended) channels at most, in total and per peer (0: no
  // limit; limits.max_channels, limits.max_channels_per_peer).
  size_t max_channels = 0;
  size_t max_channels_per_peer = 0;
  // Paths and peer daemons (broker_network.h); not owned, outlives the
  // broker. Null: no peer is known and every channel would go over TCP.
  BrokerNetwork* network = nullptr;
  // The source address for reaching a peer IP (where a TCP acceptor
  // listens); default KernelSourceAddress.
  const SourceAddressLookup* source_address = nullptr;  // null: KernelSourceAddresses()
  // The broker's time (not owned; outlives the broker): tests pass a
  // ManualClock to move time for the sweeper and the graces.
  Clock* clock = &Clock::System();
  // Seals the leases given to applications (LeaseSealer); default: a key
  // of its own in memory.
  std::shared_ptr<const LeaseSealer> lease_sealer;
  // Where the channel and listener quotas count their refusals (not owned,
  // outlives the broker; null: not counted).
  QuotaRefusals* refusals = nullptr;
};

struct PlannedChannel {
  std::vector<uint64_t> channel_ids;  // one, or a batch with one plan
  ChannelPlan plan;
  std::string peer_address;  // the peer's IP the plan was made for
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_BROKER_OPTIONS_H_
