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
// Restarts (broker_reattach.cc; docs/channels.md, "When rdmad restarts"):
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
#include "daemon/broker/channel_limits.h"
#include "daemon/broker/channel_machine.h"
#include "daemon/broker/channel_record.h"
#include "daemon/broker/channel_teller.h"
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

using BrokerClock = std::chrono::steady_clock;

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
};

struct PlannedChannel {
  std::vector<uint64_t> channel_ids;  // one, or a batch with one plan
  ChannelPlan plan;
  std::string peer_address;  // the peer's IP the plan was made for
};

class Broker;

// The inventory changes that take a local RDMA path away, passed to
// broker.OnPathLost: a device removed, a port no longer ACTIVE (its state in
// inventory, the snapshot after the changes), a GID removed. Returns how
// many channels failed.
size_t FailLostPaths(Broker& broker, const Inventory& inventory,
                     const std::vector<InventoryChange>& changes);

// A daemon's instance id: 32 lower-case hex digits.
bool IsInstanceId(const std::string& id);

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
  // The initiator's second call (broker_handshake.cc): relays the
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

  // --- Restarts (broker_reattach.cc) ---
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
  // its daemon's instance id) has not ended: the peer's session is in use.
  // (Telling the peer that one ended names the session again.)
  bool HasChannelsWith(const std::string& name, const std::string& address,
                       const std::string& instance_id) const;
  // The channels caller reaches: its uid's, or all for an admin.
  std::vector<ChannelRecord> ChannelsFor(const Caller& caller) const;

 private:
  // A channel of the table. Its phase is the state machine's
  // (record.state is PublicState(phase), kept by ApplyLocked); the rest are
  // facts beside it, each meaningful in the phases its comment names.
  struct Entry {
    ChannelRecord record;
    ChannelPhase phase = ChannelPhase::kPlanned;
    std::string peer_key;           // what BrokerNetwork::FindPeer was given
    BrokerClock::time_point since;  // when the phase last changed
    bool held = false;              // a hold was registered once (hold_expired)
    bool peer_told = false;         // ended: the peer knows
    std::map<uint64_t, std::shared_ptr<ChannelHolder>> holders;
    std::shared_ptr<PendingOpen> open;  // opening: the initiator's Connect waits
    std::string lost_why;               // peer_lost: why the peer daemon was lost
    // peer_lost, reattaching: the transport reason, shown again once the
    // channel is established again.
    std::string transport_reason;
    // reattaching, confirming: a ReclaimChannel is in flight (one at a
    // time; the sweeper sends the next), and the instance it names as ours.
    bool reclaim_in_flight = false;
    std::string previous_self;
  };
  // What to tell, without the lock, once a channel ended (ChannelTeller).
  // EndLocked makes one; LateTell the one for a channel that ended
  // before, whose peer is still to be told.
  using Ending = ChannelEnding;

  // RDMA if a path resolves and no TCP reason is given (nor forced by the
  // config); TCP with the reason otherwise.
  ChannelPlan Plan(const std::string& peer_ip, const std::string& tcp_reason) const;
  // The local RDMA path of plan, if it is one, into record.
  static void SetPath(const ChannelPlan& plan, ChannelRecord* record);
  // Where the acceptor's TCP fallback listens for the initiator at peer_ip.
  std::string TcpBindHost(const std::string& peer_ip) const;
  // Fails the channel (a handshake that could not start), as Deliver tells.
  void Fail(uint64_t channel_id, const std::string& reason);
  // mu_ held. Moves entry by event as the table says (changing since when
  // the phase changes); false, and nothing changes, when the table has no
  // such transition.
  bool ApplyLocked(Entry& entry, ChannelEvent event);
  // Connect's tail: the answer checked against what happened meanwhile.
  StatusOr<ChannelEndpoints> Conclude(const std::vector<uint64_t>& ids, const std::string& peer_key,
                                      StatusOr<ChannelEndpoints> reply);
  // mu_ held. Connect's first step: the channels, all the caller's and
  // planned with one peer and service, move to opening; their call.
  StatusOr<OpenChannelCall> OpenLocked(const Caller& caller,
                                       const std::vector<ChannelOpening>& channels,
                                       std::string* peer_key);
  // mu_ held. OnOpenChannel's tail: the channels as the listener answered.
  std::vector<Ending> AnsweredLocked(const std::vector<uint64_t>& ids,
                                     StatusOr<ChannelEndpoints>* answer);

  // mu_ held. Ends entry by event (close, fail, or an expiry: nothing when
  // it already ended or the event does not end it) and returns what to
  // tell; tell_peer: the peer gets peer_reason.
  std::optional<Ending> EndLocked(Entry& entry, ChannelEvent event, const std::string& reason,
                                  bool tell_peer, const std::string& peer_reason);
  static Ending LateTell(const Entry& entry, const std::string& peer_reason);
  std::optional<Ending> LetGoLocked(Entry& entry, const std::string& why);  // mu_ held
  void Deliver(std::vector<Ending> endings) { teller_.Deliver(std::move(endings)); }
  std::vector<Ending> SweepLocked(BrokerClock::time_point now);
  BrokerClock::time_point Now() const { return options_.clock->Now(); }
  // Asks the peer daemon, if a link is up, whether it still has the
  // reattaching or confirming channel (ReclaimChannel).
  void TryReclaim(uint64_t channel_id);
  // The peer's answer to a reclaim sent to its instance peer_instance.
  void Reclaimed(uint64_t channel_id, const std::string& peer_instance, const Status& answer);
  // mu_ held: event moves e back to established (or on, to confirming):
  // its transport reason is shown again.
  void ResumeLocked(Entry& e, ChannelEvent event);
  // The entry channel_id if caller may act on it as its owner (admin:
  // also as an admin); null otherwise (unknown or another uid's).
  Entry* FindOwnedLocked(const Caller& caller, uint64_t channel_id, bool admin);  // mu_ held
  // Every channel's record, for the limits: a view of the table (mu_
  // held while it is used).
  class RecordView {
   public:
    using Table = std::map<uint64_t, Entry>;
    struct Iterator {
      Table::const_iterator it;
      const ChannelRecord& operator*() const { return it->second.record; }
      Iterator& operator++() {
        ++it;
        return *this;
      }
      bool operator!=(const Iterator& other) const { return it != other.it; }
    };
    explicit RecordView(const Table& table) : table_(table) {}
    Iterator begin() const { return {table_.begin()}; }
    Iterator end() const { return {table_.end()}; }

   private:
    const Table& table_;
  };
  RecordView RecordsLocked() const { return RecordView(channels_); }

  const BrokerOptions options_;
  ServiceRegistry services_;
  ChannelTeller teller_;
  mutable std::mutex mu_;
  std::map<uint64_t, Entry> channels_;  // guarded by mu_
  uint64_t next_token_ = 1;             // guarded by mu_
  bool stopping_ = false;               // guarded by mu_
  std::vector<uint64_t> reclaim_;       // adopted channels to reclaim; guarded by mu_
  ChannelLimits limits_;                // guarded by mu_
  std::condition_variable sweep_cv_;
  std::thread sweeper_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_BROKER_H_
