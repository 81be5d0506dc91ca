// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Broker: the daemon's side of channels (docs/channels.md). It plans a
// channel for the initiating application (PlanChannel: a channel id and the
// path policy's answer for the peer's address, or TCP and why), relays the
// initiator's endpoint to the peer daemon (Connect -> PeerLink::OpenChannel)
// and, on the accepting daemon, hands an OpenChannel to the service's
// listener (OnOpenChannel -> ServiceRegistry::Offer) with this side's own
// plan back to the initiator's address. Every endpoint it relays is
// validated first (INVALID_ARGUMENT naming the field).
//
// The broker is a front over the channel table (channel_table.h) and its
// parts: ChannelHandshake (planning, Connect, OnOpenChannel),
// ChannelReattach (peer loss, restarts) and ChannelLimits (the quotas).
//
// Lifecycle (broker_lifecycle.cc): an established channel is tied to its
// application's lifeline (Hold, the local API's HoldChannel stream). When
// the lifeline ends (Unhold) or the application closes it (Release) the
// channel is closed and the peer daemon told (PeerLink::CloseChannel, or a
// ChannelClosed event on the peer's session stream when this daemon has no
// session to it). A peer's close (OnCloseChannel) ends the channel here
// and is passed to the holders.
// A channel's phase moves only as the state machine's table says
// (channel_machine.h), through ApplyLocked. The table keeps ended channels for `rdmactl channels`
// for keep_ended (at most max_ended of them); planned channels that never Connect fail after
// open_timeout, established ones never held are closed after hold_grace (Sweep, from a sweeper
// thread or the tests).
//
// Restarts (ChannelReattach; docs/channels.md, "When rdmad restarts"):
// the data path lives in the applications, so neither daemon's restart ends
// an established channel. When a peer daemon is lost (OnPeerLost) its
// established channels wait up to peer_grace: the same instance coming back
// (OnPeerBack) or its successor taking a channel back (OnReclaimChannel)
// keeps it; otherwise it fails with "peer daemon NAME lost: WHY". A
// restarted daemon learns its channels from their applications: Adopt
// takes one back from the lease the application kept (LeaseOf, given with
// Connect/Accept) and reclaims it from the peer daemon, which says whether
// it still has it. Shutdown leaves established channels to their
// applications.
//
// Thread safety: every method may be called from any thread. Connect and
// OnOpenChannel block until the peer or the listener answers (bounded by
// BrokerOptions' timeouts); call them off the RPC runtime's event threads.
// The lifecycle methods never block: holders and peers are told after the
// broker's lock is released, and ChannelHolder callbacks must not block.

#ifndef RDMAD_DAEMON_BROKER_BROKER_H_
#define RDMAD_DAEMON_BROKER_BROKER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/broker/broker_network.h"
#include "daemon/broker/broker_options.h"
#include "daemon/broker/channel_handshake.h"
#include "daemon/broker/channel_limits.h"
#include "daemon/broker/channel_machine.h"
#include "daemon/broker/channel_reattach.h"
#include "daemon/broker/channel_record.h"
#include "daemon/broker/channel_table.h"
#include "daemon/broker/channel_teller.h"
#include "daemon/broker/handshake_stats.h"
#include "daemon/broker/lease_sealer.h"
#include "daemon/broker/service_registry.h"
#include "daemon/clients/caller.h"
#include "daemon/discovery/inventory_diff.h"
#include "daemon/discovery/route_lookup.h"
#include "daemon/peers/channel_endpoint.h"
#include "daemon/peers/peer_inbound.h"
#include "daemon/peers/peer_link.h"
#include "daemon/peers/peer_sessions.h"
#include "daemon/policy/path_policy.h"
#include "rdmad/status.h"

namespace rdmad {

class Broker;

// The inventory changes that take a local RDMA path away, passed to
// broker.OnPathLost: a device removed, a port no longer ACTIVE (its state in
// inventory, the snapshot after the changes), a GID removed. Returns how
// many channels failed.
size_t FailLostPaths(Broker& broker, const Inventory& inventory,
                     const std::vector<InventoryChange>& changes);

// The broker is what peers' channel calls reach (InboundChannels).
class Broker final : public InboundChannels, public SessionUser {
 public:
  explicit Broker(BrokerOptions options);
  ~Broker() override;  // stops the sweeper

  ServiceRegistry& services() { return services_; }

  // Ownership (docs/security.md): a channel belongs to the uid of the
  // application that planned it (initiator) or of the listener that
  // accepted it (acceptor). Only that uid may Connect, Hold or Adopt it;
  // that uid or an admin may Release it and sees it in ChannelsFor. To
  // anyone else the channel is NOT_FOUND, as if it did not exist.

