// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/core/broker.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;

ChannelEndpoint TcpEnd(uint16_t port) {
  ChannelEndpoint e;
  e.tcp = internal::TcpEndpoint{};
  e.tcp->host = "127.0.0.1";
  e.tcp->port = port;
  e.tcp->token[0] = 1;
  return e;
}

// A link whose OpenChannel is answered by the given function.
class FakeLink : public PeerLink {
 public:
  std::function<StatusOr<ChannelEndpoint>(const OpenChannelCall&)> answer;
  std::string target_ = "127.0.0.1:7581";
  const std::string& target() const override { return target_; }
  void Hello(const PeerHello&, std::chrono::milliseconds, HelloDone done) override {
    done(Status::Unimplemented("fake"));
  }
  std::unique_ptr<PeerStream> OpenSession(const SessionOpen&, EventCallback,
                                          EndCallback on_end) override {
    on_end(Status::Unimplemented("fake"));
    return nullptr;
  }
  void OpenChannel(const OpenChannelCall& call, std::chrono::milliseconds,
                   OpenDone done) override {
    done(answer(call));
  }
};

struct Fixture {
  std::shared_ptr<FakeLink> link = std::make_shared<FakeLink>();
  bool up = true;
  Broker broker{Options()};

  BrokerOptions Options() {
    BrokerOptions o;
    o.host_name = "hostA";
    o.instance_id = "0123456789abcdef0123456789abcdef";
    o.accept_deadline = 2000ms;
    o.resolve = [](const PathRequest& r) -> StatusOr<PathDecision> {
      return Status::NotFound("no RDMA device");
    };
    o.find_peer = [this](const std::string& name) -> StatusOr<BrokerPeer> {
      if (name != "B") return Status::NotFound("unknown peer " + name);
      BrokerPeer p{"B", "127.0.0.1:7581", Status::Unavailable("peer B is down: refused")};
      if (up) p.link = std::static_pointer_cast<PeerLink>(link);
      return p;
    };
    return o;
  }
};

TEST(BrokerTest, PlansTcpWithTheReasonWithoutAPath) {
  Fixture f;
  auto planned = f.broker.PlanChannel("B", "svc", false);
  ASSERT_TRUE(planned.ok()) << planned.status().ToString();
  EXPECT_FALSE(planned.value().plan.path.has_value());
  EXPECT_NE(planned.value().plan.tcp_reason.find("no RDMA path to 127.0.0.1"), std::string::npos);
  EXPECT_EQ(planned.value().peer_address, "127.0.0.1");
  EXPECT_EQ(f.broker.PlanChannel("C", "svc", false).status().code(), StatusCode::kNotFound);
}

TEST(BrokerTest, ConnectRelaysAndRecordsTheChannel) {
  Fixture f;
  f.link->answer = [](const OpenChannelCall& call) -> StatusOr<ChannelEndpoint> {
    EXPECT_EQ(call.service, "svc");
    EXPECT_EQ(call.initiator_host, "hostA");
    return TcpEnd(5000);
  };
  auto planned = f.broker.PlanChannel("B", "svc", true);
  ASSERT_TRUE(planned.ok());
  auto reply = f.broker.Connect(planned.value().channel_id, TcpEnd(1));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply.value().tcp->port, 5000);
  auto channels = f.broker.Channels();
  ASSERT_EQ(channels.size(), 1u);
  EXPECT_EQ(channels[0].state, ChannelState::kEstablished);
  EXPECT_EQ(channels[0].transport, "TCP");
  EXPECT_EQ(f.broker.Connect(planned.value().channel_id, TcpEnd(1)).status().code(),
            StatusCode::kNotFound);
}

TEST(BrokerTest, PeerErrorsAndGarbageAreStatuses) {
  Fixture f;
  f.link->answer = [](const OpenChannelCall&) -> StatusOr<ChannelEndpoint> {
    return TcpEnd(0);  // garbage from the peer
  };
  auto planned = f.broker.PlanChannel("B", "svc", false);
  auto reply = f.broker.Connect(planned.value().channel_id, TcpEnd(1));
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(reply.status().message().find("the peer's TCP endpoint: port 0"), std::string::npos);

  ChannelEndpoint bad;
  bad.rdma = internal::RdmaEndpoint{};
  bad.rdma->qpn = 0x1000000;
  planned = f.broker.PlanChannel("B", "svc", false);
  EXPECT_EQ(f.broker.Connect(planned.value().channel_id, bad).status().code(),
            StatusCode::kInvalidArgument);

  f.up = false;
  planned = f.broker.PlanChannel("B", "svc", false);
  reply = f.broker.Connect(planned.value().channel_id, TcpEnd(1));
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(reply.status().message().find("refused"), std::string::npos);
}

class AcceptingSink : public ServiceSink {
 public:
  explicit AcceptingSink(ServiceRegistry* r) : registry(r) {}
  ServiceRegistry* registry;
  IncomingChannelRequest seen;
  void OnIncoming(const IncomingChannelRequest& r) override {
    seen = r;
    EXPECT_TRUE(registry->Accept(r.request_id, TcpEnd(6000)).ok());
  }
  void OnChannelClosed(uint64_t, const std::string&) override {}
};

TEST(BrokerTest, OnOpenChannelOffersToTheListenerWithThisSidesPlan) {
  Fixture f;
  OpenChannelCall call{77, "svc", "hostA", "ff", TcpEnd(1)};
  EXPECT_EQ(f.broker.OnOpenChannel(call, "127.0.0.1").status().message(),
            "no service svc on hostA");
  auto sink = std::make_shared<AcceptingSink>(&f.broker.services());
  auto reg = f.broker.services().Register("svc", sink);
  ASSERT_TRUE(reg.ok());
  auto answer = f.broker.OnOpenChannel(call, "127.0.0.1");
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer.value().tcp->port, 6000);
  EXPECT_EQ(sink->seen.plan.tcp_reason, "the initiator chose TCP");
  EXPECT_EQ(sink->seen.channel_id, 77u);
  call.initiator.tcp.reset();
  EXPECT_EQ(f.broker.OnOpenChannel(call, "127.0.0.1").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(BrokerTest, HostOfAddress) {
  EXPECT_EQ(HostOfAddress("127.0.0.1:7581"), "127.0.0.1");
  EXPECT_EQ(HostOfAddress("[::1]:7581"), "::1");
  EXPECT_EQ(HostOfAddress("::1"), "::1");
  EXPECT_EQ(HostOfAddress("hostb"), "hostb");
}

}  // namespace
}  // namespace rdmad
