// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PeerInbound is the serving side of peer sessions, as the peer server
// (daemon/rpc/peer_service.cc) sees it: it answers Hello with this
// daemon's own, and runs every Session stream other daemons keep open to
// this one: a heartbeat at once and then every heartbeat_interval_ms, and
// (for the broker, later) events sent to one peer with Send(). A stream is
// written one event at a time; a peer that stops reading while
// kMaxQueued events wait is ended with RESOURCE_EXHAUSTED, and heartbeats
// are skipped, not queued, while a write is pending. Close() (daemon
// stopping) ends every stream with UNAVAILABLE and refuses new ones.
//
// Thread safety: every method may be called from any thread. An
// InboundStream's OnWriteDone/Cancel come from the RPC runtime; after the
// writer's Finish has been called the stream makes no further writer calls.

#ifndef RDMAD_DAEMON_PEERS_PEER_INBOUND_H_
#define RDMAD_DAEMON_PEERS_PEER_INBOUND_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "daemon/events/bounded_stream.h"
#include "daemon/peers/channel_endpoint.h"
#include "daemon/peers/instance_registry.h"
#include "daemon/peers/peer_identity.h"
#include "daemon/peers/peer_protocol.h"
#include "daemon/peers/peer_session.h"
#include "rdmad/status.h"

namespace rdmad {

class PeerInbound;

// Where an inbound stream's events go (a gRPC write reactor in the daemon);
// after a Write the writer calls InboundStream::OnWriteDone.
class PeerStreamWriter : public BoundedStream<PeerEvent>::Writer {};

class InboundStream : public std::enable_shared_from_this<InboundStream> {
 public:
  InboundStream(PeerInbound* inbound, PeerStreamWriter* writer);
  ~InboundStream();

  // Checks the request (INVALID_ARGUMENT; FAILED_PRECONDITION for another
  // major version; UNAVAILABLE when stopping, each ending the stream), then
  // registers the stream and writes the first heartbeat.
  // identity: the caller's certificate (docs/security.md).
  void Start(const SessionOpen& open, const std::string& from, const PeerIdentity& identity = {});
  // The writer finished one write (ok=false: the peer is gone).
  void OnWriteDone(bool ok);
  // The peer cancelled the call (or the server is shutting down).
  void Cancel();
  // Unregisters; the reactor calls it when gRPC is done with the call.
  void Detach();

  // For PeerInbound.
  bool Enqueue(PeerEvent event);
  SteadyTime Heartbeat(SteadyTime now);
  void Close(const Status& status);
  const std::string& instance_id() const { return open_.instance_id; }

 private:
  PeerInbound* inbound_;
  BoundedStream<PeerEvent> stream_;
  SessionOpen open_;
  std::string from_;
  std::mutex mu_;
  uint64_t id_ = 0;            // registration, 0 when not registered; guarded by mu_
  uint64_t sequence_ = 0;      // numbered in write order, under stream_'s lock
  SteadyTime next_heartbeat_;  // guarded by mu_
};

// InboundChannels: what other daemons' channel calls ask of this daemon's
// channel broker. The peers own this seam and the broker implements it
// (Broker); the lifecycle hands the broker to PeerInbound::SetChannels.
// Called on the RPC runtime's threads: OnOpenChannel may block until the
// listener answers, the others must not block.
class InboundChannels {
 public:
  virtual ~InboundChannels() = default;
  // A peer's OpenChannel, with the caller's IP.
  virtual StatusOr<ChannelEndpoints> OnOpenChannel(const OpenChannelCall& call,
                                                   const std::string& peer_ip) = 0;
  virtual Status OnCloseChannel(const CloseChannelCall& call) = 0;
  // A restarted peer taking its channels back.
  virtual Status OnReclaimChannel(const ReclaimChannelCall& call) = 0;
  // The last Session stream of peer daemon instance_id ended (not when
  // this daemon is stopping): that peer's session to this daemon is gone.
  virtual void OnSessionStreamLost(const std::string& instance_id,
                                   const std::string& host_name) = 0;
};

// Hears of every Hello that passes (a peer daemon proved it is alive), with
// the caller's IP. Called on the RPC runtime's threads; must not block.
class PeerAliveListener {
 public:
  virtual ~PeerAliveListener() = default;
  virtual void OnPeerAlive(const PeerHello& remote, const std::string& peer_ip) = 0;
};

class PeerInbound {
 public:
  static constexpr size_t kMaxQueued = 256;

  // hello: what this daemon answers (must outlive the inbound side).
  // clock: the heartbeats' time; a callback so that tests move it.
  explicit PeerInbound(const LocalHelloSource& hello, const Clock& clock = Clock::System());
  ~PeerInbound();  // Close()

