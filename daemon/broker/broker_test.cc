// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/broker.h"

#include <future>
#include <thread>
#include <vector>

#include "daemon/broker/broker_test_fixture.h"
#include "gtest/gtest.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;
using namespace rdmad::testing;

// A peer's OpenChannel of one channel from host.
OpenChannelCall From(const std::string& host, uint64_t id) {
  OpenChannelCall call = CallFromB({id});
  call.initiator_host = host;
  return call;
}

TEST(BrokerTest, PlansTcpWithTheReasonWithoutAPath) {
  Fixture f;
  auto planned = f.broker.PlanChannel(kApp, "B", "svc", false);
  ASSERT_TRUE(planned.ok()) << planned.status().ToString();
  EXPECT_FALSE(planned.value().plan.path.has_value());
  EXPECT_NE(planned.value().plan.tcp_reason.find("no RDMA path to 127.0.0.1"), std::string::npos);
  EXPECT_EQ(planned.value().peer_address, "127.0.0.1");
  EXPECT_EQ(f.broker.PlanChannel(kApp, "C", "svc", false).status().code(), StatusCode::kNotFound);
}

TEST(BrokerTest, ConnectRelaysAndRecordsTheChannel) {
  Fixture f;
  f.link->open_answer = [](const OpenChannelCall& call) -> StatusOr<ChannelEndpoint> {
    EXPECT_EQ(call.service, "svc");
    EXPECT_EQ(call.initiator_host, "hostA");
    EXPECT_EQ(call.initiator_instance, kInstanceA);
    return TcpEnd(5000);
  };
  auto planned = f.broker.PlanChannel(kApp, "B", "svc", true);
  ASSERT_TRUE(planned.ok());
  auto reply = f.broker.Connect(kApp, planned.value().channel_ids[0], TcpEnd(1));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply.value().tcp->port, 5000);
  auto channels = f.broker.Channels();
  ASSERT_EQ(channels.size(), 1u);
  EXPECT_EQ(channels[0].state, ChannelState::kEstablished);
  EXPECT_EQ(channels[0].transport, EndpointKind::kTcp);
  EXPECT_EQ(channels[0].peer_instance, kInstanceB);
  // A second Connect on the same plan: the channel is no longer planned.
  EXPECT_EQ(f.broker.Connect(kApp, planned.value().channel_ids[0], TcpEnd(1)).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.broker.Connect(kApp, 12345, TcpEnd(1)).status().code(), StatusCode::kNotFound);
}

TEST(BrokerTest, PeerErrorsAndGarbageAreStatuses) {
  Fixture f;
  f.link->open_answer = [](const OpenChannelCall&) -> StatusOr<ChannelEndpoint> {
    return TcpEnd(0);  // garbage from the peer
  };
  auto planned = f.broker.PlanChannel(kApp, "B", "svc", false);
  auto reply = f.broker.Connect(kApp, planned.value().channel_ids[0], TcpEnd(1));
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(reply.status().message().find("the peer's TCP endpoint: port 0"), std::string::npos);
  // The peer may hold what it answered: it is told that the initiator gave up.
  ASSERT_EQ(f.link->Closes().size(), 1u);
  EXPECT_NE(f.link->Closes()[0].reason.find("the initiator gave up"), std::string::npos);

  ChannelEndpoint bad;
  bad.rdma = internal::RdmaEndpoint{};
  bad.rdma->qpn = 0x1000000;
  planned = f.broker.PlanChannel(kApp, "B", "svc", false);
  EXPECT_EQ(f.broker.Connect(kApp, planned.value().channel_ids[0], bad).status().code(),
            StatusCode::kInvalidArgument);

  f.up = false;
  planned = f.broker.PlanChannel(kApp, "B", "svc", false);
  reply = f.broker.Connect(kApp, planned.value().channel_ids[0], TcpEnd(1));
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(reply.status().message().find("refused"), std::string::npos);
}

