// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/traffic_ledger.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rdmad {
namespace {

ChannelRecord Record(const std::string& peer, const std::string& service, uint64_t sent) {
  ChannelRecord r;
  r.peer = peer;
  r.service = service;
  r.traffic.messages_sent = 1;
  r.traffic.bytes_sent = sent;
  return r;
}

TEST(TrafficLedgerTest, RetiredTotalsStayAndLiveOnesAddToThem) {
  TrafficLedger ledger;
  ledger.Retire(Record("b", "kv", 100));
  ledger.Retire(Record("b", "kv", 50));
  ledger.Retire(Record("c", "kv", 7));
  ledger.Retire(ChannelRecord{});  // nothing moved: no key either
  std::vector<ChannelRecord> live = {Record("b", "kv", 1000), Record("b", "rpc", 3)};
  TrafficView view = ledger.View(live);
  ASSERT_EQ(view.totals.size(), 3u);
  EXPECT_EQ((view.totals[{"b", "kv"}].bytes_sent), 1150u);
  EXPECT_EQ((view.totals[{"b", "kv"}].messages_sent), 3u);
  EXPECT_EQ((view.totals[{"b", "rpc"}].bytes_sent), 3u);
  EXPECT_EQ((view.totals[{"c", "kv"}].bytes_sent), 7u);
  // The live records are counted once per view, never kept.
  EXPECT_EQ((ledger.View(std::vector<ChannelRecord>{}).totals[{"b", "kv"}].bytes_sent), 150u);
}

TEST(TrafficLedgerTest, ConnectsAreKeptColdAndPooledApart) {
  TrafficLedger ledger;
  ChannelRecord r = Record("b", "kv", 0);
  ledger.Connected(r, false, 3'000'000);
  ledger.Connected(r, true, 800);
  ledger.Connected(r, true, 900);
  TrafficView view = ledger.View(std::vector<ChannelRecord>{});
  EXPECT_EQ((view.connects[{"b", "kv", false}].count()), 1u);
  EXPECT_EQ((view.connects[{"b", "kv", true}].count()), 2u);
  EXPECT_EQ((view.connects[{"b", "kv", true}].buckets[0]), 2u);
}

TEST(TrafficLedgerTest, KeysAreBounded) {
  TrafficLedger ledger;
  for (size_t i = 0; i < TrafficLedger::kMaxKeys + 10; ++i) {
    ledger.Retire(Record("b", "svc" + std::to_string(i), 1));
  }
  TrafficView view = ledger.View(std::vector<ChannelRecord>{Record("b", "another", 5)});
  EXPECT_LE(view.totals.size(), TrafficLedger::kMaxKeys + 1);
  EXPECT_EQ((view.totals[{"b", "other"}].bytes_sent), 15u);  // 10 retired, 5 live
  EXPECT_EQ((view.totals[{"b", "svc0"}].bytes_sent), 1u);
}

}  // namespace
}  // namespace rdmad
