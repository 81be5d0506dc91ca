// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Channels across daemon restarts (broker_reattach.cc): a lost peer's
// established channels wait for it, its successor reclaims them, and a
// restarted daemon adopts its applications' channels from their leases.

#include <gtest/gtest.h>

#include "daemon/broker/broker.h"
#include "daemon/broker/broker_test_fixture.h"

namespace rdmad {
namespace {

using namespace rdmad::testing;

constexpr char kNewInstanceB[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbb0002";
constexpr char kOldInstanceA[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaa0001";

// A held established channel to B whose peer daemon was just lost.
struct Waiting : Fixture {
  uint64_t id = Established();
  std::shared_ptr<FakeHolder> holder = std::make_shared<FakeHolder>();
  Waiting() {
    EXPECT_TRUE(broker.Hold(kApp, id, holder).ok());
    broker.OnPeerLost(kInstanceB, "B", "its session to this daemon ended");
  }
};

// The lease an application kept from a daemon that has since restarted.
ChannelLease OldLease(uint64_t id) {
  ChannelLease lease;
  lease.channel_id = id;
  lease.peer = "B";
  lease.peer_key = "B";
  lease.service = "svc";
  lease.initiator = true;
  lease.transport = EndpointKind::kTcp;
  lease.reason = "no RDMA path";
  lease.peer_instance = kInstanceB;
  lease.self_instance = kOldInstanceA;
  lease.owner_uid = kApp.uid;
  return lease;
}

TEST(BrokerReattachTest, AChannelWaitsForItsLostPeerAndFailsAfterTheGrace) {
  Waiting f;
  EXPECT_EQ(f.Record(f.id).state, ChannelState::kEstablished);
  f.clock.Advance(9s);
  f.broker.Sweep();
  EXPECT_EQ(f.Record(f.id).state, ChannelState::kEstablished);
  EXPECT_TRUE(f.holder->Ends().empty());
  f.clock.Advance(1s);
  f.broker.Sweep();
  EXPECT_EQ(f.Record(f.id).state, ChannelState::kFailed);
  ASSERT_EQ(f.holder->Ends().size(), 1u);
  EXPECT_EQ(f.holder->Ends()[0].second,
            "peer daemon B lost: its session to this daemon ended (not back within 10000 ms)");
}

TEST(BrokerReattachTest, TheSameInstanceBackConfirmsAndKeepsTheChannel) {
  Waiting f;
  std::string before = f.Record(f.id).reason;
  f.broker.OnPeerBack(kInstanceB);
  // Asked whether B still has it, as this very instance.
  auto reclaims = f.link->Reclaims();
  ASSERT_EQ(reclaims.size(), 1u);
  EXPECT_EQ(reclaims[0].previous_instance, kInstanceA);
  EXPECT_EQ(reclaims[0].instance, kInstanceA);
  EXPECT_NE(f.Record(f.id).reason, before);
  EXPECT_EQ(f.Record(f.id).reason.find("lost"), std::string::npos) << f.Record(f.id).reason;
  f.clock.Advance(60s);
  f.broker.Sweep();
  EXPECT_EQ(f.Record(f.id).state, ChannelState::kEstablished);
  EXPECT_TRUE(f.holder->Ends().empty());
}

TEST(BrokerReattachTest, AChannelThePeerClosedWhileApartFailsWhenItIsBack) {
  Waiting f;
  f.link->reclaim_answer = [](const ReclaimChannelCall&) {
    return Status::NotFound("channel 0x1 is closed on hostB: the application went away");
  };
  f.broker.OnPeerBack(kInstanceB);
  EXPECT_EQ(f.Record(f.id).state, ChannelState::kFailed);
  ASSERT_EQ(f.holder->Ends().size(), 1u);
  EXPECT_EQ(f.holder->Ends()[0].second,
            "peer daemon B is back but no longer has the channel: channel 0x1 is closed on "
            "hostB: the application went away");
}

TEST(BrokerReattachTest, WithoutALinkToAskTheChannelGoesOn) {
  Waiting f;
  f.instance_link = false;
  f.up = false;
  f.broker.OnPeerBack(kInstanceB);
  EXPECT_TRUE(f.link->Reclaims().empty());
  f.clock.Advance(10s);
  f.broker.Sweep();
  f.clock.Advance(1s);
  f.broker.Sweep();
  EXPECT_EQ(f.Record(f.id).state, ChannelState::kEstablished);
  EXPECT_TRUE(f.holder->Ends().empty());
}

TEST(BrokerReattachTest, TheRestartedPeerReclaimsItsChannels) {
  Waiting f;
  ReclaimChannelCall from_b{f.id, kInstanceB, kNewInstanceB};
  from_b.caller_node = "b";  // node names compare without case
  EXPECT_TRUE(f.broker.OnReclaimChannel(from_b).ok());
  EXPECT_EQ(f.Record(f.id).peer_instance, kNewInstanceB);
  f.clock.Advance(60s);
  f.broker.Sweep();
  EXPECT_EQ(f.Record(f.id).state, ChannelState::kEstablished);
  // From now on the channel is shared with the new instance only.
  EXPECT_EQ(f.broker.OnReclaimChannel({f.id, kInstanceB, kNewInstanceB}).code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(f.broker.OnCloseChannel({f.id, "closed by the application", kNewInstanceB}).ok());
  ASSERT_EQ(f.holder->Ends().size(), 1u);
  EXPECT_EQ(f.holder->Ends()[0].second, "closed by peer B: closed by the application");
}

TEST(BrokerReattachTest, AReclaimIsRefusedUnlessTheChannelIsOpenWithTheCaller) {
  Waiting f;
  EXPECT_EQ(f.broker.OnReclaimChannel({0, kInstanceB, kNewInstanceB}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(f.broker.OnReclaimChannel({f.id, "B", kNewInstanceB}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(f.broker.OnReclaimChannel({f.id + 1, kInstanceB, kNewInstanceB}).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(f.broker.OnReclaimChannel({f.id, kNewInstanceB, kNewInstanceB}).code(),
            StatusCode::kNotFound);
  // The previous instance unknown to the peer layer: only the channel's
  // peer node may take it back.
  ReclaimChannelCall from_c{f.id, kInstanceB, kNewInstanceB};
  from_c.caller_node = "C";
  EXPECT_EQ(f.broker.OnReclaimChannel(from_c).code(), StatusCode::kNotFound);
  EXPECT_EQ(f.Record(f.id).peer_instance, kInstanceB);
  ASSERT_TRUE(f.broker.Release(kApp, f.id, "closed by the application").ok());
  Status closed = f.broker.OnReclaimChannel({f.id, kInstanceB, kNewInstanceB});
  EXPECT_EQ(closed.code(), StatusCode::kNotFound);
  EXPECT_NE(closed.message().find("closed by the application"), std::string::npos)
      << closed.message();
}

TEST(BrokerReattachTest, ALeaseNamesTheChannelAndThisInstance) {
  Fixture f;
  uint64_t id = f.Established();
  auto lease = f.broker.LeaseOf(id);
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_EQ(lease->channel_id, id);
  EXPECT_EQ(lease->peer, "B");
  EXPECT_EQ(lease->service, "svc");
  EXPECT_TRUE(lease->initiator);
  EXPECT_EQ(lease->transport, EndpointKind::kTcp);
  EXPECT_EQ(lease->peer_instance, kInstanceB);
  EXPECT_EQ(lease->self_instance, kInstanceA);
  EXPECT_EQ(f.broker.LeaseOf(id + 1).status().code(), StatusCode::kNotFound);
}

TEST(BrokerReattachTest, ReattachingCountsAgainstTheOwnersQuota) {
  Fixture f;
  f.broker.SetOwnerLimits({.channels_per_client = 2, .channels_per_uid = 2});
  ASSERT_TRUE(f.broker.Adopt(kApp, 0x1234, OldLease(0x1234)).ok());
  ASSERT_TRUE(f.broker.Adopt(kApp, 0x1235, OldLease(0x1235)).ok());
  Status third = f.broker.Adopt(kApp, 0x1236, OldLease(0x1236));
  EXPECT_EQ(third.code(), StatusCode::kResourceExhausted) << third.ToString();
  EXPECT_NE(third.message().find("limits.max_channels_per_client"), std::string::npos)
      << third.message();
  EXPECT_EQ(f.Record(0x1236).channel_id, 0u) << "nothing adopted beyond the quota";
  // One already known is no new channel.
  EXPECT_TRUE(f.broker.Adopt(kApp, 0x1234, OldLease(0x1234)).ok());
}

TEST(BrokerReattachTest, ARestartedDaemonAdoptsAChannelAndReclaimsItFromThePeer) {
  Fixture f;
  uint64_t id = 0x1234;
  ASSERT_TRUE(f.broker.Adopt(kApp, id, OldLease(id)).ok());
  auto reclaims = f.link->Reclaims();
  ASSERT_EQ(reclaims.size(), 1u);
  EXPECT_EQ(reclaims[0].channel_id, id);
  EXPECT_EQ(reclaims[0].previous_instance, kOldInstanceA);
  EXPECT_EQ(reclaims[0].instance, kInstanceA);
  ChannelRecord r = f.Record(id);
  EXPECT_EQ(r.state, ChannelState::kEstablished);
  EXPECT_EQ(r.peer, "B");
  EXPECT_EQ(r.transport, EndpointKind::kTcp);
  EXPECT_EQ(r.reason, "no RDMA path");
  // The lease it gives now names this instance, for the next restart.
  auto lease = f.broker.LeaseOf(id);
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->self_instance, kInstanceA);
  EXPECT_EQ(lease->reason, "no RDMA path");
  auto holder = std::make_shared<FakeHolder>();
  auto held = f.broker.Hold(kApp, id, holder);
  ASSERT_TRUE(held.ok());
  EXPECT_NE(held->token, 0u);
  // Adopting again (a second lifeline) changes nothing.
  EXPECT_TRUE(f.broker.Adopt(kApp, id, OldLease(id)).ok());
  EXPECT_EQ(f.link->Reclaims().size(), 1u);
  f.clock.Advance(60s);
  f.broker.Sweep();
  EXPECT_EQ(f.Record(id).state, ChannelState::kEstablished);
}

TEST(BrokerReattachTest, AChannelThePeerNoLongerHasFailsWithItsReason) {
  Fixture f;
  f.link->reclaim_answer = [](const ReclaimChannelCall&) {
    return Status::NotFound("channel 0x1234 is closed on hostB: closed by the application");
  };
  ASSERT_TRUE(f.broker.Adopt(kApp, 0x1234, OldLease(0x1234)).ok());
  auto held = f.broker.Hold(kApp, 0x1234, std::make_shared<FakeHolder>());
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->token, 0u);
  EXPECT_EQ(held->state, ChannelState::kFailed);
  EXPECT_EQ(held->reason,
            "rdmad restarted and peer daemon B no longer has the channel: channel 0x1234 is "
            "closed on hostB: closed by the application");
}

TEST(BrokerReattachTest, WithoutALinkTheReclaimIsRetriedUntilTheGrace) {
  Fixture f;
  f.instance_link = false;
  f.up = false;
  ASSERT_TRUE(f.broker.Adopt(kApp, 0x1234, OldLease(0x1234)).ok());
  auto holder = std::make_shared<FakeHolder>();
  ASSERT_TRUE(f.broker.Hold(kApp, 0x1234, holder).ok());
  EXPECT_TRUE(f.link->Reclaims().empty());
  f.clock.Advance(2s);
  f.broker.Sweep();
  EXPECT_TRUE(f.link->Reclaims().empty());
  f.instance_link = true;  // the session to B is up
  f.broker.Sweep();
  EXPECT_EQ(f.link->Reclaims().size(), 1u);
  EXPECT_EQ(f.Record(0x1234).state, ChannelState::kEstablished);

  // Another that never finds the peer fails after the grace.
  f.instance_link = false;
  ASSERT_TRUE(f.broker.Adopt(kApp, 0x5678, OldLease(0x5678)).ok());
  auto other = std::make_shared<FakeHolder>();
  ASSERT_TRUE(f.broker.Hold(kApp, 0x5678, other).ok());
  f.clock.Advance(10s);
  f.broker.Sweep();
  ASSERT_EQ(other->Ends().size(), 1u);
  EXPECT_EQ(other->Ends()[0].second,
            "rdmad restarted and peer daemon B did not confirm the channel within 10000 ms");
}

TEST(BrokerReattachTest, AdoptRefusesBadLeasesAndChannelsThisInstanceEnded) {
  Fixture f;
  ChannelLease lease = OldLease(0x1234);
  EXPECT_EQ(f.broker.Adopt(kApp, 0x9999, lease).code(), StatusCode::kInvalidArgument);
  ChannelLease bad = lease;
  bad.peer_instance = "B";
  EXPECT_EQ(f.broker.Adopt(kApp, 0x1234, bad).code(), StatusCode::kInvalidArgument);
  bad = lease;
  bad.service = "no spaces";
  EXPECT_EQ(f.broker.Adopt(kApp, 0x1234, bad).code(), StatusCode::kInvalidArgument);
  bad = lease;
  bad.peer = "";
  EXPECT_EQ(f.broker.Adopt(kApp, 0x1234, bad).code(), StatusCode::kInvalidArgument);
  lease.self_instance = kInstanceA;  // given by this very daemon
  EXPECT_EQ(f.broker.Adopt(kApp, 0x1234, lease).code(), StatusCode::kNotFound);
  EXPECT_TRUE(f.broker.Channels().empty());
}

}  // namespace
}  // namespace rdmad
