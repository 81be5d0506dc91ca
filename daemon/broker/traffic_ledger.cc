// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/traffic_ledger.h"

namespace rdmad {

void TrafficLedger::Retire(const ChannelRecord& record) {
  if (record.traffic == TrafficTotals{}) return;  // nothing to keep, no key taken
  retired_[KeyFor(record, retired_)].Add(record.traffic);
}

void TrafficLedger::Connected(const ChannelRecord& record, bool pooled, uint64_t ns) {
  PeerServiceKey key = KeyFor(record, retired_);
  auto full = std::make_tuple(key.first, key.second, pooled);
  if (connects_.size() >= 2 * kMaxKeys && connects_.count(full) == 0) {
    std::get<1>(full) = "other";
  }
  connects_[full].Observe(ns);
}

}  // namespace rdmad
