// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// CircuitBreaker: stops a peer session from dialling a peer that keeps
// failing. After `failures` consecutive failed attempts spanning at least
// `min_span` (so that a peer still starting, dialled with a short backoff,
// is not cut off after a second) the breaker opens: no attempt is made for
// `open_for`. When that time is up one probe attempt
// is allowed (half-open); its success closes the breaker, its failure opens
// it again for another `open_for`. failures = 0 never opens it.
//
//   closed --failures in a row--> open --open_for--> half-open
//   half-open --success--> closed;  half-open --failure--> open
//   any --Reset (the peer proved it is alive)--> closed
//
// Time is passed in, so tests drive it with a fake clock.
//
// Thread safety: a value; not safe for concurrent use (PeerSession calls it
// only on its worker).

#ifndef RDMAD_DAEMON_PEERS_CIRCUIT_BREAKER_H_
#define RDMAD_DAEMON_PEERS_CIRCUIT_BREAKER_H_

#include <chrono>
#include <string_view>

namespace rdmad {

class CircuitBreaker {
 public:
  using Time = std::chrono::steady_clock::time_point;
  enum class State { kClosed, kOpen, kHalfOpen };

  struct Options {
    int failures = 5;  // 0: never open
    std::chrono::milliseconds open_for{30000};
    std::chrono::milliseconds min_span{0};  // first to last failure of the run
  };

  explicit CircuitBreaker(Options options) : options_(options) {}

  // A failed attempt at now. Returns true when this failure opens the
  // breaker (the N-th in a row, or the half-open probe's failure).
  bool OnFailure(Time now);
  // A successful attempt: closes the breaker. Returns true when it was not
  // closed before (the probe succeeded).
  bool OnSuccess();
  // The peer proved it is alive some other way (its Hello to us, its
  // member record): closes the breaker and forgets the failures, like a
  // success. Returns true when it was not closed before.
  bool Reset() { return OnSuccess(); }
  // Whether an attempt may start at now. When the open time is up this
  // moves to half-open (the probe) and returns true.
  bool Allow(Time now);

  State state() const { return state_; }
  // When the open breaker allows the probe; meaningful while not closed.
  Time open_until() const { return open_until_; }
  // Failed attempts since the last success.
  int consecutive_failures() const { return consecutive_; }
  const Options& options() const { return options_; }

 private:
  Options options_;
  State state_ = State::kClosed;
  int consecutive_ = 0;
  Time first_failure_{};  // of the current run of failures
  Time open_until_{};
};

// "closed", "open", "half-open".
std::string_view CircuitStateName(CircuitBreaker::State state);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_CIRCUIT_BREAKER_H_
