// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The channel table on its own: entries move only as the state machine
// says, an end collects what is to be told exactly once, and ownership
// decides who finds an entry.

#include "daemon/broker/channel_table.h"

#include <memory>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

using std::chrono::seconds;

class CountingHolder : public ChannelHolder {
 public:
  void OnChannelEnded(ChannelState, const std::string&) override {}
};

class ChannelTableTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  ChannelTable table_{"hostA", &clock_, ChannelLimits("hostA", 0, 0)};
};

TEST_F(ChannelTableTest, ANewEntryStartsInItsPhaseAsOfNow) {
  auto lock = table_.Lock();
  ChannelTable::Entry& e = table_.AddLocked(7, ChannelPhase::kOpening);
  EXPECT_EQ(e.record.channel_id, 7u);
  EXPECT_EQ(e.phase, ChannelPhase::kOpening);
  EXPECT_EQ(e.record.state, PublicState(ChannelPhase::kOpening));
  EXPECT_EQ(e.since, clock_.Now());
  EXPECT_EQ(table_.FindLocked(7), &e);
  EXPECT_EQ(table_.FindLocked(8), nullptr);
}

TEST_F(ChannelTableTest, AnEventTheMachineDoesNotKnowChangesNothing) {
  auto lock = table_.Lock();
  ChannelTable::Entry& e = table_.AddLocked(1, ChannelPhase::kPlanned);
  auto since = e.since;
  clock_.Advance(seconds(5));
  EXPECT_FALSE(table_.ApplyLocked(e, ChannelEvent::kConfirmed));  // planned: no reclaim
  EXPECT_EQ(e.phase, ChannelPhase::kPlanned);
  EXPECT_EQ(e.since, since);
  EXPECT_TRUE(table_.ApplyLocked(e, ChannelEvent::kConnect));
  EXPECT_EQ(e.phase, ChannelPhase::kOpening);
  EXPECT_EQ(e.since, clock_.Now());  // the phase changed: since moves
}

TEST_F(ChannelTableTest, AnEndTakesTheHoldersOnceAndTellsThePeerOnlyWhenItKnows) {
  auto lock = table_.Lock();
  ChannelTable::Entry& planned = table_.AddLocked(1, ChannelPhase::kPlanned);
  auto ended = table_.EndLocked(planned, ChannelEvent::kFail, "why", true, "peer why");
  ASSERT_TRUE(ended.has_value());
  EXPECT_FALSE(ended->tell_peer);  // no OpenChannel was sent: the peer never heard of it
  EXPECT_EQ(planned.record.reason, "why");
  EXPECT_FALSE(table_.EndLocked(planned, ChannelEvent::kClose, "again", true, "").has_value());

  ChannelTable::Entry& open = table_.AddLocked(2, ChannelPhase::kEstablished);
  open.holders[1] = std::make_shared<CountingHolder>();
  open.holders[2] = std::make_shared<CountingHolder>();
  auto closed = table_.EndLocked(open, ChannelEvent::kClose, "bye", true, "bye");
  ASSERT_TRUE(closed.has_value());
  EXPECT_TRUE(closed->tell_peer);
  EXPECT_TRUE(closed->was_established);
  EXPECT_EQ(closed->holders.size(), 2u);
  EXPECT_TRUE(open.holders.empty());
  EXPECT_TRUE(open.peer_told);
  EXPECT_EQ(open.record.state, ChannelState::kClosed);
}

TEST_F(ChannelTableTest, LettingGoOfAFailedHeldChannelTellsThePeerLateOnce) {
  auto lock = table_.Lock();
  ChannelTable::Entry& e = table_.AddLocked(3, ChannelPhase::kEstablished);
  e.held = true;
  ASSERT_TRUE(table_.EndLocked(e, ChannelEvent::kFail, "link down", false, "").has_value());
  auto late = table_.LetGoLocked(e, "app closed");
  ASSERT_TRUE(late.has_value());
  EXPECT_TRUE(late->late);
  EXPECT_TRUE(late->tell_peer);
  EXPECT_EQ(late->peer_reason, "app closed");
  EXPECT_FALSE(table_.LetGoLocked(e, "app closed").has_value());  // told already
}

TEST_F(ChannelTableTest, OnlyTheOwnerOrAnAdminAskingAsOneFindsAnEntry) {
  auto lock = table_.Lock();
  table_.AddLocked(4, ChannelPhase::kEstablished).record.owner_uid = 1000;
  EXPECT_NE(table_.FindOwnedLocked(Caller::User(1000, 1), 4, false), nullptr);
  EXPECT_EQ(table_.FindOwnedLocked(Caller::User(1001, 1), 4, true), nullptr);
  Caller admin = Caller::User(0, 1);
  admin.admin = true;
  EXPECT_EQ(table_.FindOwnedLocked(admin, 4, false), nullptr);
  EXPECT_NE(table_.FindOwnedLocked(admin, 4, true), nullptr);
}

TEST_F(ChannelTableTest, AStoppingTableRefusesWithItsHostName) {
  auto lock = table_.Lock();
  EXPECT_TRUE(table_.CheckRunningLocked().ok());
  table_.SetStoppingLocked();
  Status stopping = table_.CheckRunningLocked();
  EXPECT_EQ(stopping.code(), StatusCode::kUnavailable);
  EXPECT_EQ(stopping.message(), "rdmad on hostA is stopping");
}

}  // namespace
}  // namespace rdmad
