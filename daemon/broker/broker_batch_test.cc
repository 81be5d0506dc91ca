// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Batches of channels (Client::ConnectMany) through the broker: one plan,
// one OpenChannel, one offer to the listener, all or nothing.

#include <future>
#include <set>
#include <thread>

#include "daemon/broker/broker.h"
#include "daemon/broker/broker_test_fixture.h"
#include "gtest/gtest.h"

namespace rdmad {
namespace {

using testing::CallFromB;
using testing::Fixture;
using testing::kApp;
using testing::kInstanceB;
using testing::TcpEnd;

// The initiator's side of every channel of a plan, in its order.
std::vector<ChannelOpening> Openings(const PlannedChannel& planned) {
  std::vector<ChannelOpening> out;
  for (uint64_t id : planned.channel_ids) out.push_back({id, TcpEnd(1)});
  return out;
}

// Answers every request with one endpoint per channel, ports 6000 up.
class BatchSink : public ServiceSink {
 public:
  explicit BatchSink(ServiceRegistry* registry) : registry_(registry) {}
  void OnIncoming(const IncomingChannelRequest& r) override {
    seen.push_back(r);
    ChannelEndpoints answer;
    for (size_t i = 0; i < r.channels.size(); ++i) answer.push_back(TcpEnd(uint16_t(6000 + i)));
    ChannelEndpoints short_by_one(answer.begin(), answer.end() - 1);
    EXPECT_EQ(registry_->Accept(kApp, r.request_id, short_by_one).code(),
              StatusCode::kInvalidArgument);  // the request stays open for a right answer
    EXPECT_TRUE(registry_->Accept(kApp, r.request_id, answer).ok());
  }
  void OnChannelClosed(uint64_t, const std::string&) override {}
  std::vector<IncomingChannelRequest> seen;

