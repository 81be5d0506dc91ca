// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ChannelLimits: the channel quotas (docs/channels.md, "Pooling" and
// "Local clients"). The daemon's bound all channels and those with one
// peer (limits.max_channels, limits.max_channels_per_peer); a local
// client's and a uid's bound what each holds (OwnerLimits). A check counts
// the channels not ended among the records it is given and answers
// RESOURCE_EXHAUSTED naming the limit, the holder and the count; the
// broker decides when to ask.
//
// Thread safety: a value; the broker keeps it under its lock.

#ifndef RDMAD_DAEMON_BROKER_CHANNEL_LIMITS_H_
#define RDMAD_DAEMON_BROKER_CHANNEL_LIMITS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "daemon/broker/channel_record.h"
#include "daemon/clients/caller.h"
#include "daemon/clients/quota_refusals.h"
#include "rdmad/status.h"

namespace rdmad {

// What one local client (a process) and one uid may hold at once (0: no
// bound; limits.max_channels_per_client and the rest): channels not ended,
// and of them the ones planned but not connected yet.
struct OwnerLimits {
  size_t channels_per_client = 0;
  size_t channels_per_uid = 0;
  size_t plans_per_client = 0;
  size_t plans_per_uid = 0;
};

class ChannelLimits {
 public:
  // host_name: this daemon's, for the messages; refusals (may be null,
  // outlives this) counts each refusal by its limit's key.
  ChannelLimits(std::string host_name, size_t max_channels, size_t max_channels_per_peer,
                QuotaRefusals* refusals = nullptr)
      : host_name_(std::move(host_name)),
        max_channels_(max_channels),
        max_channels_per_peer_(max_channels_per_peer),
        refusals_(refusals) {}

  // New limits (a config reload); channels already open stay.
  void SetDaemonLimits(size_t max_channels, size_t max_channels_per_peer) {
    max_channels_ = max_channels;
    max_channels_per_peer_ = max_channels_per_peer;
  }
  void SetOwnerLimits(const OwnerLimits& limits) { owner_ = limits; }

  // Whether `adding` more channels with peer pass the daemon's limits;
  // records: every channel's (ChannelRecord&s, ended ones included).
  template <typename Records>
  Status CheckDaemon(const Records& records, const std::string& peer, size_t adding) const {
    size_t live = 0, with_peer = 0;
    for (const ChannelRecord& r : records) {
      if (ChannelEnded(r.state)) continue;
      ++live;
      if (r.peer == peer) ++with_peer;
    }
    return JudgeDaemon(live, with_peer, peer, adding);
  }

  // Whether `adding` more channels (planning: plans, that is channels not
  // connected yet) pass caller's client's and uid's limits. The daemon
  // itself has none. The channels `except` are not counted (already
  // counted as offered to the caller).
  template <typename Records>
  Status CheckOwner(const Records& records, const Caller& caller, bool planning, size_t adding,
                    const std::vector<uint64_t>& except = {}) const {
    if (caller.self) return Status::Ok();
    // Sorted once: a batch's 64 ids looked up for each record, not scanned.
    std::vector<uint64_t> skip = except;
    std::sort(skip.begin(), skip.end());
    size_t client = 0, uid = 0;
    for (const ChannelRecord& r : records) {
      if (ChannelEnded(r.state) || (planning && r.state != ChannelState::kPlanned)) continue;
      if (caller.Is(r.owner_uid) || caller.Is(r.self_acceptor_uid)) {
        if (!skip.empty() && std::binary_search(skip.begin(), skip.end(), r.channel_id)) continue;
        ++uid;
        if (r.owner_pid == caller.pid) ++client;
      }
    }
    return JudgeOwner(caller, planning, client, uid, adding);
  }

 private:
  Status JudgeDaemon(size_t live, size_t with_peer, const std::string& peer, size_t adding) const;
  Status JudgeOwner(const Caller& caller, bool planning, size_t client, size_t uid,
                    size_t adding) const;

  std::string host_name_;
  size_t max_channels_;
  size_t max_channels_per_peer_;
  OwnerLimits owner_;
  QuotaRefusals* refusals_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_CHANNEL_LIMITS_H_