  // Starts the heartbeat thread.
  void Start();
  // Ends every stream with UNAVAILABLE and stops the heartbeat thread.
  void Close();

  // Every call from a peer comes with its certificate's identity (none
  // without TLS): a name it claims that the certificate does not cover is
  // PERMISSION_DENIED, logged. An instance id belongs to the node whose
  // Hello or Session first claimed it (InstanceRegistry): a Hello or
  // Session claiming another node's instance is PERMISSION_DENIED, and so
  // is a CloseChannel or ReclaimChannel naming an instance that never said
  // Hello, or one of a node the certificate does not cover; a
  // ReclaimChannel's previous instance must be of the caller's node. This
  // daemon's own instance speaks only from this process
  // (identity.this_process): a channel to itself, its own Hello.

  // A peer's Hello: INVALID_ARGUMENT when malformed, else this daemon's.
  StatusOr<PeerHello> Hello(const PeerHello& remote, const std::string& from,
                            const PeerIdentity& identity = {});

  // A stream object for a Session call; the reactor keeps it and calls
  // Start on it.
  std::shared_ptr<InboundStream> NewStream(PeerStreamWriter* writer);

  // Sends event on the Session stream(s) of the daemon instance_id (the
  // broker's ChannelClosed); NOT_FOUND when it has none open.
  Status Send(const std::string& instance_id, const PeerEvent& event);

  // The channel broker that peers' channel calls reach (set once at start,
  // before serving; not owned: it outlives serving). Without one, they are
  // UNAVAILABLE.
  void SetChannels(InboundChannels* channels);
  // A peer's OpenChannel; from is the transport's peer ("ipv4:1.2.3.4:5").
  // Blocks until the listener answers.
  StatusOr<ChannelEndpoints> OpenChannel(const OpenChannelCall& call, const std::string& from,
                                         const PeerIdentity& identity = {});
  Status CloseChannel(const CloseChannelCall& call, const PeerIdentity& identity = {});
  Status ReclaimChannel(const ReclaimChannelCall& call, const PeerIdentity& identity = {});

  // Tells listener of every Hello that passes; not owned, outlives this.
  void SetAliveListener(PeerAliveListener* listener);

  // This daemon's own instance id (its Hello's).
  std::string own_instance() const { return LocalHello().instance_id; }

  size_t stream_count() const;
  // Writes the heartbeats due at the clock's now; returns the next due time.
  SteadyTime Tick();

 private:
  friend class InboundStream;
  uint64_t Register(const std::shared_ptr<InboundStream>& stream);  // 0 when closed
  void Unregister(uint64_t id, const SessionOpen& open);
  SteadyTime Now() const { return clock_.Now(); }
  PeerHello LocalHello() const { return hello_.LocalHello(); }
  // The node instance_id belongs to, if identity covers it (see above);
  // what is the call, for the log.
  // Binds this daemon's own instance to its host name, once: no peer may
  // claim it.
  void ClaimOwn();
  // PERMISSION_DENIED (logged) when instance_id is this daemon's own and
  // the call is not from this process.
  Status CheckOwn(const PeerIdentity& identity, const std::string& instance_id,
                  const std::string& what, const std::string& from);
  StatusOr<std::string> CheckInstance(const PeerIdentity& identity, const std::string& instance_id,
                                      const std::string& what);
  // Logs a refused call and returns refusal.
  static Status Refused(const std::string& what, const std::string& from, Status refusal);

  const LocalHelloSource& hello_;
  const Clock& clock_;  // not owned; outlives this
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;         // guarded by mu_
  uint64_t next_id_ = 1;        // guarded by mu_
  uint64_t registrations_ = 0;  // wakes the ticker for a new stream; guarded by mu_
  // A registered stream, until its Unregister (which its destructor makes
  // sure of): the instance is kept apart from the stream, which may already
  // be gone while it unregisters.
  struct StreamEntry {
    std::weak_ptr<InboundStream> stream;
    std::string instance_id;
  };
  std::map<uint64_t, StreamEntry> streams_;  // guarded by mu_
  std::set<std::string> greeted_;            // instance ids logged once; guarded by mu_
  InstanceRegistry instances_;               // this daemon's own instance first (ClaimOwn)
  std::once_flag own_claimed_;
  std::thread ticker_;
  // The broker for a peer's call: UNAVAILABLE while stopping or without one.
  StatusOr<InboundChannels*> Broker();

  InboundChannels* channels_ = nullptr;  // guarded by mu_
  PeerAliveListener* alive_ = nullptr;   // guarded by mu_
};

// The IP of a transport peer string: "ipv4:127.0.0.1:5000" -> "127.0.0.1",
// "ipv6:[::1]:5000" or "ipv6:%5B::1%5D:5000" -> "::1".
std::string PeerIpOf(const std::string& from);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_PEER_INBOUND_H_
