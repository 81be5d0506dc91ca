// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PeerSessions keeps one PeerSession per peer daemon: one per [[peers]]
// entry (followed on reload: added, removed, re-dialled when the address
// changes), one per cluster member that is used, and one per address the
// broker asks for on demand (Peer()). Cluster members are dialled on first
// use, not all at once: a node keeps sessions only to the members it talks
// to, not to every member of a large cluster (docs/cluster.md), and a
// session opened on first use that goes unused (no channel, no new use)
// for the idle-close time is closed again.
// Every session's state machine runs on one worker thread; the transport's
// completions are queued to it, so a session's state changes in one place
// and in order.
//
// Tests construct it without Start() and drive it with RunOnce() and a fake
// clock: nothing then runs on its own.
//
// Thread safety: every public method may be called from any thread, except
// that Start/Stop are called once each, and RunOnce only without Start.

#ifndef RDMAD_DAEMON_PEERS_PEER_SESSIONS_H_
#define RDMAD_DAEMON_PEERS_PEER_SESSIONS_H_

#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/peers/peer_link.h"
#include "daemon/peers/peer_session.h"
#include "rdmad/status.h"

namespace rdmad {

class PeerSessions {
 public:
  // hello: what this daemon says in Hello (asked on the worker; must
  // outlive the sessions).
  PeerSessions(std::shared_ptr<PeerConnector> connector, const LocalHelloSource& hello,
               PeerSessionOptions options = {});
  ~PeerSessions();  // Stop()

  // The sessions' user (the broker; it must outlive them): told of every
  // session's state changes and the channel events on its stream, and
  // asked for sessions opened on first use that have gone unused for the
  // idle-close time whether they still carry channels. Called on the
  // worker, without locks held. Set before the first session is made;
  // without one, nobody is told and no session carries channels.
  void SetUser(SessionUser* user);
  // A session opened on first use (a cluster member, an address) is closed
  // once it has gone this long without use: a member goes back to idle, an
  // address's session is gone until it is named again. A use is Peer()
  // naming it, or channels with it at a check. 0: never (the default).
  void SetIdleClose(std::chrono::milliseconds after);
  // Sessions opened on demand (by address) that one uid may have open at
  // once (limits.max_peer_sessions_per_uid; 0: no limit).
  void SetOnDemandQuota(int per_uid);

  // Starts the worker thread.
  void Start();
  // Ends every session (their streams are cancelled and their links
  // dropped) and stops the worker. Later calls do nothing.
  void Stop();

  // Makes the configured sessions those of peers: new names get a session,
  // missing names lose theirs, a changed address starts over.
  void SetConfiguredPeers(const std::vector<PeerConfig>& peers);

  // Makes the cluster members those of peers. A member has no session
  // (state idle) until Peer() names it. A membership change alone never
  // takes down a session that is up: a member that drops out of the view
  // (its lease expired while etcd was away) or moves to another address
  // keeps its session while the session's own failure detection says it is
  // up, and loses it when that says otherwise; one not up goes at once. A
  // member that appears or comes back is alive: its session, waiting to
  // retry, dials at once (PeerAlive). A name that is also configured keeps
  // its [[peers]] session.
  void SetDiscoveredPeers(const std::vector<PeerConfig>& peers);

  // A peer daemon proved it is alive (its Hello to this daemon, from ip,
  // saying host_name): the sessions to it (named host_name, or whose peer
  // last said it was host_name, or, never up yet, dialling ip) that wait
  // out a backoff or an open circuit dial at once (PeerSession::Revive).
  void PeerAlive(const std::string& host_name, const std::string& ip, const std::string& why);

  // The session for a configured name or a member (opened now if it has
  // none), or for an address (a session of that address, else a new
  // on-demand session named by the address).
  // INVALID_ARGUMENT when it is neither a known name nor an address;
  // FAILED_PRECONDITION after Stop.
  // opener: the uid a new on-demand session counts against (its quota is
  // checked before the session exists: RESOURCE_EXHAUSTED past it).
  StatusOr<std::shared_ptr<PeerSession>> Peer(const std::string& name_or_address,
                                              std::optional<uid_t> opener = std::nullopt);

  // Every peer: configured sessions in config order, then the other
  // sessions, then the members without one (idle).
  std::vector<PeerSnapshot> List() const;
  size_t size() const;  // List().size()
  // Whether some entry of List() has this name or address, without
  // making the list.
  bool Knows(const std::string& name_or_address) const;

  // Without Start (tests): runs the queued completions and what is due at
  // the clock's now; returns when something is due next.
  SteadyTime RunOnce();

 private:
  struct Inbox;  // the worker's queue, shared with the transport callbacks

  void Post(SessionWorker::Work work);
  void WorkerLoop();
  SteadyTime PollAll(SteadyTime now);
  void CloseIdle(SteadyTime now);
  // Closes the sessions of members that left the view once they are not up.
  void CloseDeparted();
  // A discovered session whose member is gone or moved; mu_ held.
  bool Departed(const PeerSession& s) const;
  // Whether a session has this name (a member without one is idle); mu_ held.
  bool HasSessionNamed(const std::string& name) const;
  std::shared_ptr<PeerSession> NewSession(const std::string& name, const std::string& address,
                                          PeerOrigin origin);

  std::shared_ptr<Inbox> inbox_;
  std::shared_ptr<PeerConnector> connector_;
  std::shared_ptr<const PeerSessionEnv> env_;

  mutable std::mutex mu_;
  std::vector<std::shared_ptr<PeerSession>> sessions_;  // guarded by mu_
  std::map<std::string, std::string> members_;          // name -> address; guarded by mu_
  bool stopped_ = false;                                // guarded by mu_
  SessionUser* user_ = nullptr;                         // guarded by mu_
  std::chrono::milliseconds idle_close_{0};             // guarded by mu_
  int on_demand_per_uid_ = 0;                           // guarded by mu_
  // Who opened each on-demand session (by session); guarded by mu_.
  std::map<const PeerSession*, uid_t> openers_;
  std::thread worker_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_PEER_SESSIONS_H_
