// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/handshake_stats.h"

namespace rdmad {

void HandshakeStats::Succeeded(std::chrono::steady_clock::duration took) {
  double seconds = std::chrono::duration<double>(took).count();
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < HandshakeCounts::kBounds.size(); ++i) {
    if (seconds <= HandshakeCounts::kBounds[i]) ++counts_.cumulative[i];
  }
  ++counts_.count;
  counts_.sum_seconds += seconds;
}

void HandshakeStats::Failed(const char* side, StatusCode code) {
  std::lock_guard lock(mu_);
  ++counts_.failures[{side, std::string(StatusCodeName(code))}];
}

HandshakeCounts HandshakeStats::Snapshot() const {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace rdmad
