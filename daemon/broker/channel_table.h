// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ChannelTable: the broker's channels by id and the one lock over them.
// Each entry is in a phase of the state machine (channel_machine.h); a
// phase changes only through ApplyLocked, and a change that ends the
// channel through EndLocked, which also collects what is to be told of it
// (a ChannelEnding, told by ChannelTeller once the lock is released). The
// broker's parts (the handshake, re-attaching, the lifecycle) each work on
// the table under its lock; none keeps an entry past it.
//
// Thread safety: Lock() guards the entries, the limits and the stopping
// mark; a method named ...Locked must be called with it held. host_name,
// Now and WallNow may be called without it.

#ifndef RDMAD_DAEMON_BROKER_CHANNEL_TABLE_H_
#define RDMAD_DAEMON_BROKER_CHANNEL_TABLE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "daemon/broker/channel_limits.h"
#include "daemon/broker/channel_machine.h"
#include "daemon/broker/channel_record.h"
#include "daemon/broker/channel_teller.h"
#include "daemon/broker/traffic_ledger.h"
#include "daemon/clients/caller.h"
#include "rdmad/status.h"

namespace rdmad {

class ChannelTable {
 public:
  // A channel of the table. Its phase is the state machine's
  // (record.state is PublicState(phase), kept by ApplyLocked); the rest are
  // facts beside it, each meaningful in the phases its comment names.
  struct Entry {
    ChannelRecord record;
    ChannelPhase phase = ChannelPhase::kPlanned;
    std::string peer_key;    // what BrokerNetwork::FindPeer was given
    SteadyTime since;        // when the phase last changed
    bool held = false;       // a hold was registered once (hold_expired)
    bool peer_told = false;  // ended: the peer knows
    // Ended, and the peer is still to be told (from the ending made under
    // the lock until ChannelTeller has named the peer's session, ToldPeer):
    // the session stays in use meanwhile (Broker::HasChannelsWith).
    bool telling = false;
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
  using Entries = std::map<uint64_t, Entry>;

  // Every channel's record, for the limits: a view of the table (the lock
  // held while it is used).
  class RecordView {
   public:
    struct Iterator {
      Entries::const_iterator it;
      const ChannelRecord& operator*() const { return it->second.record; }
      Iterator& operator++() {
        ++it;
        return *this;
      }
      bool operator!=(const Iterator& other) const { return it != other.it; }
    };
    explicit RecordView(const Entries& entries) : entries_(entries) {}
    Iterator begin() const { return {entries_.begin()}; }
    Iterator end() const { return {entries_.end()}; }

   private:
    const Entries& entries_;
  };

  // clock: not owned, outlives the table.
  ChannelTable(std::string host_name, const Clock* clock, ChannelLimits limits)
      : host_name_(std::move(host_name)), clock_(clock), limits_(std::move(limits)) {}

  std::unique_lock<std::mutex> Lock() const { return std::unique_lock<std::mutex>(mu_); }
  const std::string& host_name() const { return host_name_; }
  SteadyTime Now() const { return clock_->Now(); }
  WallTime WallNow() const { return clock_->WallNow(); }

  // --- The lock held ---
  Entries& EntriesLocked() { return entries_; }
  const Entries& EntriesLocked() const { return entries_; }
  RecordView RecordsLocked() const { return RecordView(entries_); }
  Entry* FindLocked(uint64_t channel_id);
  const Entry* FindLocked(uint64_t channel_id) const;
  // The entry channel_id if caller may act on it as its owner (admin:
  // also as an admin); null otherwise (unknown or another uid's).
  Entry* FindOwnedLocked(const Caller& caller, uint64_t channel_id, bool admin);
  // A new entry channel_id in phase (replacing an ended one), since now.
  Entry& AddLocked(uint64_t channel_id, ChannelPhase phase);
  // Drops an entry; its traffic stays counted in the ledger.
  void EraseLocked(uint64_t channel_id);
  TrafficLedger& LedgerLocked() { return ledger_; }
  TrafficView TrafficLocked() const { return ledger_.View(RecordsLocked()); }

  // Moves entry by event as the machine's table says (changing since when
  // the phase changes); false, and nothing changes, when the table has no
  // such transition.
  bool ApplyLocked(Entry& entry, ChannelEvent event);
  // event moves entry back to established (or on, to confirming): its
  // transport reason is shown again.
  void ResumeLocked(Entry& entry, ChannelEvent event);
  // Ends entry by event (close, fail, or an expiry: nothing when it already
  // ended or the event does not end it) and returns what to tell;
  // tell_peer: the peer gets peer_reason.
  std::optional<ChannelEnding> EndLocked(Entry& entry, ChannelEvent event,
                                         const std::string& reason, bool tell_peer,
                                         const std::string& peer_reason);
  // The application let go of the channel: it closes, and the peer is told.
  // One that already failed here, held once and not yet told, is told now.
  std::optional<ChannelEnding> LetGoLocked(Entry& entry, const std::string& why);
  // What to tell of a channel that ended before: only its peer.
  static ChannelEnding LateTell(Entry& entry, const std::string& peer_reason);
  // ChannelTeller has told the peers that channel_ids ended (their sessions
  // were named); entries gone meanwhile are skipped. Takes the lock once.
  void ToldPeer(const std::vector<uint64_t>& channel_ids);

  ChannelLimits& LimitsLocked() { return limits_; }
  const ChannelLimits& LimitsLocked() const { return limits_; }
  // The daemon is stopping: UNAVAILABLE "rdmad on HOST is stopping" from
  // then on.
  void SetStoppingLocked() { stopping_ = true; }
  bool StoppingLocked() const { return stopping_; }
  Status CheckRunningLocked() const;
  uint64_t NextTokenLocked() { return next_token_++; }

 private:
  const std::string host_name_;
  const Clock* const clock_;
  mutable std::mutex mu_;
  Entries entries_;          // guarded by mu_
  TrafficLedger ledger_;     // guarded by mu_
  ChannelLimits limits_;     // guarded by mu_
  bool stopping_ = false;    // guarded by mu_
  uint64_t next_token_ = 1;  // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_CHANNEL_TABLE_H_
