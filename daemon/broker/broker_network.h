// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// BrokerNetwork: what the broker asks of the rest of the daemon: a path for
// a peer's address (the policy over the inventory) and the peer daemons
// (the peer hub's sessions, this daemon's and theirs). The broker owns the
// seam; the lifecycle implements it over the peer hub and the policy
// (daemon/lifecycle/daemon_broker.cc), the tests and fuzzers with fakes.
// The peers' own calls into the broker go the other way, through
// InboundChannels and SessionUser (daemon/peers).
//
// Thread safety: implementations are called from any thread, with no
// broker lock held, and must outlive the broker.

#ifndef RDMAD_DAEMON_BROKER_BROKER_NETWORK_H_
#define RDMAD_DAEMON_BROKER_BROKER_NETWORK_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "daemon/peers/peer_link.h"
#include "daemon/policy/path_policy.h"
#include "daemon/policy/rail_paths.h"
#include "rdmad/status.h"

namespace rdmad {

// A peer as the broker needs it: its name, the address dialled, the
// instance id of its last Hello ("" before one), and the link (or
// UNAVAILABLE with the session's last error).
struct BrokerPeer {
  std::string name;
  std::string address;  // HOST:PORT
  std::string instance_id;
  StatusOr<std::shared_ptr<PeerLink>> link = Status::Unavailable("no link");
};

class BrokerNetwork {
 public:
  virtual ~BrokerNetwork() = default;

  // The RDMA path to a peer's address (DaemonCore::ResolvePath); NOT_FOUND
  // or another error: none (the channel goes over TCP and says why).
  virtual StatusOr<PathDecision> ResolvePath(const PathRequest& request) const = 0;
  // The rails of a channel on primary (policy/rail_paths.h), ordered by the
  // rail plan of process pid if it has one (0: none); none here.
  virtual ChannelRails RailsFor(const PathDecision& /*primary*/, pid_t /*pid*/) { return {}; }
  // The peer for a [[peers]] name or address; NOT_FOUND for neither.
  // opener: the uid that a session opened now on demand counts against
  // (PlanChannel's caller: RESOURCE_EXHAUSTED past its quota, before any
  // dial); nullopt for the daemon's own lookups.
  virtual StatusOr<BrokerPeer> FindPeer(const std::string& name, std::optional<uid_t> opener) = 0;
  // As FindPeer, for Connect: a session still making its first attempt
  // (opened by PlanChannel for this channel) is waited for, up to timeout.
  virtual StatusOr<BrokerPeer> AwaitPeer(const std::string& name,
                                         std::chrono::milliseconds /*timeout*/) {
    return FindPeer(name, std::nullopt);
  }
  // A link to the peer daemon with this instance id, through an up session
  // of this daemon's (an error: none).
  virtual StatusOr<std::shared_ptr<PeerLink>> LinkToInstance(const std::string& instance_id) = 0;
  // Sends an event on the session stream the daemon instance_id keeps open
  // to this one (PeerInbound::Send).
  virtual Status SendEvent(const std::string& instance_id, const PeerEvent& event) = 0;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_BROKER_NETWORK_H_
