// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The broker and the applications' traffic reports: only the owner's
// count, an older account never replaces a newer one, and what a channel
// moved stays counted once its record is gone.

#include "daemon/broker/broker_test_fixture.h"

namespace rdmad::testing {
namespace {

TrafficTotals Moved(uint64_t sent, uint64_t written) {
  TrafficTotals t;
  t.messages_sent = sent == 0 ? 0 : 1;
  t.bytes_sent = sent;
  t.writes = written == 0 ? 0 : 1;
  t.bytes_written = written;
  if (written != 0) t.latency.Observe(20'000);
  return t;
}

TEST(BrokerTrafficTest, TheOwnersReportsAreKeptAndOthersSkipped) {
  Fixture f;
  uint64_t id = f.Established();
  EXPECT_EQ(f.broker.ReportTraffic(kApp, {{id, Moved(100, 4096)}}, {{id, false, 2'000'000}}), 0u);
  EXPECT_EQ(f.Record(id).traffic.bytes_written, 4096u);
  // Another uid (for this channel or a made-up one) changes nothing.
  Caller other = Caller::User(1001, 99);
  EXPECT_EQ(f.broker.ReportTraffic(other, {{id, Moved(1 << 30, 1 << 30)}}, {{id, true, 1}}), 2u);
  EXPECT_EQ(f.broker.ReportTraffic(kApp, {{id + 1, Moved(1, 1)}}, {}), 1u);
  EXPECT_EQ(f.Record(id).traffic.bytes_sent, 100u);
  // An older account (a report that lost the race with a newer one) too.
  EXPECT_EQ(f.broker.ReportTraffic(kApp, {{id, Moved(50, 8192)}}, {}), 1u);
  EXPECT_EQ(f.Record(id).traffic.bytes_written, 4096u);
  EXPECT_EQ(f.broker.ReportTraffic(kApp, {{id, Moved(200, 8192)}}, {}), 0u);

  TrafficView view = f.broker.Traffic();
  ASSERT_EQ(view.totals.size(), 1u);
  EXPECT_EQ((view.totals[{"B", "svc"}].bytes_sent), 200u);
  EXPECT_EQ((view.totals[{"B", "svc"}].bytes_written), 8192u);
  ASSERT_EQ(view.connects.size(), 1u);
  EXPECT_EQ((view.connects[{"B", "svc", false}].count()), 1u);
}

TEST(BrokerTrafficTest, AClosedChannelsTotalsOutliveItsRecord) {
  Fixture f;
  uint64_t id = f.Established();
  ASSERT_EQ(f.broker.ReportTraffic(kApp, {{id, Moved(300, 0)}}, {}), 0u);
  ASSERT_TRUE(f.broker.Release(kApp, id, "closed by the application").ok());
  // The last account after the close (ReleaseChannel carries it) still counts.
  ASSERT_EQ(f.broker.ReportTraffic(kApp, {{id, Moved(400, 0)}}, {}), 0u);
  f.clock.Advance(f.options.keep_ended + std::chrono::seconds(1));
  f.broker.Sweep();
  EXPECT_TRUE(f.broker.Channels().empty());
  uint64_t next = f.Established();
  ASSERT_EQ(f.broker.ReportTraffic(kApp, {{next, Moved(5, 0)}}, {}), 0u);
  EXPECT_EQ((f.broker.Traffic().totals[{"B", "svc"}].bytes_sent), 405u);
}

}  // namespace
}  // namespace rdmad::testing
