// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/traffic_meter.h"

#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

TEST(TrafficMeterTest, AMeterHasNotMovedSinceItsOwnSnapshot) {
  TrafficMeter meter;
  EXPECT_FALSE(meter.MovedSince(meter.Snapshot()));
  meter.Sent(8);
  meter.Received(16);
  meter.OneSided(true, 2, 4096);
  meter.Completed(1500);
  TrafficTotals seen = meter.Snapshot();
  EXPECT_FALSE(meter.MovedSince(seen));
  EXPECT_TRUE(meter.MovedSince(TrafficTotals{})) << "everything counted since the start";
}

// Each kind of count alone is seen: a reporter that skips the channels that
// did not move must not skip one that only received, only read, or only had
// a one-sided op complete.
TEST(TrafficMeterTest, EachKindOfCountAloneIsAMove) {
  struct Case {
    const char* what;
    void (*count)(TrafficMeter&);
  };
  const Case cases[] = {
      {"a message sent", [](TrafficMeter& m) { m.Sent(1); }},
      {"a message received", [](TrafficMeter& m) { m.Received(1); }},
      {"an empty message received", [](TrafficMeter& m) { m.Received(0); }},
      {"a Write", [](TrafficMeter& m) { m.OneSided(true, 1, 64); }},
      {"a Read", [](TrafficMeter& m) { m.OneSided(false, 1, 64); }},
      {"a batch of reads",
       [](TrafficMeter& m) {
         m.Batch(BatchTotals{0, 0, 3, 192});
       }},
      {"a completion alone", [](TrafficMeter& m) { m.Completed(2000); }},
  };
  for (const Case& c : cases) {
    TrafficMeter meter;
    meter.Sent(100);  // some history
    TrafficTotals seen = meter.Snapshot();
    c.count(meter);
    EXPECT_TRUE(meter.MovedSince(seen)) << c.what;
    EXPECT_FALSE(meter.Snapshot() == seen) << c.what;
    EXPECT_FALSE(meter.MovedSince(meter.Snapshot())) << c.what;
  }
}

}  // namespace
}  // namespace rdmad::internal
