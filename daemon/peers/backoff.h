// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Backoff: the delays between reconnection attempts. The n-th delay after a
// success is initial * 2^n, capped at max, then scaled by a random factor in
// [1 - jitter, 1 + jitter] so that many daemons restarting together do not
// retry in lock step. Reset() after a success starts again at initial.
//
// Thread safety: a value; not safe for concurrent use.

#ifndef RDMAD_DAEMON_PEERS_BACKOFF_H_
#define RDMAD_DAEMON_PEERS_BACKOFF_H_

#include <chrono>

#include "common/clock.h"

namespace rdmad {

class Backoff {
 public:
  struct Options {
    std::chrono::milliseconds initial{100};
    std::chrono::milliseconds max{10000};
    double jitter = 0.2;  // 0..1
  };
  // clock: where the jitter is drawn (not owned; outlives the backoff).
  explicit Backoff(Options options, Clock& clock = Clock::System());

  // The next delay; each call doubles the base until max.
  std::chrono::milliseconds Next();
  void Reset() { base_ = options_.initial; }

 private:
  Options options_;
  Clock* clock_;
  std::chrono::milliseconds base_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_BACKOFF_H_