 private:
  ServiceRegistry* registry_;
};

TEST(BrokerBatchTest, APlanOfABatchHasDistinctIdsAndOnePlan) {
  Fixture f;
  auto planned = f.broker.PlanChannel(kApp, "B", "svc", true, 5);
  ASSERT_TRUE(planned.ok()) << planned.status().ToString();
  ASSERT_EQ(planned.value().channel_ids.size(), 5u);
  std::set<uint64_t> ids(planned.value().channel_ids.begin(), planned.value().channel_ids.end());
  EXPECT_EQ(ids.size(), 5u);
  EXPECT_EQ(f.broker.Channels().size(), 5u);
  for (uint64_t id : ids) EXPECT_EQ(f.Record(id).state, ChannelState::kPlanned);
  for (size_t count : {size_t(0), kMaxChannelBatch + 1}) {
    EXPECT_EQ(f.broker.PlanChannel(kApp, "B", "svc", true, count).status().code(),
              StatusCode::kInvalidArgument)
        << count;
  }
}

TEST(BrokerBatchTest, ConnectRelaysABatchInOneOpenChannel) {
  Fixture f;
  int calls = 0;
  f.link->open_batch_answer = [&](const OpenChannelCall& call) -> StatusOr<ChannelEndpoints> {
    ++calls;
    EXPECT_EQ(call.channels.size(), 3u);
    ChannelEndpoints answer;
    for (size_t i = 0; i < call.channels.size(); ++i) answer.push_back(TcpEnd(uint16_t(5000 + i)));
    return answer;
  };
  auto planned = f.broker.PlanChannel(kApp, "B", "svc", true, 3);
  ASSERT_TRUE(planned.ok());
  auto reply = f.broker.Connect(kApp, Openings(planned.value()));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(reply.value().size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(reply.value()[i].tcp->port, 5000 + i);
  for (const ChannelRecord& r : f.broker.Channels()) {
    EXPECT_EQ(r.state, ChannelState::kEstablished);
    EXPECT_EQ(r.peer_instance, kInstanceB);
  }
}

TEST(BrokerBatchTest, ABatchMustBeOnePlansChannelsEachOnce) {
  Fixture f;
  auto one = f.broker.PlanChannel(kApp, "B", "svc", true, 2);
  auto other = f.broker.PlanChannel(kApp, "B", "other", true);
  ASSERT_TRUE(one.ok() && other.ok());
  std::vector<ChannelOpening> mixed = Openings(one.value());
  mixed.push_back({other.value().channel_ids[0], TcpEnd(1)});
  Status refused = f.broker.Connect(kApp, mixed).status();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("channels[2].channel_id"), std::string::npos)
      << refused.message();
  std::vector<ChannelOpening> twice = Openings(one.value());
  twice.push_back(twice[0]);
  EXPECT_EQ(f.broker.Connect(kApp, twice).status().code(), StatusCode::kInvalidArgument);
  // Nothing moved: the plans are still there to connect.
  for (const ChannelRecord& r : f.broker.Channels()) EXPECT_EQ(r.state, ChannelState::kPlanned);
}

TEST(BrokerBatchTest, WhenThePeerFailsOneAnswerEveryChannelFails) {
  Fixture f;
  f.link->open_batch_answer = [](const OpenChannelCall&) -> StatusOr<ChannelEndpoints> {
    return ChannelEndpoints{TcpEnd(5000), TcpEnd(0), TcpEnd(5002)};  // garbage in the middle
  };
  auto planned = f.broker.PlanChannel(kApp, "B", "svc", true, 3);
  auto reply = f.broker.Connect(kApp, Openings(planned.value()));
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(reply.status().message().find("the peer's channels[1]."), std::string::npos)
      << reply.status().message();
  for (const ChannelRecord& r : f.broker.Channels()) EXPECT_EQ(r.state, ChannelState::kFailed);
  EXPECT_EQ(f.link->Closes().size(), 3u);  // the peer may hold all three

  f.link->open_batch_answer = [](const OpenChannelCall&) -> StatusOr<ChannelEndpoints> {
    return Status::PermissionDenied("rejected: busy");
  };
  planned = f.broker.PlanChannel(kApp, "B", "svc", true, 2);
  reply = f.broker.Connect(kApp, Openings(planned.value()));
  EXPECT_EQ(reply.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(f.Record(planned.value().channel_ids[1]).state, ChannelState::kFailed);
  EXPECT_EQ(f.link->Closes().size(), 3u);  // a rejected batch is nothing to the peer
}

TEST(BrokerBatchTest, AChannelLetGoDuringTheHandshakeTakesItsBatchWithIt) {
  Fixture f;
  f.link->open_answer = nullptr;  // the OpenChannel waits
  auto planned = f.broker.PlanChannel(kApp, "B", "svc", true, 3);
  auto connecting = std::async(std::launch::async,
                               [&] { return f.broker.Connect(kApp, Openings(planned.value())); });
  for (int i = 0; i < 500; ++i) {
    std::lock_guard lock(f.link->mu);
    if (f.link->waiting_open) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  uint64_t gone = planned.value().channel_ids[2];
  ASSERT_TRUE(f.broker.Release(kApp, gone, "closed by the application").ok());
  {
    std::lock_guard lock(f.link->mu);
    ASSERT_TRUE(f.link->waiting_open);
    f.link->waiting_open(ChannelEndpoints{TcpEnd(5000), TcpEnd(5001), TcpEnd(5002)});
  }
  auto reply = connecting.get();
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  for (const ChannelRecord& r : f.broker.Channels()) EXPECT_TRUE(ChannelEnded(r.state));
  // The peer accepted all three: it hears of each once.
  std::set<uint64_t> told;
  for (const CloseChannelCall& c : f.link->Closes()) EXPECT_TRUE(told.insert(c.channel_id).second);
  EXPECT_EQ(told.size(), 3u);
}

TEST(BrokerBatchTest, OnOpenChannelOffersABatchAsOneRequest) {
  Fixture f;
  auto sink = std::make_shared<BatchSink>(&f.broker.services());
  auto reg = f.broker.services().Register("svc", sink, kApp);
  ASSERT_TRUE(reg.ok());
  OpenChannelCall call{.service = "svc",
                       .initiator_host = "hostB",
                       .initiator_instance = kInstanceB,
                       .channels = {{77, TcpEnd(1)}, {78, TcpEnd(1)}, {79, TcpEnd(1)}}};
  auto answer = f.broker.OnOpenChannel(call, "127.0.0.1");
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_EQ(sink->seen.size(), 1u);
  EXPECT_EQ(sink->seen[0].channels.size(), 3u);
  ASSERT_EQ(answer.value().size(), 3u);
  for (uint64_t id : {77, 78, 79}) {
    EXPECT_EQ(answer.value()[id - 77].tcp->port, 6000 + (id - 77));
    EXPECT_EQ(f.Record(id).state, ChannelState::kEstablished);
    EXPECT_EQ(f.Record(id).owner_uid, kApp.uid);
  }
  OpenChannelCall repeated = call;
  repeated.channels = {{90, TcpEnd(1)}, {90, TcpEnd(1)}};
  EXPECT_EQ(f.broker.OnOpenChannel(repeated, "127.0.0.1").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(BrokerBatchTest, ABatchCountsWholeAgainstTheLimits) {
  Fixture f;
  f.broker.SetLimits(3, 0);
  EXPECT_EQ(f.broker.PlanChannel(kApp, "B", "svc", true, 4).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(f.broker.PlanChannel(kApp, "B", "svc", true, 3).ok());
  EXPECT_EQ(f.broker.PlanChannel(kApp, "B", "svc", true, 1).status().code(),
            StatusCode::kResourceExhausted);

  Fixture g;
  g.broker.SetLimits(2, 0);
  auto sink = std::make_shared<BatchSink>(&g.broker.services());
  auto reg = g.broker.services().Register("svc", sink, kApp);
  OpenChannelCall call = CallFromB({77, 78, 79});
  EXPECT_EQ(g.broker.OnOpenChannel(call, "127.0.0.1").status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(sink->seen.empty());

  Fixture h;
  h.broker.SetOwnerLimits(OwnerLimits{2, 0, 0, 0});
  EXPECT_EQ(h.broker.AdmitChannels(kApp, {1, 2, 3}).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(h.broker.AdmitChannels(kApp, {1, 2}).ok());
}

}  // namespace
}  // namespace rdmad