class AcceptingSink : public ServiceSink {
 public:
  explicit AcceptingSink(ServiceRegistry* r) : registry(r) {}
  ServiceRegistry* registry;
  IncomingChannelRequest seen;
  std::vector<std::string> closed;
  void OnIncoming(const IncomingChannelRequest& r) override {
    seen = r;
    EXPECT_TRUE(
        registry->Accept(kApp, r.request_id, ChannelEndpoints(r.channels.size(), TcpEnd(6000)))
            .ok());
  }
  void OnChannelClosed(uint64_t, const std::string& reason) override { closed.push_back(reason); }
};

TEST(BrokerTest, OnOpenChannelOffersToTheListenerWithThisSidesPlan) {
  Fixture f;
  OpenChannelCall call = CallFromB({77});
  EXPECT_EQ(f.broker.OnOpenChannel(call, "127.0.0.1").status().message(),
            "no service svc on hostA");
  auto sink = std::make_shared<AcceptingSink>(&f.broker.services());
  auto reg = f.broker.services().Register("svc", sink, kApp);
  ASSERT_TRUE(reg.ok());
  auto answer = f.broker.OnOpenChannel(call, "127.0.0.1");
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_EQ(answer.value().size(), 1u);
  EXPECT_EQ(answer.value()[0].tcp->port, 6000);
  EXPECT_EQ(sink->seen.plan.tcp_reason, "the initiator chose TCP");
  EXPECT_EQ(sink->seen.plan.tcp_bind_host, "127.0.0.1");
  EXPECT_EQ(sink->seen.channels.at(0).channel_id, 77u);
  EXPECT_EQ(f.Record(77).peer_instance, kInstanceB);
  EXPECT_EQ(f.broker.OnOpenChannel(call, "127.0.0.1").status().code(),
            StatusCode::kAlreadyExists);  // a live channel's id is not taken over
  call.channels[0].endpoint.tcp.reset();
  EXPECT_EQ(f.broker.OnOpenChannel(call, "127.0.0.1").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(BrokerTest, TheTcpAcceptorListensOnTheSourceAddressForTheInitiator) {
  Fixture f;
  auto sink = std::make_shared<AcceptingSink>(&f.broker.services());
  auto reg = f.broker.services().Register("svc", sink, kApp);
  uint64_t id = 100;
  auto bind_host = [&](const std::string& peer_ip) {
    OpenChannelCall call = CallFromB({id++});
    EXPECT_TRUE(f.broker.OnOpenChannel(call, peer_ip).ok());
    return sink->seen.plan.tcp_bind_host;
  };
  EXPECT_EQ(bind_host("192.0.2.7"), "192.0.2.1");   // the kernel's route to it
  EXPECT_EQ(bind_host("198.51.100.9"), "0.0.0.0");  // no route: the wildcard
  EXPECT_EQ(bind_host("2001:db8::9"), "::");
  EXPECT_EQ(bind_host("::1"), "::1");
}

TEST(BrokerTest, ReleaseClosesTellsThePeerAndTheHolder) {
  Fixture f;
  uint64_t id = f.Established();
  auto holder = std::make_shared<FakeHolder>();
  auto held = f.broker.Hold(kApp, id, holder);
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  EXPECT_NE(held.value().token, 0u);
  ASSERT_TRUE(f.broker.Release(kApp, id, "closed by the application").ok());
  EXPECT_EQ(f.Record(id).state, ChannelState::kClosed);
  EXPECT_EQ(f.Record(id).reason, "closed by the application");
  ASSERT_EQ(f.link->Closes().size(), 1u);
  EXPECT_EQ(f.link->Closes()[0].channel_id, id);
  EXPECT_EQ(f.link->Closes()[0].reason, "closed by the application");
  EXPECT_EQ(f.link->Closes()[0].initiator_instance, kInstanceA);
  ASSERT_EQ(holder->Ends().size(), 1u);
  EXPECT_EQ(holder->Ends()[0].first, ChannelState::kClosed);
  // Again: OK, nobody told twice; a late hold hears the end at once.
  EXPECT_TRUE(f.broker.Release(kApp, id, "again").ok());
  EXPECT_EQ(f.link->Closes().size(), 1u);
  auto late = f.broker.Hold(kApp, id, std::make_shared<FakeHolder>());
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late.value().token, 0u);
  EXPECT_EQ(late.value().state, ChannelState::kClosed);
  EXPECT_EQ(late.value().reason, "closed by the application");
  EXPECT_EQ(f.broker.Release(kApp, 12345, "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(f.broker.Hold(kApp, 12345, holder).status().code(), StatusCode::kNotFound);
}

TEST(BrokerTest, TheLifelineEndingClosesTheChannel) {
  Fixture f;
  uint64_t id = f.Established();
  auto holder = std::make_shared<FakeHolder>();
  uint64_t token = f.broker.Hold(kApp, id, holder).value().token;
  f.broker.Unhold(id, token + 1, "not this hold");
  EXPECT_EQ(f.Record(id).state, ChannelState::kEstablished);
  f.broker.Unhold(id, token, "the application went away");
  EXPECT_EQ(f.Record(id).state, ChannelState::kClosed);
  ASSERT_EQ(f.link->Closes().size(), 1u);
  EXPECT_EQ(f.link->Closes()[0].reason, "the application went away");
  EXPECT_TRUE(holder->Ends().empty());  // the ending hold is not told about itself
}

TEST(BrokerTest, APeersCloseReachesTheHolderAndIsChecked) {
  Fixture f;
  uint64_t id = f.Established();
  auto holder = std::make_shared<FakeHolder>();
  ASSERT_TRUE(f.broker.Hold(kApp, id, holder).ok());
  EXPECT_EQ(f.broker.OnCloseChannel({0, "x", kInstanceB}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(f.broker.OnCloseChannel({id, "x", "not-hex"}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(f.broker.OnCloseChannel({id + 1, "x", kInstanceB}).code(), StatusCode::kNotFound);
  EXPECT_EQ(f.broker.OnCloseChannel({id, "x", kInstanceA}).code(), StatusCode::kNotFound);
  EXPECT_TRUE(holder->Ends().empty());
  ASSERT_TRUE(f.broker.OnCloseChannel({id, "closed by the application", kInstanceB}).ok());
  ASSERT_EQ(holder->Ends().size(), 1u);
  EXPECT_EQ(holder->Ends()[0].first, ChannelState::kClosed);
  EXPECT_EQ(holder->Ends()[0].second, "closed by peer B: closed by the application");
  EXPECT_TRUE(f.link->Closes().empty());  // the peer knows
  EXPECT_TRUE(f.broker.OnCloseChannel({id, "again", kInstanceB}).ok());
  EXPECT_EQ(holder->Ends().size(), 1u);
}

TEST(BrokerTest, LosingThePeerFailsAWaitingConnectAndHoldsEstablishedChannels) {
  Fixture f;
  uint64_t id = f.Established();
  auto holder = std::make_shared<FakeHolder>();
  ASSERT_TRUE(f.broker.Hold(kApp, id, holder).ok());
  f.link->open_answer = nullptr;  // the next OpenChannel is never answered
  auto planned = f.broker.PlanChannel(kApp, "B", "svc", true);
  auto connect = std::async(std::launch::async, [&] {
    return f.broker.Connect(kApp, planned.value().channel_ids[0], TcpEnd(1)).status();
  });
  while (f.Record(planned.value().channel_ids[0]).peer_instance.empty()) {
    std::this_thread::sleep_for(1ms);
  }
  f.broker.OnPeerLost("cccccccccccccccccccccccccccccccc", "C", "another peer");
  EXPECT_EQ(connect.wait_for(50ms), std::future_status::timeout);
  f.broker.OnPeerLost(kInstanceB, "B", "no heartbeat for 5000 ms");
  ASSERT_EQ(connect.wait_for(5s), std::future_status::ready) << "Connect still waits";
  Status status = connect.get();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "peer daemon B lost: no heartbeat for 5000 ms");
  // The established channel's data path is the applications': it waits.
  EXPECT_TRUE(holder->Ends().empty());
  EXPECT_EQ(f.Record(id).state, ChannelState::kEstablished);
  EXPECT_EQ(f.Record(id).reason,
            "peer daemon B lost: no heartbeat for 5000 ms; waiting up to 10000 ms for it");
  EXPECT_TRUE(f.link->Closes().empty());
  // The late answer changes nothing.
  std::lock_guard lock(f.link->mu);
  f.link->waiting_open(ChannelEndpoints{TcpEnd(5000)});
  EXPECT_EQ(f.Record(planned.value().channel_ids[0]).state, ChannelState::kFailed);
}

// The broker as the sessions' user (SessionUser): a session down, at a
// version mismatch or with its circuit open is the peer lost; a peer's
// ChannelClosed event closes the channel; a session carries channels while
// any are open with it.
TEST(BrokerTest, ItsSessionsTellItOfAPeerLostAndOfClosesAndAskWhatTheyCarry) {
  for (PeerSessionState state : {PeerSessionState::kDown, PeerSessionState::kVersionMismatch,
                                 PeerSessionState::kCircuitOpen, PeerSessionState::kConnecting}) {
    SCOPED_TRACE(int(state));
    Fixture f;
    uint64_t id = f.Established();
    auto holder = std::make_shared<FakeHolder>();
    ASSERT_TRUE(f.broker.Hold(kApp, id, holder).ok());
    PeerSnapshot b;
    b.name = "B";
    b.address = "192.0.2.2:7581";
    b.remote = PeerHello{};
    b.remote->instance_id = kInstanceB;
    EXPECT_TRUE(f.broker.UsesSession(b));
    b.state = state;
    b.last_error = "no heartbeat for 5000 ms";
    f.broker.OnSessionState(b);
    bool lost = state != PeerSessionState::kConnecting;
    EXPECT_EQ(f.Record(id).reason.rfind("peer daemon B lost: no heartbeat for 5000 ms", 0) == 0,
              lost)
        << f.Record(id).reason;
    PeerEvent closed;
    closed.kind = PeerEvent::Kind::kChannelClosed;
    closed.channel_id = id;
    closed.reason = "closed by the peer's application";
    f.broker.OnSessionEvent(b, closed);
    EXPECT_TRUE(ChannelEnded(f.Record(id).state));
    EXPECT_FALSE(f.broker.UsesSession(b));
  }
}

TEST(BrokerTest, TheAcceptorTellsThePeerThroughItsSessionOrItsStream) {
  Fixture f;
  auto sink = std::make_shared<AcceptingSink>(&f.broker.services());
  auto reg = f.broker.services().Register("svc", sink, kApp);
  ASSERT_TRUE(f.broker.OnOpenChannel(From("hostB", 7), "127.0.0.1").ok());
  ASSERT_TRUE(f.broker.OnOpenChannel(From("hostB", 8), "127.0.0.1").ok());
  ASSERT_TRUE(f.broker.Release(kApp, 7, "closed by the application").ok());
  ASSERT_EQ(f.link->Closes().size(), 1u);
  EXPECT_EQ(f.link->Closes()[0].channel_id, 7u);
  EXPECT_EQ(sink->closed, std::vector<std::string>{"closed by the application"});
  f.instance_link = false;  // no session of ours to hostB: its stream to us
  ASSERT_TRUE(f.broker.Release(kApp, 8, "closed by the application").ok());
  EXPECT_EQ(f.link->Closes().size(), 1u);
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].first, kInstanceB);
  EXPECT_EQ(f.events[0].second.kind, PeerEvent::Kind::kChannelClosed);
  EXPECT_EQ(f.events[0].second.channel_id, 8u);
}

TEST(BrokerTest, HasChannelsWithSeesAPeersChannelsUntilTheyEnd) {
  Fixture f;
  const std::string kInstanceC(32, 'c');
  EXPECT_FALSE(f.broker.HasChannelsWith("B", "127.0.0.1:7581", kInstanceB));
  uint64_t id = f.Established();
  EXPECT_TRUE(f.broker.HasChannelsWith("B", "", ""));  // by the session's name
  EXPECT_TRUE(f.broker.HasChannelsWith("b-by-address", "", kInstanceB));
  EXPECT_FALSE(f.broker.HasChannelsWith("C", "192.0.2.3:7581", kInstanceC));
  ASSERT_TRUE(f.broker.Release(kApp, id, "closed by the application").ok());
  EXPECT_FALSE(f.broker.HasChannelsWith("B", "127.0.0.1:7581", kInstanceB));
  // An accepted channel: the initiator's daemon, by its instance id.
  auto sink = std::make_shared<AcceptingSink>(&f.broker.services());
  auto reg = f.broker.services().Register("svc", sink, kApp);
  ASSERT_TRUE(f.broker.OnOpenChannel(From("hostB", 9), "127.0.0.1").ok());
  EXPECT_TRUE(f.broker.HasChannelsWith("node-b", "192.0.2.2:7581", kInstanceB));
  EXPECT_FALSE(f.broker.HasChannelsWith("C", "192.0.2.3:7581", kInstanceC));
}

// The idle closer must not close a session between a channel's end and the
// teller naming that session to tell the peer (which would open it again):
// until then the ended channel still counts.
TEST(BrokerTest, AnEndedChannelUsesItsSessionUntilThePeerIsTold) {
  Fixture f;
  uint64_t id = f.Established();
  std::vector<bool> in_use_while_telling;
  f.on_find = [&] {
    in_use_while_telling.push_back(f.broker.HasChannelsWith("B", "127.0.0.1:7581", kInstanceB));
  };
  ASSERT_TRUE(f.broker.Release(kApp, id, "closed by the application").ok());
  f.on_find = nullptr;
  ASSERT_FALSE(in_use_while_telling.empty());
  EXPECT_EQ(in_use_while_telling.front(), true);
  ASSERT_EQ(f.link->Closes().size(), 1u);
  EXPECT_TRUE(ChannelEnded(f.Record(id).state));
  EXPECT_FALSE(f.broker.HasChannelsWith("B", "127.0.0.1:7581", kInstanceB));  // told
}

TEST(BrokerTest, SweepExpiresPlansAndUnheldChannelsAndDropsOldEntries) {
  Fixture f;
  uint64_t held = f.Established();
  ASSERT_TRUE(f.broker.Hold(kApp, held, std::make_shared<FakeHolder>()).ok());
  uint64_t unheld = f.Established();
  uint64_t planned = f.broker.PlanChannel(kApp, "B", "svc", true).value().channel_ids[0];
  f.clock.Advance(f.options.hold_grace);
  f.broker.Sweep();
  EXPECT_EQ(f.Record(unheld).state, ChannelState::kClosed);
  ASSERT_EQ(f.link->Closes().size(), 1u);  // the peer's side is closed too
  EXPECT_EQ(f.link->Closes()[0].channel_id, unheld);
  EXPECT_EQ(f.Record(planned).state, ChannelState::kPlanned);  // a slow app still has time
  f.clock.Advance(f.options.plan_lifetime - f.options.hold_grace);
  f.broker.Sweep();
  EXPECT_EQ(f.Record(planned).state, ChannelState::kFailed);
  EXPECT_NE(f.Record(planned).reason.find("did not Connect"), std::string::npos);
  Status late = f.broker.Connect(kApp, planned, TcpEnd(1)).status();
  EXPECT_NE(late.message().find("is failed: expired"), std::string::npos) << late.ToString();
  EXPECT_EQ(f.Record(held).state, ChannelState::kEstablished);
  EXPECT_EQ(f.broker.Channels().size(), 3u);  // ended entries stay a while
  f.clock.Advance(f.options.keep_ended);
  f.broker.Sweep();
  ASSERT_EQ(f.broker.Channels().size(), 1u);
  EXPECT_EQ(f.broker.Channels()[0].channel_id, held);
}

TEST(BrokerTest, ChannelLimitsRefuseNewChannelsUntilOneEnds) {
  Fixture f;
  f.broker.SetLimits(/*max_channels=*/3, /*max_channels_per_peer=*/2);
  uint64_t first = f.Established();
  f.Established();
  Status per_peer = f.broker.PlanChannel(kApp, "B", "svc", true).status();
  EXPECT_EQ(per_peer.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(per_peer.message().find("limits.max_channels_per_peer"), std::string::npos)
      << per_peer.ToString();
  // The peer's side counts too: a third channel from another host is the total's.
  auto sink = std::make_shared<AcceptingSink>(&f.broker.services());
  auto reg = f.broker.services().Register("svc", sink, kApp);
  ASSERT_TRUE(reg.ok());
  ASSERT_TRUE(f.broker.OnOpenChannel(From("hostC", 77), "127.0.0.1").ok());
  Status total = f.broker.OnOpenChannel(From("hostD", 78), "127.0.0.1").status();
  EXPECT_EQ(total.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(total.message().find("limits.max_channels)"), std::string::npos) << total.ToString();
  // An ended channel frees its slot.
  ASSERT_TRUE(f.broker.Release(kApp, first, "closed by the application").ok());
  EXPECT_TRUE(f.broker.PlanChannel(kApp, "B", "svc", true).ok());
  f.broker.SetLimits(0, 0);  // no limit
  EXPECT_TRUE(f.broker.PlanChannel(kApp, "B", "svc", true).ok());
}

TEST(BrokerTest, KeepsAtMostMaxEndedEntries) {
  Fixture f;
  f.options.max_ended = 2;
  Broker broker(f.options);
  for (int i = 0; i < 5; ++i) {
    auto planned = broker.PlanChannel(kApp, "B", "svc", true);
    ASSERT_TRUE(broker.Release(kApp, planned.value().channel_ids[0], "done").ok());
    f.clock.Advance(1ms);
  }
  broker.Sweep();
  EXPECT_EQ(broker.Channels().size(), 2u);
}

TEST(BrokerTest, ShutdownLeavesEstablishedChannelsToTheirApplications) {
  Fixture f;
  uint64_t id = f.Established();
  auto holder = std::make_shared<FakeHolder>();
  auto held = f.broker.Hold(kApp, id, holder);
  ASSERT_TRUE(held.ok());
  auto planned = f.broker.PlanChannel(kApp, "B", "svc", true);
  ASSERT_TRUE(planned.ok());
  f.broker.Shutdown();
  EXPECT_TRUE(holder->Ends().empty());
  EXPECT_EQ(f.Record(id).state, ChannelState::kEstablished);
  EXPECT_EQ(f.Record(planned.value().channel_ids[0]).state, ChannelState::kClosed);
  EXPECT_EQ(f.Record(planned.value().channel_ids[0]).reason, "rdmad on hostA stopped");
  // The lifeline ends because the daemon stops: the channel is not closed
  // and the peer is not told.
  f.broker.Unhold(id, held.value().token, "the application went away");
  EXPECT_EQ(f.Record(id).state, ChannelState::kEstablished);
  EXPECT_TRUE(f.link->Closes().empty());
  EXPECT_EQ(f.broker.PlanChannel(kApp, "B", "svc", true).status().code(), StatusCode::kUnavailable);
}

// A planned RDMA channel on device/port/gid.
uint64_t PlanRdma(Fixture& f, const std::string& device, int port, const std::string& gid) {
  f.path = PathDecision{};
  f.path->device = device;
  f.path->port = port;
  f.path->gid = gid;
  f.path->transport = Transport::kRoceV2;
  auto planned = f.broker.PlanChannel(kApp, "B", "svc", false);
  EXPECT_TRUE(planned.ok()) << planned.status().ToString();
  EXPECT_TRUE(planned.value().plan.path.has_value());
  return planned.ok() ? planned.value().channel_ids[0] : 0;
}

TEST(BrokerTest, LosingALocalPathFailsTheRdmaChannelsOnIt) {
  Fixture f;
  uint64_t tcp = f.Established();
  uint64_t p1 = PlanRdma(f, "rxe0", 1, "gid-a");
  uint64_t p1b = PlanRdma(f, "rxe0", 1, "gid-b");
  uint64_t p2 = PlanRdma(f, "rxe0", 2, "gid-a");
  uint64_t other = PlanRdma(f, "mlx5_0", 1, "gid-a");
  EXPECT_EQ(f.Record(p1).device, "rxe0");
  EXPECT_EQ(f.Record(p1).port, 1);
  EXPECT_EQ(f.Record(tcp).device, "");

  EXPECT_EQ(f.broker.OnPathLost("rxe0", 1, "gid-b", "rxe0 port 1: gid-b removed"), 1u);
  EXPECT_EQ(f.Record(p1b).state, ChannelState::kFailed);
  EXPECT_EQ(f.Record(p1b).reason, "rxe0 port 1: gid-b removed");
  EXPECT_EQ(f.Record(p1).state, ChannelState::kPlanned);

  EXPECT_EQ(f.broker.OnPathLost("rxe0", 1, "", "rxe0 port 1: ACTIVE -> DOWN"), 1u);
  EXPECT_EQ(f.Record(p1).state, ChannelState::kFailed);
  EXPECT_EQ(f.Record(p2).state, ChannelState::kPlanned);
  EXPECT_EQ(f.broker.OnPathLost("rxe0", 0, "", "rxe0 removed"), 1u);
  EXPECT_EQ(f.Record(p2).state, ChannelState::kFailed);
  EXPECT_EQ(f.Record(other).state, ChannelState::kPlanned);
  EXPECT_EQ(f.Record(tcp).state, ChannelState::kEstablished);
  EXPECT_EQ(f.broker.OnPathLost("rxe0", 0, "", "again"), 0u);
}

TEST(BrokerTest, FailLostPathsActsOnRemovalsAndPortsThatLeaveActive) {
  Fixture f;
  uint64_t id = PlanRdma(f, "rxe0", 1, "gid-a");
  Inventory inventory;
  DeviceInfo device;
  device.name = "rxe0";
  PortInfo port;
  port.port = 1;
  port.state = 4;  // ACTIVE again
  device.ports.push_back(port);
  inventory.devices.push_back(device);
  using Kind = InventoryChange::Kind;
  std::vector<InventoryChange> harmless = {
      {Kind::kPortStateChanged, "rxe0", 1, "rxe0 port 1: DOWN -> ACTIVE", ""},
      {Kind::kGidAdded, "rxe0", 1, "added", "gid-b"},
      {Kind::kGidRemoved, "rxe0", 1, "removed", "gid-b"},
      {Kind::kDeviceAdded, "rxe1", 0, "rxe1 added", ""}};
  EXPECT_EQ(FailLostPaths(f.broker, inventory, harmless), 0u);
  EXPECT_EQ(f.Record(id).state, ChannelState::kPlanned);
  inventory.devices[0].ports[0].state = 1;  // DOWN
  EXPECT_EQ(FailLostPaths(f.broker, inventory,
                          {{Kind::kPortStateChanged, "rxe0", 1, "rxe0 port 1: went DOWN", ""}}),
            1u);
  EXPECT_EQ(f.Record(id).reason, "rxe0 port 1: went DOWN");
  uint64_t again = PlanRdma(f, "rxe0", 1, "gid-a");
  EXPECT_EQ(
      FailLostPaths(f.broker, Inventory{}, {{Kind::kDeviceRemoved, "rxe0", 0, "rxe0 removed", ""}}),
      1u);
  EXPECT_EQ(f.Record(again).state, ChannelState::kFailed);
}

}  // namespace
}  // namespace rdmad
