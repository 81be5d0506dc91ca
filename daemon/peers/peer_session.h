// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PeerSession: this daemon's session with one peer daemon, and the state
// machine that keeps it up:
//
//   connecting --Hello ok, stream's first event--> up
//   connecting/up --error, stream end, no heartbeat--> down (retry later)
//   down --backoff (100 ms doubling to 10 s, +-20%)--> next attempt
//   any --Hello says another major version--> version-mismatch (final)
//   down --N failures in a row (CircuitBreaker)--> circuit-open
//   circuit-open --open time up: one probe--> up, or circuit-open again
//   down/circuit-open --Revive (the peer proved it is alive)--> next attempt now
//
// An attempt makes a fresh PeerLink, sends Hello (its round trip is the
// RTT), checks the version and opens the Session stream; while up, Hello is
// re-sent every rtt_interval and the stream must deliver a heartbeat within
// stale_after. While the circuit is open nothing is dialled and link() fails
// fast with UNAVAILABLE. The broker uses link() to call the peer, and hears
// the session's state changes and its channel events as its SessionUser.
//
// Thread safety: snapshot(), link(), SetUser() and DialSoon() may be called
// from any thread, AwaitDial() from any but the worker (it blocks until the
// worker ends the attempt). The state machine (Poll, On*, Revive,
// Shutdown) runs only on PeerSessions' worker; the user is called there,
// without locks held, and must not block.

#ifndef RDMAD_DAEMON_PEERS_PEER_SESSION_H_
#define RDMAD_DAEMON_PEERS_PEER_SESSION_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "daemon/peers/backoff.h"
#include "daemon/peers/circuit_breaker.h"
#include "daemon/peers/peer_link.h"
#include "daemon/peers/peer_protocol.h"
#include "rdmad/status.h"

namespace rdmad {

// A session's state as the daemon keeps it (the local API's rdmad::PeerState,
// in the client library, is its public twin with an "unspecified" value;
// daemon/rpc/peer_convert.cc maps one to the wire).
enum class PeerSessionState {
  kConnecting = 1,
  kUp = 2,
  kDown = 3,
  kVersionMismatch = 4,
  kCircuitOpen = 5,  // failing too often: not dialled until circuit_open_until
  kIdle = 6,         // a cluster member with no session yet (PeerSessions)
};

// "connecting", "up", "down", "version-mismatch", "circuit-open", "idle".
std::string_view PeerSessionStateName(PeerSessionState state);

// Why a session exists: a [[peers]] entry, a cluster member (etcd), or a
// channel asked for an address no session had.
enum class PeerOrigin { kConfigured, kDiscovered, kOnDemand };
// "configured", "discovered", "on demand".
const char* PeerOriginName(PeerOrigin origin);

struct PeerSnapshot {
  std::string name;     // the [[peers]] or member name; the address when on demand
  std::string address;  // HOST:PORT as dialled
  bool configured = true;
  PeerOrigin origin = PeerOrigin::kConfigured;
  PeerSessionState state = PeerSessionState::kConnecting;
  double rtt_ms = 0;                // last Hello round trip; 0 before the first
  std::string last_error;           // "" while up
  std::optional<PeerHello> remote;  // the peer's last Hello
  double state_seconds = 0;         // time in this state
  int failures = 0;                 // failed attempts since the last up
  // An attempt is under way (or due now: Revive) while not up: the first
  // one (state connecting) or a re-dial (down); a channel waits for it.
  bool dialling = false;
  // While circuit-open: when the half-open probe is due (wall clock).
  std::chrono::system_clock::time_point circuit_open_until{};
  // The peer's clock minus ours, from its last heartbeat (its time, plus
  // half the round trip, against ours on receipt); none before the first.
  std::optional<double> clock_offset_ms;
};

struct PeerSessionOptions {
  Backoff::Options backoff;  // 100 ms .. 10 s, +-20%
  std::chrono::milliseconds hello_timeout{3000};
  std::chrono::milliseconds rtt_interval{5000};  // Hello again while up
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds stale_after{5000};  // no event this long: down
  CircuitBreaker::Options breaker;              // 5 failures, open 30 s
  // Time and jitter (not owned; outlives the sessions' work): tests pass a
  // ManualClock.
  Clock* clock = &Clock::System();
};

// The sessions' worker queue: the transport's completions are posted here
// and run on the worker thread; once the sessions stop, work is dropped.
class SessionWorker {
 public:
  // One piece of work: the queue holds every kind of continuation, hence
  // type-erased.
  using Work = std::function<void()>;
  virtual ~SessionWorker() = default;
  virtual void Post(Work work) = 0;
};

// What the sessions share; the transport's callbacks keep it alive, so it
// may outlive PeerSessions (the worker then drops the work).
struct PeerSessionEnv {
  PeerConnector* connector = nullptr;
  const LocalHelloSource* hello = nullptr;  // outlives the sessions' work
  PeerSessionOptions options;
  std::shared_ptr<SessionWorker> worker;
};

// SessionUser: what uses the sessions to other daemons (the broker): told
// of every session's state and events, and asked whether a session carries
// channels (a session opened on first use closes after
// daemon.peer_idle_close_s unused). The peers own this seam and the broker
// implements it; the lifecycle hands the one to the other. Called on the
// sessions' worker thread; must not block.
class SessionUser {
 public:
  virtual ~SessionUser() = default;
  virtual void OnSessionState(const PeerSnapshot& peer) = 0;
  virtual void OnSessionEvent(const PeerSnapshot& peer, const PeerEvent& event) = 0;
  virtual bool UsesSession(const PeerSnapshot& peer) const = 0;
};

class PeerSession : public std::enable_shared_from_this<PeerSession> {
 public:
  PeerSession(std::string name, std::string address, PeerOrigin origin,
              std::shared_ptr<const PeerSessionEnv> env);
  ~PeerSession();