  // The initiator's first call, by caller: count channels (a batch: at
  // most kMaxChannelBatch) with one plan. NOT_FOUND unknown peer;
  // INVALID_ARGUMENT for a malformed service name or count;
  // RESOURCE_EXHAUSTED when the channels would pass a limit (OnOpenChannel
  // too, for the peer's side).
  StatusOr<PlannedChannel> PlanChannel(const Caller& caller, const std::string& peer,
                                       const std::string& service, bool force_tcp,
                                       size_t count = 1);
  // The initiator's second call: relays the
  // channels' endpoints to the peer in one OpenChannel and returns the
  // acceptor's, in the same order. A batch is all or nothing: when one
  // channel fails (or ended meanwhile), all end, and the peer is told.
  // NOT_FOUND for an unknown channel id (or another uid's);
  // FAILED_PRECONDITION for one not planned (any more); INVALID_ARGUMENT
  // for a malformed endpoint, a repeated id, or channels planned for
  // different peers or services; UNAVAILABLE when the peer daemon is lost
  // meanwhile.
  StatusOr<ChannelEndpoints> Connect(const Caller& caller,
                                     const std::vector<ChannelOpening>& channels);
  StatusOr<ChannelEndpoint> Connect(const Caller& caller, uint64_t channel_id,
                                    const ChannelEndpoint& endpoint);
  // A peer's OpenChannel (a batch: one offer to the listener, all or
  // nothing); peer_ip is the address the call came from.
  StatusOr<ChannelEndpoints> OnOpenChannel(const OpenChannelCall& call,
                                           const std::string& peer_ip) override;

  // --- Lifecycle (broker_lifecycle.cc) ---
  struct HoldResult {
    uint64_t token = 0;  // for Unhold; 0 when the channel had already ended
    ChannelState state = ChannelState::kEstablished;
    std::string reason;  // why it ended (token 0)
  };
  // Ties channel_id to holder. NOT_FOUND for an unknown id (or another
  // uid's). An ended channel is not held: the result says how it ended.
  StatusOr<HoldResult> Hold(const Caller& caller, uint64_t channel_id,
                            std::shared_ptr<ChannelHolder> holder);
  // The hold ended (the application went away or closed the channel):
  // closes the channel with reason and tells the peer.
  void Unhold(uint64_t channel_id, uint64_t token, const std::string& reason);
  // The application (or an admin) closes the channel (reason as the peer
  // will see it). OK for an ended channel; NOT_FOUND for an unknown id (or
  // one the caller does not reach).
  Status Release(const Caller& caller, uint64_t channel_id, const std::string& reason);
  // The library's account of a channel's rails (rdmad.v1.ReportChannel):
  // bytes, up, reason for each of the record's rails, in order. NOT_FOUND
  // for a channel the caller does not own; INVALID_ARGUMENT for another
  // number of rails. Of a channel to this daemon itself, only the
  // initiating process's account is kept.
  // changes: a line for each rail that went out or came back ("channel
  // 0x... to PEER: rail rxe1 -> rxe1 out: WHY"), for the event bus.
  Status ReportRails(const Caller& caller, uint64_t channel_id,
                     const std::vector<ChannelRailRecord>& rails,
                     std::vector<std::string>* changes = nullptr);
  // The library's account of its channels' traffic (rdmad.v1.ReportTraffic,
  // broker_traffic.cc): each channel's totals replace its record's, and
  // each Connect's time goes to the ledger under the channel's peer and
  // service. Returns how many entries were skipped: a channel the caller
  // does not own (or the accepting side of a channel to itself, as with
  // ReportRails), or totals below the record's (an older report).
  struct ReportedTraffic {
    uint64_t channel_id = 0;
    TrafficTotals totals;
  };
  struct ReportedConnect {
    uint64_t channel_id = 0;
    bool pooled = false;
    uint64_t duration_ns = 0;
  };
  size_t ReportTraffic(const Caller& caller, const std::vector<ReportedTraffic>& channels,
                       const std::vector<ReportedConnect>& connects);
  // Every (peer, service)'s totals, the ended channels' kept (/metrics).
  TrafficView Traffic() const;
  // A peer daemon's CloseChannel. INVALID_ARGUMENT for channel id 0 or a
  // malformed instance id; NOT_FOUND unless the channel is shared with
  // call.initiator_instance; OK for an ended channel.
  Status OnCloseChannel(const CloseChannelCall& call) override;
  // The peer daemon instance_id (named name in the log) was lost: every
  // channel with it fails with "peer daemon PEER lost: WHY", PEER as the
  // channel's record names it.
  void OnPeerLost(const std::string& instance_id, const std::string& name, const std::string& why);
  // The peer's Session stream to this daemon ended: OnPeerLost.
  void OnSessionStreamLost(const std::string& instance_id, const std::string& host_name) override {
    OnPeerLost(instance_id, host_name, "its session to this daemon ended");
  }
  // The local RDMA path under some channels is gone (the port left ACTIVE,
  // the device or the GID was removed): every channel planned on device
  // (port 0: any port; gid "": any GID) that is not TCP fails with why, and
  // the peer is told. Returns how many failed.
  size_t OnPathLost(const std::string& device, int port, const std::string& gid,
                    const std::string& why);
  // The daemon is stopping: channels not yet established fail with "rdmad
  // on HOST stopped" (peers told); established ones are left to their
  // applications, which re-attach to the next rdmad; lifelines that end
  // from now on close nothing. Later opens are UNAVAILABLE.
  void Shutdown();

