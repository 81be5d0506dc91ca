// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ChannelReattach: channels across the loss or the restart of a daemon
// (docs/channels.md, "When rdmad restarts"). The applications own the data
// path, so neither daemon's restart ends an established channel:
//   - the surviving daemon keeps the lost peer's channels waiting
//     (OnPeerLost) until the same instance is back (OnPeerBack) or its
//     successor takes them back (OnReclaimChannel);
//   - the restarted daemon adopts each channel its application re-attaches
//     with the lease it kept (Adopt) and reclaims it from the peer
//     (TryReclaim; again from the sweeper while no link is up).
// A channel that no side confirms within peer_grace fails (SweepLocked).
// The Broker's methods of the same names document the answers.
//
// Thread safety: every method may be called from any thread; none blocks
// (a ReclaimChannel's answer completes on the transport's thread). The
// ...Locked ones with the table's lock held.

#ifndef RDMAD_DAEMON_BROKER_CHANNEL_REATTACH_H_
#define RDMAD_DAEMON_BROKER_CHANNEL_REATTACH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/broker/broker_options.h"
#include "daemon/broker/channel_table.h"
#include "daemon/broker/channel_teller.h"
#include "daemon/clients/caller.h"
#include "daemon/peers/peer_inbound.h"
#include "rdmad/status.h"

namespace rdmad {

class ChannelReattach {
 public:
  // All not owned; they outlive this object, and no ReclaimChannel answer
  // may arrive after it is destroyed (the broker's peers stop first).
  ChannelReattach(const BrokerOptions* options, ChannelTable* table, const ChannelTeller* teller)
      : options_(*options), table_(*table), teller_(*teller) {}

  StatusOr<ChannelLease> LeaseOf(uint64_t channel_id, EndpointKind transport) const;
  Status Adopt(const Caller& caller, uint64_t channel_id, const ChannelLease& lease);
  Status OnReclaimChannel(const ReclaimChannelCall& call);
  void OnPeerLost(const std::string& instance_id, const std::string& name, const std::string& why);
  void OnPeerBack(const std::string& instance_id);
  // Asks the peer daemon, if a link is up, whether it still has the
  // reattaching or confirming channel (ReclaimChannel).
  void TryReclaim(uint64_t channel_id);

  // The sweep of a channel waiting for its peer (peer_lost, reattaching,
  // confirming) at now: its end once peer_grace passed, or nothing; one
  // to ask again is queued for TakeQueuedLocked.
  std::optional<ChannelEnding> SweepLocked(ChannelTable::Entry& entry, SteadyTime now);
  // The channels queued to be asked again (TryReclaim each, unlocked).
  std::vector<uint64_t> TakeQueuedLocked() { return std::exchange(queued_, {}); }

 private:
  using Entry = ChannelTable::Entry;

  // The peer's answer to a reclaim sent to its instance peer_instance.
  void Reclaimed(uint64_t channel_id, const std::string& peer_instance, const Status& answer);

  const BrokerOptions& options_;
  ChannelTable& table_;
  const ChannelTeller& teller_;
  std::vector<uint64_t> queued_;  // guarded by the table's lock
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_CHANNEL_REATTACH_H_
