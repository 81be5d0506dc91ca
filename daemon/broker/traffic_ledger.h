// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// TrafficLedger: what the applications' channels moved, per peer and
// service, for /metrics (docs/operations.md, "Metrics"). A live channel's
// totals are its record's (the library's last report); when a record
// leaves the broker's table its totals move here, so that what an
// application moved stays counted after it closed its channels or exited.
// It also keeps how long the applications' Connects took, cold and pooled
// apart. Keys are bounded: past kMaxKeys (peer, service) pairs, a new pair
// is counted under service "other".
//
// Thread safety: none; the channel table's lock guards it.

#ifndef RDMAD_DAEMON_BROKER_TRAFFIC_LEDGER_H_
#define RDMAD_DAEMON_BROKER_TRAFFIC_LEDGER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "common/traffic.h"
#include "daemon/broker/channel_record.h"

namespace rdmad {

using PeerServiceKey = std::pair<std::string, std::string>;

// The ledger at one moment: totals per (peer, service), and Connect times
// per (peer, service, pooled).
struct TrafficView {
  std::map<PeerServiceKey, TrafficTotals> totals;
  std::map<std::tuple<std::string, std::string, bool>, LatencyHistogram> connects;
};

class TrafficLedger {
 public:
  static constexpr size_t kMaxKeys = 1024;

  // record leaves the table: its totals stay counted.
  void Retire(const ChannelRecord& record);
  // An application's Connect to record's peer and service took ns.
  void Connected(const ChannelRecord& record, bool pooled, uint64_t ns);
  // Retired totals plus the live records' (each record once).
  template <typename Records>
  TrafficView View(const Records& live) const {
    TrafficView view{retired_, connects_};
    for (const ChannelRecord& r : live) view.totals[KeyFor(r, view.totals)].Add(r.traffic);
    return view;
  }

 private:
  // r's key in keys, or its "other" key once keys has kMaxKeys others.
  template <typename Map>
  static PeerServiceKey KeyFor(const ChannelRecord& r, const Map& keys) {
    PeerServiceKey key{r.peer, r.service};
    if (keys.size() < kMaxKeys || keys.count(key) != 0) return key;
    return {r.peer, "other"};
  }

  std::map<PeerServiceKey, TrafficTotals> retired_;
  std::map<std::tuple<std::string, std::string, bool>, LatencyHistogram> connects_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_TRAFFIC_LEDGER_H_