  // --- Restarts (ChannelReattach) ---
  // The lease of a channel past its handshake (transport: the endpoint's,
  // when the record has none yet). NOT_FOUND for an unknown id.
  StatusOr<ChannelLease> LeaseOf(uint64_t channel_id,
                                 EndpointKind transport = EndpointKind::kUnknown) const;
  // Seals and opens the leases' bytes (the RPC edge serializes them).
  const LeaseSealer& lease_sealer() const { return *options_.lease_sealer; }
  // Takes back a channel an application held before this daemon started:
  // it is established again, and reclaimed from the peer daemon (now, and
  // from the sweeper until peer_grace). OK when the id is known already;
  // NOT_FOUND when the lease was given by this very instance (the channel
  // ended here), or is not the caller's (another uid's lease, or a channel
  // known and owned by another uid); INVALID_ARGUMENT for a malformed lease;
  // RESOURCE_EXHAUSTED when the caller is at its channel quotas (a channel
  // taken back counts as one opened).
  Status Adopt(const Caller& caller, uint64_t channel_id, const ChannelLease& lease);
  // A restarted peer daemon takes channel_id back. INVALID_ARGUMENT for
  // channel id 0 or malformed instance ids; NOT_FOUND (saying why) unless
  // the channel is open here and shared with call.previous_instance.
  Status OnReclaimChannel(const ReclaimChannelCall& call) override;
  // The peer daemon instance_id has a session up again: its channels that
  // were waiting go on.
  void OnPeerBack(const std::string& instance_id);
  // SessionUser: a session up is OnPeerBack, down (or mismatched, or its
  // circuit open) OnPeerLost; a peer's ChannelClosed is OnCloseChannel; a
  // session is in use while channels with it are (HasChannelsWith).
  void OnSessionState(const PeerSnapshot& peer) override;
  void OnSessionEvent(const PeerSnapshot& peer, const PeerEvent& event) override;
  bool UsesSession(const PeerSnapshot& peer) const override;
  // New limits (a config reload); channels already open stay.
  void SetLimits(size_t max_channels, size_t max_channels_per_peer);
  void SetOwnerLimits(const OwnerLimits& limits);
  // Whether caller may have channel_ids too (an acceptor's, before it
  // accepts; already counted as offered to it): RESOURCE_EXHAUSTED naming
  // the limit otherwise.
  Status AdmitChannels(const Caller& caller, const std::vector<uint64_t>& channel_ids) const;
  // Expires plans and unheld channels, drops old ended entries.
  void Sweep();
  // Sweeps every period on a thread of its own until destruction.
  void StartSweeper(std::chrono::milliseconds period = std::chrono::milliseconds(1000));

  std::vector<ChannelRecord> Channels() const;
  // Whether a channel with this peer (its session's name or address, or
  // its daemon's instance id) has not ended, or ended and the peer is still
  // to be told: the peer's session is in use. (Telling the peer names the
  // session again: it is used from then on.)
  bool HasChannelsWith(const std::string& name, const std::string& address,
                       const std::string& instance_id) const;
  // The channels caller reaches: its uid's, or all for an admin.
  std::vector<ChannelRecord> ChannelsFor(const Caller& caller) const;
  // Connects' durations and the handshakes' failures so far (/metrics).
  HandshakeCounts handshake_counts() const { return stats_.Snapshot(); }

 private:
  using Entry = ChannelTable::Entry;

  std::vector<ChannelEnding> SweepLocked(SteadyTime now);  // the table locked
  // Sweeps, tells what ended and asks the peers for the channels queued.
  void SweepAndTell(std::unique_lock<std::mutex>& lock);

  const BrokerOptions options_;
  ServiceRegistry services_;
  ChannelTeller teller_;
  ChannelTable table_;
  ChannelHandshake handshake_;
  ChannelReattach reattach_;
  HandshakeStats stats_;
  std::condition_variable sweep_cv_;  // with the table's lock
  std::thread sweeper_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_BROKER_H_
