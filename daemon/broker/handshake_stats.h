// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// HandshakeStats: the handshakes this daemon took part in, counted for
// /metrics (docs/operations.md, "Metrics"): how long each Connect took (the
// initiator's relay to the peer daemon and back, the listener's accept
// included) as histogram buckets, and the failures by side and status code.
// Counts only grow; a scrape takes a copy.
//
// Thread safety: every method may be called from any thread.

#ifndef RDMAD_DAEMON_BROKER_HANDSHAKE_STATS_H_
#define RDMAD_DAEMON_BROKER_HANDSHAKE_STATS_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "rdmad/status.h"

namespace rdmad {

struct HandshakeCounts {
  // Upper bounds in seconds; a Connect slower than the last is counted in
  // count (the +Inf bucket) only.
  static constexpr std::array<double, 12> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                     0.05,   0.1,   0.25,   0.5,   1,    5};
  std::array<uint64_t, kBounds.size()> cumulative{};  // Connects at most kBounds[i]
  uint64_t count = 0;
  double sum_seconds = 0;
  // By (side: "initiator" or "acceptor", reason: the status code's name).
  std::map<std::pair<std::string, std::string>, uint64_t> failures;
};

class HandshakeStats {
 public:
  void Succeeded(std::chrono::steady_clock::duration took);
  void Failed(const char* side, StatusCode code);
  HandshakeCounts Snapshot() const;

 private:
  mutable std::mutex mu_;
  HandshakeCounts counts_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_HANDSHAKE_STATS_H_
