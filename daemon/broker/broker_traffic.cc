// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Broker: the applications' accounts of their channels' traffic
// (rdmad.v1.ReportTraffic), kept in the records and the table's ledger.

#include "daemon/broker/broker.h"

namespace rdmad {

size_t Broker::ReportTraffic(const Caller& caller, const std::vector<ReportedTraffic>& channels,
                             const std::vector<ReportedConnect>& connects) {
  auto lock = table_.Lock();
  // The record this caller may account for (as ReportRails).
  auto accountable = [&](uint64_t id) -> ChannelRecord* {
    Entry* e = table_.FindOwnedLocked(caller, id, /*admin=*/false);
    return e == nullptr || IsSelfAcceptorSide(e->record, caller) ? nullptr : &e->record;
  };
  size_t skipped = 0;
  for (const ReportedTraffic& t : channels) {
    ChannelRecord* r = accountable(t.channel_id);
    if (r == nullptr || !t.totals.NotBelow(r->traffic)) {
      ++skipped;
      continue;
    }
    r->traffic = t.totals;
  }
  for (const ReportedConnect& c : connects) {
    ChannelRecord* r = accountable(c.channel_id);
    if (r == nullptr) {
      ++skipped;
      continue;
    }
    table_.LedgerLocked().Connected(*r, c.pooled, c.duration_ns);
  }
  return skipped;
}

TrafficView Broker::Traffic() const {
  auto lock = table_.Lock();
  return table_.TrafficLocked();
}

}  // namespace rdmad
