// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/channel_limits.h"

#include <vector>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

ChannelRecord Live(uint64_t id, const std::string& peer, uid_t uid, pid_t pid,
                   ChannelState state = ChannelState::kEstablished) {
  ChannelRecord r;
  r.channel_id = id;
  r.peer = peer;
  r.owner_uid = uid;
  r.owner_pid = pid;
  r.state = state;
  return r;
}

TEST(ChannelLimitsTest, TheDaemonsLimitsCountLiveChannelsInAllAndPerPeer) {
  ChannelLimits limits("hostA", 4, 2);
  std::vector<ChannelRecord> records = {Live(1, "B", 1000, 1), Live(2, "C", 1000, 1),
                                        Live(3, "B", 1000, 1, ChannelState::kClosed)};
  EXPECT_TRUE(limits.CheckDaemon(records, "C", 1).ok());  // 2 live, 1 with C
  Status per_peer = limits.CheckDaemon(records, "B", 2);
  EXPECT_EQ(per_peer.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(per_peer.message(),
            "rdmad on hostA has 1 channels open with B, its limit (limits.max_channels_per_peer)");
  records.push_back(Live(4, "D", 1000, 1, ChannelState::kPlanned));
  Status total = limits.CheckDaemon(records, "E", 2);  // 3 live
  EXPECT_EQ(total.message(), "rdmad on hostA has 3 channels open, its limit (limits.max_channels)");
  limits.SetDaemonLimits(0, 0);  // no bound
  EXPECT_TRUE(limits.CheckDaemon(records, "B", 100).ok());
}

TEST(ChannelLimitsTest, AnOwnersLimitsCountItsClientAndItsUid) {
  ChannelLimits limits("hostA", 0, 0);
  limits.SetOwnerLimits(
      {.channels_per_client = 2, .channels_per_uid = 3, .plans_per_client = 1, .plans_per_uid = 0});
  const Caller app = Caller::User(1000, 42);
  std::vector<ChannelRecord> records = {Live(1, "B", 1000, 42), Live(2, "B", 1000, 43),
                                        Live(3, "B", 2000, 44),
                                        Live(4, "B", 1000, 42, ChannelState::kFailed)};
  EXPECT_TRUE(limits.CheckOwner(records, app, /*planning=*/false, 1).ok());
  Status client = limits.CheckOwner(records, app, /*planning=*/false, 2);
  EXPECT_EQ(client.message(),
            "client pid 42 has 1 channels open, its limit (limits.max_channels_per_client = 2)");
  records.push_back(Live(5, "B", 1000, 45));
  Status uid = limits.CheckOwner(records, app, /*planning=*/false, 1);
  EXPECT_EQ(uid.message(),
            "uid 1000 has 3 channels open, its limit (limits.max_channels_per_uid = 3)");
  // Channels already offered to the caller are not counted twice.
  EXPECT_TRUE(limits.CheckOwner(records, app, /*planning=*/false, 1, {5}).ok());
  // Plans: only channels not connected yet count.
  EXPECT_TRUE(limits.CheckOwner(records, app, /*planning=*/true, 1).ok());
  records.push_back(Live(6, "B", 1000, 42, ChannelState::kPlanned));
  Status plans = limits.CheckOwner(records, app, /*planning=*/true, 1);
  EXPECT_EQ(plans.message(),
            "client pid 42 has 1 channels planned and not connected, its limit "
            "(limits.max_plans_per_client = 1)");
  // The daemon itself has no limit.
  EXPECT_TRUE(limits.CheckOwner(records, Caller::Daemon(), /*planning=*/true, 100).ok());
}

TEST(ChannelLimitsTest, EachRefusalIsCountedUnderItsLimitsKey) {
  QuotaRefusals refusals;
  ChannelLimits limits("hostA", 1, 1, &refusals);
  OwnerLimits owner;
  owner.channels_per_client = 1;
  owner.plans_per_uid = 1;
  limits.SetOwnerLimits(owner);
  const Caller app = Caller::User(1000, 42);
  std::vector<ChannelRecord> records = {Live(1, "B", 1000, 42),
                                        Live(2, "C", 1000, 7, ChannelState::kPlanned)};
  EXPECT_FALSE(limits.CheckDaemon(records, "B", 1).ok());  // 2 live: the total first
  EXPECT_FALSE(limits.CheckOwner(records, app, /*planning=*/false, 1).ok());
  EXPECT_FALSE(limits.CheckOwner(records, app, /*planning=*/true, 1).ok());
  EXPECT_FALSE(limits.CheckOwner(records, app, /*planning=*/true, 1).ok());
  EXPECT_TRUE(limits.CheckOwner(records, Caller::Daemon(), /*planning=*/true, 1).ok());
  auto counts = refusals.Snapshot();
  EXPECT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts["limits.max_channels"], 1u);
  EXPECT_EQ(counts["limits.max_channels_per_client"], 1u);
  EXPECT_EQ(counts["limits.max_plans_per_uid"], 2u);
}

TEST(ChannelLimitsTest, AChannelToThisDaemonCountsForItsListenersUidToo) {
  ChannelLimits limits("hostA", 0, 0);
  limits.SetOwnerLimits({.channels_per_uid = 1});
  ChannelRecord self = Live(1, "hostA", 1000, 42);
  self.self_acceptor_uid = 2000;
  std::vector<ChannelRecord> records = {self};
  EXPECT_EQ(limits.CheckOwner(records, Caller::User(2000, 7), false, 1).code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(limits.CheckOwner(records, Caller::User(3000, 7), false, 1).ok());
}

}  // namespace
}  // namespace rdmad
