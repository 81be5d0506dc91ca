// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/events/event_streamer.h"

#include <vector>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

// Records what the streamer asks of the stream; writes complete on demand.
class FakeWriter : public StreamWriter {
 public:
  void Begin() override { ++begins; }
  void Write(const DaemonEvent& event) override { written.push_back(event); }
  void Finish(const Status& status) override {
    ++finishes;
    final = status;
  }
  int begins = 0;
  int finishes = 0;
  std::vector<DaemonEvent> written;
  Status final;
};

class EventStreamerTest : public ::testing::Test {
 protected:
  ManualClock clock_{WallTime(std::chrono::seconds(1))};
  EventBus bus_{clock_};
  FakeWriter writer_;
};

TEST_F(EventStreamerTest, BeginThenWritesOneAtATimeInOrder) {
  EventStreamer streamer(&bus_, &writer_);
  streamer.Start({});
  EXPECT_EQ(writer_.begins, 1);
  bus_.Publish(EventKind::kConfigReloaded, "a");
  bus_.Publish(EventKind::kConfigReloadFailed, "b");
  EXPECT_TRUE(writer_.written.empty());  // headers still in flight
  streamer.OnWriteDone(true);
  ASSERT_EQ(writer_.written.size(), 1u);
  EXPECT_EQ(writer_.written[0].message, "a");
  EXPECT_EQ(writer_.written[0].unix_time_ms, 1000);
  streamer.OnWriteDone(true);
  ASSERT_EQ(writer_.written.size(), 2u);
  EXPECT_EQ(writer_.written[1].message, "b");
  EXPECT_GT(writer_.written[1].sequence, writer_.written[0].sequence);
  EXPECT_EQ(writer_.finishes, 0);
}

TEST_F(EventStreamerTest, FiltersByKind) {
  EventStreamer streamer(&bus_, &writer_);
  streamer.Start({EventKind::kDaemonStopping});
  streamer.OnWriteDone(true);
  bus_.Publish(EventKind::kConfigReloaded, "ignored");
  EXPECT_TRUE(writer_.written.empty());
  bus_.Publish(EventKind::kDaemonStopping, "bye");
  ASSERT_EQ(writer_.written.size(), 1u);
  EXPECT_EQ(writer_.written[0].kind, EventKind::kDaemonStopping);
}

TEST_F(EventStreamerTest, CloseDrainsQueueThenFinishesOk) {
  EventStreamer streamer(&bus_, &writer_);
  streamer.Start({});
  streamer.OnWriteDone(true);
  bus_.Publish(EventKind::kConfigReloaded, "one");
  bus_.Publish(EventKind::kDaemonStopping, "stopping");
  bus_.Close();
  EXPECT_EQ(writer_.finishes, 0);  // "one" in flight, "stopping" queued
  streamer.OnWriteDone(true);
  EXPECT_EQ(writer_.written.back().message, "stopping");
  streamer.OnWriteDone(true);
  EXPECT_EQ(writer_.finishes, 1);
  EXPECT_TRUE(writer_.final.ok());
  EXPECT_EQ(bus_.subscriber_count(), 0u);
}

TEST_F(EventStreamerTest, SlowClientIsEndedWithResourceExhausted) {
  EventStreamer streamer(&bus_, &writer_, /*max_queued=*/2);
  streamer.Start({});
  for (int i = 0; i < 5; ++i) bus_.Publish(EventKind::kConfigReloaded, "x");
  EXPECT_EQ(writer_.finishes, 0);
  streamer.OnWriteDone(true);  // the in-flight Begin completes
  EXPECT_EQ(writer_.finishes, 1);
  EXPECT_EQ(writer_.final.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(writer_.final.message(),
            "event stream closed: the client is not reading (2 events queued)");
  EXPECT_TRUE(writer_.written.empty());
}

TEST_F(EventStreamerTest, CancelWithWriteInFlightFinishesWhenItCompletes) {
  EventStreamer streamer(&bus_, &writer_);
  streamer.Start({});
  streamer.Cancel();
  EXPECT_EQ(bus_.subscriber_count(), 0u);
  EXPECT_EQ(writer_.finishes, 0);
  streamer.OnWriteDone(false);
  EXPECT_EQ(writer_.finishes, 1);
  EXPECT_EQ(writer_.final.code(), StatusCode::kCancelled);
}

TEST_F(EventStreamerTest, SubscribingToAClosedBusFinishesAtOnce) {
  bus_.Close();
  EventStreamer streamer(&bus_, &writer_);
  streamer.Start({});
  streamer.OnWriteDone(true);
  EXPECT_EQ(writer_.finishes, 1);
  EXPECT_TRUE(writer_.final.ok());
}

}  // namespace
}  // namespace rdmad
