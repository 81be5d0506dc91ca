// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/service_registry.h"

#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;

const Caller kApp = Caller::User(1000, 4242);

ChannelEndpoint TcpEnd() {
  ChannelEndpoint e;
  e.tcp = internal::TcpEndpoint{};
  e.tcp->host = "127.0.0.1";
  e.tcp->port = 40000;
  e.tcp->token[0] = 7;
  return e;
}

// Records requests; answers each with the given function, on its own thread.
class FakeSink : public ServiceSink {
 public:
  std::function<void(const IncomingChannelRequest&)> on_incoming;
  std::vector<std::pair<uint64_t, std::string>> closed;
  void OnIncoming(const IncomingChannelRequest& r) override {
    if (on_incoming) on_incoming(r);
  }
  void OnChannelClosed(uint64_t id, const std::string& reason) override {
    closed.emplace_back(id, reason);
  }
};

IncomingChannelRequest Request(std::chrono::milliseconds deadline = 2000ms) {
  IncomingChannelRequest r;
  r.peer = "hostA";
  r.service = "svc";
  r.channels = {{42, TcpEnd()}};
  r.deadline = deadline;
  return r;
}

TEST(ServiceRegistryTest, UnknownServiceIsNotFoundNamingHost) {
  ServiceRegistry registry("hostB");
  auto answer = registry.Offer(Request());
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(answer.status().message(), "no service svc on hostB");
}

TEST(ServiceRegistryTest, SecondListenerIsAlreadyExistsUntilTheFirstGoes) {
  ServiceRegistry registry("hostB");
  auto first = registry.Register("svc", std::make_shared<FakeSink>(), kApp);
  ASSERT_TRUE(first.ok());
  auto second = registry.Register("svc", std::make_shared<FakeSink>(), kApp);
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.service_count(), 1u);
  first.value().reset();
  EXPECT_EQ(registry.service_count(), 0u);
  EXPECT_TRUE(registry.Register("svc", std::make_shared<FakeSink>(), kApp).ok());
}

TEST(ServiceRegistryTest, MalformedNamesAreInvalid) {
  ServiceRegistry registry("hostB");
  for (std::string name : {std::string(), std::string(65, 'a'), std::string("a b")}) {
    EXPECT_EQ(registry.Register(name, std::make_shared<FakeSink>(), kApp).status().code(),
              StatusCode::kInvalidArgument)
        << name;
  }
}

TEST(ServiceRegistryTest, AcceptHandsBackTheEndpoint) {
  ServiceRegistry registry("hostB");
  auto sink = std::make_shared<FakeSink>();
  std::vector<std::jthread> threads;
  sink->on_incoming = [&](const IncomingChannelRequest& r) {
    EXPECT_EQ(r.channels.at(0).channel_id, 42u);
    threads.emplace_back([&registry, id = r.request_id] {
      ChannelEndpoint bad = TcpEnd();
      bad.tcp->port = 0;
      EXPECT_EQ(registry.Accept(kApp, id, {bad}).code(), StatusCode::kInvalidArgument);
      EXPECT_TRUE(registry.Accept(kApp, id, {TcpEnd()}).ok());
      EXPECT_EQ(registry.Accept(kApp, id, {TcpEnd()}).code(), StatusCode::kNotFound);
    });
  };
  auto reg = registry.Register("svc", sink, kApp);
  ASSERT_TRUE(reg.ok());
  auto answer = registry.Offer(Request());
  for (auto& t : threads) t.join();
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_EQ(answer.value().size(), 1u);
  EXPECT_EQ(answer.value()[0].tcp->port, 40000);
}

TEST(ServiceRegistryTest, RejectIsPermissionDeniedWithTheReason) {
  ServiceRegistry registry("hostB");
  auto sink = std::make_shared<FakeSink>();
  sink->on_incoming = [&](const IncomingChannelRequest& r) {
    EXPECT_TRUE(registry.Reject(kApp, r.request_id, "busy").ok());  // answered before the wait
  };
  auto reg = registry.Register("svc", sink, kApp);
  auto answer = registry.Offer(Request());
  EXPECT_EQ(answer.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(answer.status().message(), "rejected: busy");
}

TEST(ServiceRegistryTest, NoAnswerIsDeadlineExceededAndListenerLossAborts) {
  ServiceRegistry registry("hostB");
  auto reg = registry.Register("svc", std::make_shared<FakeSink>(), kApp);
  EXPECT_EQ(registry.Offer(Request(50ms)).status().code(), StatusCode::kDeadlineExceeded);
  auto waiting = std::async(std::launch::async, [&] { return registry.Offer(Request()); });
  std::this_thread::sleep_for(50ms);
  reg.value().reset();
  EXPECT_EQ(waiting.get().status().code(), StatusCode::kAborted);
}

TEST(ServiceRegistryTest, ValidatesEndpoints) {
  ChannelEndpoint none;
  EXPECT_EQ(ValidateChannelEndpoint(none).code(), StatusCode::kInvalidArgument);
  ChannelEndpoint host = TcpEnd();
  host.tcp->host = "example.com";
  EXPECT_NE(ValidateChannelEndpoint(host).message().find("host"), std::string::npos);
  ChannelEndpoint rdma;
  rdma.rdma = internal::RdmaEndpoint{};
  rdma.rdma->qpn = 0x1000000;
  EXPECT_NE(ValidateChannelEndpoint(rdma).message().find("qpn"), std::string::npos);
  EXPECT_TRUE(ValidateChannelEndpoint(TcpEnd()).ok());
  ChannelEndpoint reasoned = TcpEnd();
  reasoned.transport_reason = std::string(internal::kMaxReasonLength, 'r');
  EXPECT_TRUE(ValidateChannelEndpoint(reasoned).ok());
  reasoned.transport_reason += 'r';
  EXPECT_EQ(ValidateChannelEndpoint(reasoned).code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ValidateChannelEndpoint(reasoned).message().find("transport_reason"),
            std::string::npos);
}

TEST(ServiceRegistryTest, AReasonLongerThanTheLimitIsRefusedAndTheRequestStaysOpen) {
  ServiceRegistry registry("hostB");
  auto sink = std::make_shared<FakeSink>();
  sink->on_incoming = [&](const IncomingChannelRequest& r) {
    Status too_long =
        registry.Reject(kApp, r.request_id, std::string(internal::kMaxReasonLength + 1, 'x'));
    EXPECT_EQ(too_long.code(), StatusCode::kInvalidArgument) << too_long.ToString();
    // The request is still there to answer: the refusal lost nothing.
    EXPECT_TRUE(
        registry.Reject(kApp, r.request_id, std::string(internal::kMaxReasonLength, 'y')).ok());
  };
  auto reg = registry.Register("svc", sink, kApp);
  auto answer = registry.Offer(Request());
  EXPECT_EQ(answer.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(answer.status().message(), "rejected: " + std::string(internal::kMaxReasonLength, 'y'));
}

}  // namespace
}  // namespace rdmad
