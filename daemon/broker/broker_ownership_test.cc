// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Ownership (docs/security.md): a channel and a listener's requests belong
// to the uid of the local client that made them; another uid gets
// NOT_FOUND, as for an object that does not exist; an admin sees and
// closes everything but does not take a channel over.

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <optional>

#include "daemon/broker/broker.h"
#include "daemon/broker/broker_test_fixture.h"

namespace rdmad {
namespace {

using namespace rdmad::testing;

const Caller kOther = Caller::User(2000, 5353);
const Caller kAdmin{.pid = 6464, .uid = 3000, .admin = true, .name = "pid 6464"};

// A listener that hears nothing.
class FakeServiceSink : public ServiceSink {
 public:
  void OnIncoming(const IncomingChannelRequest&) override {}
  void OnChannelClosed(uint64_t, const std::string&) override {}
};

// A listener that hands each request to answer (on the offering thread).
class Sink : public ServiceSink {
 public:
  std::function<void(const IncomingChannelRequest&)> answer;
  void OnIncoming(const IncomingChannelRequest& r) override { answer(r); }
  void OnChannelClosed(uint64_t, const std::string&) override {}
};

TEST(BrokerOwnershipTest, AnotherUidCannotConnectOrHoldAPlannedChannel) {
  Fixture f;
  f.link->open_answer = [](const OpenChannelCall&) -> StatusOr<ChannelEndpoint> {
    return TcpEnd(5000);
  };
  auto planned = f.broker.PlanChannel(kApp, "B", "svc", true);
  ASSERT_TRUE(planned.ok());
  uint64_t id = planned.value().channel_ids[0];
  EXPECT_EQ(f.Record(id).owner_uid, kApp.uid);
  EXPECT_EQ(f.Record(id).owner_pid, kApp.pid);
  for (const Caller& intruder : {kOther, kAdmin}) {
    auto taken = f.broker.Connect(intruder, id, TcpEnd(1));
    EXPECT_EQ(taken.status().code(), StatusCode::kNotFound) << intruder.name;
    EXPECT_EQ(taken.status().message(), "no planned channel " + std::to_string(id));
  }
  EXPECT_EQ(f.Record(id).state, ChannelState::kPlanned) << "the intruders changed nothing";
  ASSERT_TRUE(f.broker.Connect(kApp, id, TcpEnd(1)).ok());
  for (const Caller& intruder : {kOther, kAdmin}) {
    auto held = f.broker.Hold(intruder, id, std::make_shared<FakeHolder>());
    EXPECT_EQ(held.status().code(), StatusCode::kNotFound) << intruder.name;
  }
  EXPECT_TRUE(f.broker.Hold(kApp, id, std::make_shared<FakeHolder>()).ok());
}

TEST(BrokerOwnershipTest, OnlyTheOwnerAndAdminsCloseAndSeeAChannel) {
  Fixture f;
  uint64_t mine = f.Established();
  Status other = f.broker.Release(kOther, mine, "x");
  EXPECT_EQ(other.code(), StatusCode::kNotFound);
  // The answer for an id that does not exist.
  char hex[32];
  std::snprintf(hex, sizeof hex, "%#018llx", static_cast<unsigned long long>(mine));
  EXPECT_EQ(other.message(), std::string("no channel ") + hex + " on hostA");
  EXPECT_EQ(f.broker.Release(kOther, 0x1234, "x").message(),
            "no channel 0x0000000000001234 on hostA");
  EXPECT_EQ(f.Record(mine).state, ChannelState::kEstablished);
  EXPECT_TRUE(f.broker.ChannelsFor(kOther).empty());
  ASSERT_EQ(f.broker.ChannelsFor(kApp).size(), 1u);
  ASSERT_EQ(f.broker.ChannelsFor(kAdmin).size(), 1u);
  Caller no_creds;  // a connection the kernel gave no credentials for
  EXPECT_TRUE(f.broker.ChannelsFor(no_creds).empty());
  EXPECT_EQ(f.broker.Release(no_creds, mine, "x").code(), StatusCode::kNotFound);

  ASSERT_TRUE(f.broker.Release(kAdmin, mine, "closed by rdmactl close").ok());
  EXPECT_EQ(f.Record(mine).state, ChannelState::kClosed);
  ASSERT_EQ(f.link->Closes().size(), 1u) << "the peer is told of an admin's close too";
}

TEST(BrokerOwnershipTest, AnAcceptedChannelBelongsToTheListener) {
  Fixture f;
  auto sink = std::make_shared<Sink>();
  std::optional<StatusOr<Broker::HoldResult>> held_at_once;
  sink->answer = [&](const IncomingChannelRequest& r) {
    ServiceRegistry& services = f.broker.services();
    EXPECT_EQ(services.ChannelsOf(kOther, r.request_id).status().code(), StatusCode::kNotFound);
    EXPECT_EQ(services.Accept(kOther, r.request_id, {TcpEnd(6000)}).code(), StatusCode::kNotFound);
    EXPECT_EQ(services.Reject(kOther, r.request_id, "mine now").code(), StatusCode::kNotFound);
    EXPECT_EQ(services.Accept(kAdmin, r.request_id, {TcpEnd(6000)}).code(), StatusCode::kNotFound);
    EXPECT_EQ(services.ChannelsOf(kApp, r.request_id).value(),
              std::vector<uint64_t>{r.channels.at(0).channel_id});
    EXPECT_TRUE(services.Accept(kApp, r.request_id, {TcpEnd(6000)}).ok());
    // The listener's application holds the channel as soon as it accepted,
    // before the offer returns.
    held_at_once = f.broker.Hold(kApp, r.channels.at(0).channel_id, std::make_shared<FakeHolder>());
  };
  auto reg = f.broker.services().Register("svc", sink, kApp);
  ASSERT_TRUE(reg.ok());
  OpenChannelCall call = CallFromB({77});
  ASSERT_TRUE(f.broker.OnOpenChannel(call, "127.0.0.1").ok());
  ASSERT_TRUE(held_at_once.has_value());
  EXPECT_TRUE(held_at_once->ok()) << held_at_once->status().ToString();
  EXPECT_EQ(f.Record(77).owner_uid, kApp.uid);
  EXPECT_EQ(f.broker.Hold(kOther, 77, std::make_shared<FakeHolder>()).status().code(),
            StatusCode::kNotFound);
}

TEST(BrokerOwnershipTest, ALeaseTakesAChannelBackOnlyForItsUid) {
  Fixture f;
  uint64_t id = f.Established();
  StatusOr<ChannelLease> lease = f.broker.LeaseOf(id);
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease.value().owner_uid, kApp.uid);
  // Another daemon instance (after a restart) adopts from the lease.
  BrokerOptions options = f.Options();
  options.instance_id = "cccccccccccccccccccccccccccccccc";
  Broker next(options);
  EXPECT_EQ(next.Adopt(kOther, id, lease.value()).code(), StatusCode::kNotFound);
  EXPECT_EQ(next.Adopt(kAdmin, id, lease.value()).code(), StatusCode::kNotFound);
  EXPECT_TRUE(next.Channels().empty()) << "a refused lease leaves nothing behind";
  ASSERT_TRUE(next.Adopt(kApp, id, lease.value()).ok());
  EXPECT_EQ(next.Adopt(kOther, id, lease.value()).code(), StatusCode::kNotFound)
      << "nor once the channel is known";
  EXPECT_TRUE(next.Hold(kApp, id, std::make_shared<FakeHolder>()).ok());
}

TEST(BrokerOwnershipTest, PlansAndChannelsAreLimitedPerClientAndPerUid) {
  Fixture f;
  f.broker.SetOwnerLimits({.channels_per_client = 3,
                           .channels_per_uid = 4,
                           .plans_per_client = 2,
                           .plans_per_uid = 10});
  ASSERT_TRUE(f.broker.PlanChannel(kApp, "B", "svc", true).ok());
  ASSERT_TRUE(f.broker.PlanChannel(kApp, "B", "svc", true).ok());
  auto plans = f.broker.PlanChannel(kApp, "B", "svc", true);
  EXPECT_EQ(plans.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(plans.status().message(),
            "client pid 4242 has 2 channels planned and not connected, its limit "
            "(limits.max_plans_per_client = 2)");
  EXPECT_TRUE(f.broker.PlanChannel(kOther, "B", "svc", true).ok()) << "another uid plans on";
  // A third channel of the same process once the plans are connected...
  for (const ChannelRecord& r : f.broker.ChannelsFor(kApp)) {
    f.link->open_answer = [](const OpenChannelCall&) -> StatusOr<ChannelEndpoint> {
      return TcpEnd(5000);
    };
    ASSERT_TRUE(f.broker.Connect(kApp, r.channel_id, TcpEnd(1)).ok());
  }
  ASSERT_TRUE(f.broker.PlanChannel(kApp, "B", "svc", true).ok());
  auto channels = f.broker.PlanChannel(kApp, "B", "svc", true);
  EXPECT_EQ(channels.status().message(),
            "client pid 4242 has 3 channels open, its limit (limits.max_channels_per_client = 3)");
  // ...and one more of another process of the uid; then the uid is full.
  const Caller sibling = Caller::User(kApp.uid, 4343);
  ASSERT_TRUE(f.broker.PlanChannel(sibling, "B", "svc", true).ok());
  auto uid = f.broker.PlanChannel(sibling, "B", "svc", true);
  EXPECT_EQ(uid.status().message(),
            "uid 1000 has 4 channels open, its limit (limits.max_channels_per_uid = 4)");
  EXPECT_EQ(f.broker.AdmitChannels(sibling, {0x77}).code(), StatusCode::kResourceExhausted)
      << "nor may it accept one";
  EXPECT_TRUE(f.broker.AdmitChannels(Caller::Daemon(), {0x77}).ok()) << "the daemon has no limit";
  // The channel being accepted is not counted against its acceptor.
  uint64_t last = f.broker.ChannelsFor(sibling).back().channel_id;
  EXPECT_TRUE(f.broker.AdmitChannels(sibling, {last}).ok());
}

TEST(BrokerOwnershipTest, ListenersAreLimitedPerClientAndPerUid) {
  Fixture f;
  ServiceRegistry& services = f.broker.services();
  services.SetLimits(2, 3);
  auto sink = std::make_shared<FakeServiceSink>();
  std::vector<std::unique_ptr<ServiceRegistration>> held;
  for (const char* name : {"a", "b"}) held.push_back(services.Register(name, sink, kApp).value());
  auto client = services.Register("c", sink, kApp);
  EXPECT_EQ(client.status().message(),
            "client pid 4242 has 2 listeners, its limit (limits.max_listeners_per_client = 2)");
  const Caller sibling = Caller::User(kApp.uid, 4343);
  held.push_back(services.Register("c", sink, sibling).value());
  auto uid = services.Register("d", sink, sibling);
  EXPECT_EQ(uid.status().message(),
            "uid 1000 has 3 listeners, its limit (limits.max_listeners_per_uid = 3)");
  EXPECT_TRUE(services.Register("d", sink, kOther).ok()) << "another uid listens on";
  held.pop_back();
  EXPECT_TRUE(services.Register("d2", sink, sibling).ok()) << "a listener gone frees its slot";
}

}  // namespace
}  // namespace rdmad