  const std::string& name() const { return name_; }
  const std::string& address() const { return address_; }
  bool configured() const { return origin_ == PeerOrigin::kConfigured; }
  PeerOrigin origin() const { return origin_; }
  PeerSnapshot snapshot() const;

  // The link while up; UNAVAILABLE "peer X: circuit open until T after N
  // failures: ..." while the circuit is open; FAILED_PRECONDITION "peer X is
  // down: ..." otherwise.
  StatusOr<std::shared_ptr<PeerLink>> link() const;

  // Any thread but the worker. Waits while the session is dialling (its
  // first attempt, or a re-dial: PeerSnapshot::dialling) until that attempt
  // ends or until (real time); returns at once for one up, down between
  // attempts or stopped. True when it is no longer dialling.
  bool AwaitDial(std::chrono::steady_clock::time_point until) const;

  // Tells user (which must outlive the session) of its state changes and
  // the peer's stream events from now on; null: nobody.
  void SetUser(SessionUser* user);

  // When the session was last used (PeerSessions closes sessions opened on
  // first use that go unused); any thread.
  void Touch(SteadyTime now) { last_used_.store(now.time_since_epoch().count()); }
  SteadyTime last_used() const { return SteadyTime(SteadyTime::duration(last_used_.load())); }

  // Worker only. Does what is due at now; returns when to be polled next.
  SteadyTime Poll(SteadyTime now);
  // Worker only. The peer proved it is alive (its Hello or Session to this
  // daemon, its member record; why says which): a session waiting out its
  // backoff or an open circuit closes the circuit and dials at once; one
  // connecting or up is left alone. Returns whether it dials again.
  bool Revive(SteadyTime now, const std::string& why);
  // Any thread, before posting Revive: a session down (or circuit-open)
  // says it is dialling from now, so that a channel asked for before the
  // worker runs Revive waits for that dial too.
  void DialSoon();
  // Worker only. Ends the session for good (removed, daemon stopping).
  void Shutdown();

 private:
  class StreamObserver;  // peer_session.cc
  enum class Phase { kIdle, kHello, kOpening, kUp, kStopped };

  void StartAttempt(SteadyTime now);
  void SendHello(SteadyTime now);
  void OnHello(uint64_t attempt, StatusOr<PeerHello> result, SteadyTime at);
  void OnEvent(uint64_t attempt, const PeerEvent& event, SteadyTime at);
  void OnEnd(uint64_t attempt, const Status& status, SteadyTime at);
  void Fail(const std::string& error, SteadyTime now);
  void Teardown();
  void SetState(PeerSessionState state, const std::string& error, SteadyTime now);
  void SetDialling(bool dialling);
  void NotifyState();

  const std::string name_;
  const std::string address_;
  const PeerOrigin origin_;
  const std::shared_ptr<const PeerSessionEnv> env_;  // callbacks hold it too

  mutable std::mutex mu_;                    // guards the snapshot fields and link_
  mutable std::condition_variable dial_cv_;  // the state or dialling_ changed
  PeerSessionState state_ = PeerSessionState::kConnecting;
  std::string last_error_;
  double rtt_ms_ = 0;
  std::optional<double> clock_offset_ms_;  // guarded by mu_
  std::optional<PeerHello> remote_;
  SteadyTime state_since_;
  int failures_ = 0;
  std::chrono::system_clock::time_point open_until_wall_;
  bool probing_ = false;   // the half-open probe is under way
  bool dialling_ = false;  // PeerSnapshot::dialling
  bool stopped_ = false;   // Shutdown
  std::shared_ptr<PeerLink> link_;
  std::atomic<SteadyTime::rep> last_used_{0};

  // Worker only.
  Phase phase_ = Phase::kIdle;
  uint64_t attempt_ = 0;  // completions of older attempts are ignored
  SteadyTime next_attempt_;
  bool hello_in_flight_ = false;
  SteadyTime hello_sent_;
  SteadyTime next_probe_;
  SteadyTime last_event_;
  std::unique_ptr<PeerStream> stream_;
  Backoff backoff_;
  CircuitBreaker breaker_;

  std::atomic<SessionUser*> user_{nullptr};
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_PEER_SESSION_H_
