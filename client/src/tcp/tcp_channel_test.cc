// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The TCP transport: the conformance suite on loopback (IPv4 and IPv6),
// then what only TCP has: tokens, addresses, flow control on the receive
// queue, closing. Misbehaving peers are in tcp_peer_fault_test.cc.

#include "client/src/tcp/tcp_channel.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "client/src/channel_suite.h"
#include "client/src/tcp/tcp_channel_impl.h"
#include "client/src/tcp/tcp_frame.h"
#include "client/src/tcp/tcp_test_util.h"
#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

RDMAD_INSTANTIATE_CHANNEL_CONFORMANCE(
    Tcp, ChannelPairFactory{"Ipv4", [] { return MakeTcpPair("127.0.0.1"); }},
    ChannelPairFactory{"Ipv6", [] { return MakeTcpPair("::1"); }});

TEST(TcpAcceptorTest, WrongTokenIsRejectedAndTheRightOneStillGetsIn) {
  const std::array<uint8_t, 32> token = RandomToken();
  StatusOr<std::unique_ptr<TcpAcceptor>> acceptor = TcpAcceptor::Listen("127.0.0.1", token);
  ASSERT_TRUE(acceptor.ok()) << acceptor.status().ToString();
  const TcpEndpoint endpoint = (*acceptor)->local();
  EXPECT_EQ(endpoint.host, "127.0.0.1");
  EXPECT_NE(endpoint.port, 0);

  StatusOr<std::unique_ptr<Channel>> accepted = Status::Internal("not yet");
  std::jthread acceptor_thread([&] { accepted = (*acceptor)->Accept(seconds(20), ChannelInfo{}); });

  std::array<uint8_t, 32> wrong = token;
  wrong[31] ^= 1;
  UniqueFd intruder = RawConnect(endpoint);
  ASSERT_TRUE(SendAll(intruder.get(), wrong.data(), wrong.size()).ok());
  EXPECT_TRUE(WaitForEof(intruder.get(), seconds(5))) << "a wrong token must be dropped";
  UniqueFd short_token = RawConnect(endpoint);
  ASSERT_TRUE(SendAll(short_token.get(), token.data(), 5).ok());
  short_token.reset();

  StatusOr<std::unique_ptr<Channel>> initiator = TcpConnect(endpoint, ChannelInfo{}, seconds(5));
  ASSERT_TRUE(initiator.ok()) << initiator.status().ToString();
  acceptor_thread.join();
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  ExpectRoundTrip(**initiator, **accepted);

  // The listening socket is gone: nobody else gets in, Accept is spent.
  EXPECT_FALSE(ConnectsTo(endpoint));
  EXPECT_EQ((*acceptor)->Accept(milliseconds(10), {}).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(TcpAcceptorTest, AcceptTimesOut) {
  StatusOr<std::unique_ptr<TcpAcceptor>> acceptor = TcpAcceptor::Listen("::1", RandomToken());
  ASSERT_TRUE(acceptor.ok()) << acceptor.status().ToString();
  EXPECT_EQ((*acceptor)->Accept(milliseconds(100), {}).status().code(),
            StatusCode::kDeadlineExceeded);
}

TEST(TcpAcceptorTest, ASilentConnectionDoesNotBlockTheRightOne) {
  const std::array<uint8_t, 32> token = RandomToken();
  StatusOr<std::unique_ptr<TcpAcceptor>> acceptor = TcpAcceptor::Listen("127.0.0.1", token);
  ASSERT_TRUE(acceptor.ok()) << acceptor.status().ToString();
  UniqueFd silent = RawConnect((*acceptor)->local());  // says nothing
  StatusOr<std::unique_ptr<Channel>> initiator =
      TcpConnect((*acceptor)->local(), ChannelInfo{}, seconds(5));
  ASSERT_TRUE(initiator.ok()) << initiator.status().ToString();
  StatusOr<std::unique_ptr<Channel>> accepted = (*acceptor)->Accept(seconds(20), {});
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  ExpectRoundTrip(**initiator, **accepted);
}

TEST(TcpAcceptorTest, ListenAndConnectTakeNumericAddressesOnly) {
  EXPECT_EQ(TcpAcceptor::Listen("localhost", RandomToken()).status().code(),
            StatusCode::kInvalidArgument);
  TcpEndpoint endpoint;
  endpoint.host = "nowhere.invalid";
  endpoint.port = 1;
  EXPECT_EQ(TcpConnect(endpoint, {}, seconds(1)).status().code(), StatusCode::kInvalidArgument);
}

TEST(TcpConnectTest, RefusedConnectionIsUnavailable) {
  TcpEndpoint endpoint;
  endpoint.host = "127.0.0.1";
  endpoint.port = UnusedPort();
  StatusOr<std::unique_ptr<Channel>> channel = TcpConnect(endpoint, {}, seconds(5));
  EXPECT_EQ(channel.status().code(), StatusCode::kUnavailable) << channel.status().ToString();
}

TEST(TcpChannelTest, InfoDescribesTheConnection) {
  for (const char* host : {"127.0.0.1", "::1"}) {
    StatusOr<ChannelPair> pair = MakeTcpPair(host);
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    const ChannelInfo& a = pair->first->info();
    const ChannelInfo& b = pair->second->info();
    EXPECT_EQ(a.transport, ChannelTransport::kTcp);
    EXPECT_EQ(b.transport, ChannelTransport::kTcp);
    EXPECT_EQ(a.service, "conformance");
    EXPECT_EQ(a.tcp_local, b.tcp_peer);
    EXPECT_EQ(a.tcp_peer, b.tcp_local);
    const std::string prefix = std::string(host) == "::1" ? "[::1]:" : "127.0.0.1:";
    EXPECT_EQ(a.tcp_local.rfind(prefix, 0), 0u) << a.tcp_local;
  }
}

TEST(TcpChannelTest, DmabufNeedsRdmaAndHugeMessagesAreRefused) {
  StatusOr<ChannelPair> pair = MakeTcpPair("127.0.0.1");
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  Channel& a = *pair->first;
  StatusOr<std::unique_ptr<MemoryRegion>> dmabuf = a.RegisterDmabuf(3, 0, 4096);
  EXPECT_EQ(dmabuf.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(dmabuf.status().message(), "dmabuf needs an RDMA channel");
  uint8_t byte = 0;  // the length is checked before the buffer is touched
  EXPECT_EQ(a.Send(&byte, kMaxPayloadBytes + 1).code(), StatusCode::kInvalidArgument);
  ExpectRoundTrip(a, *pair->second);
}

TEST(TcpChannelTest, MessagesSentBeforeCloseAreDelivered) {
  StatusOr<ChannelPair> pair = MakeTcpPair("127.0.0.1");
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  for (uint8_t i = 0; i < 3; ++i) ASSERT_TRUE(pair->first->Send(&i, 1).ok());
  pair->first->Close();
  for (uint8_t i = 0; i < 3; ++i) {
    StatusOr<std::vector<uint8_t>> got = pair->second->Recv(seconds(5));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, std::vector<uint8_t>{i});
  }
  Status closed = pair->second->Recv(seconds(5)).status();
  EXPECT_EQ(closed, Status::Unavailable("closed by peer"));
  EXPECT_EQ(pair->first->status().code(), StatusCode::kCancelled);
  pair->first->Close();  // again: a no-op
}

// The daemon's word that the channel is over (abortable_channel.h).
TEST(TcpChannelTest, AbortWakesABlockedRecvWithTheDaemonsReason) {
  StatusOr<ChannelPair> pair = MakeTcpPair("127.0.0.1");
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto* second = dynamic_cast<AbortableChannel*>(pair->second.get());
  ASSERT_NE(second, nullptr);
  std::atomic<bool> woke{false};
  std::jthread receiver([&] {
    Status s = pair->second->Recv(seconds(10)).status();
    EXPECT_EQ(s, Status::Unavailable("peer daemon b lost: gone"));
    woke = true;
  });
  std::this_thread::sleep_for(milliseconds(200));
  second->Abort(Status::Unavailable("peer daemon b lost: gone"));
  receiver.join();
  EXPECT_TRUE(woke);
  EXPECT_EQ(pair->second->Send("x", 1), Status::Unavailable("peer daemon b lost: gone"));
  // The socket was shut down: the other end sees the connection go.
  EXPECT_EQ(pair->first->Recv(seconds(5)).status().code(), StatusCode::kUnavailable);
}

TEST(TcpChannelTest, AbortAfterThePeersCloseKeepsItsMessagesAndReason) {
  StatusOr<ChannelPair> pair = MakeTcpPair("127.0.0.1");
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  uint8_t byte = 7;
  ASSERT_TRUE(pair->first->Send(&byte, 1).ok());
  pair->first->Close();
  std::this_thread::sleep_for(milliseconds(200));  // the CLOSE arrives
  dynamic_cast<AbortableChannel&>(*pair->second).Abort(Status::Unavailable("closed by peer x"));
  StatusOr<std::vector<uint8_t>> got = pair->second->Recv(seconds(5));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(pair->second->Recv(seconds(5)).status(), Status::Unavailable("closed by peer"));
}

TEST(TcpChannelTest, AFullReceiveQueuePushesBackOnTheSender) {
  StatusOr<ChannelPair> pair = MakeTcpPair("127.0.0.1");
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  constexpr int kMessages = 256;  // 256 MiB: far more than queue + socket buffers
  std::atomic<int> sent{0};
  std::jthread sender([&] {
    std::vector<uint8_t> message(1 << 20, 0x5a);
    for (int i = 0; i < kMessages; ++i) {
      if (!pair->first->Send(message.data(), message.size()).ok()) return;
      ++sent;
    }
  });
  std::this_thread::sleep_for(seconds(1));
  const int stalled_at = sent.load();
  EXPECT_LT(stalled_at, kMessages) << "the receiver buffered everything";
  EXPECT_GE(stalled_at, static_cast<int>(kRecvQueueBytes >> 20) / 2);
  for (int i = 0; i < kMessages; ++i) {
    StatusOr<std::vector<uint8_t>> got = pair->second->Recv(seconds(10));
    ASSERT_TRUE(got.ok()) << "message " << i << ": " << got.status().ToString();
    ASSERT_EQ(got->size(), 1u << 20);
  }
  sender.join();
  EXPECT_EQ(sent.load(), kMessages);
}

TEST(TcpChannelTest, ADeregisteredRegionIsNotFound) {
  StatusOr<ChannelPair> pair = MakeTcpPair("127.0.0.1");
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  std::vector<uint8_t> target(4096), buf(4096, 1);
  RegionDescriptor gone =
      (*pair->second->RegisterMemory(target.data(), target.size()))->descriptor();
  StatusOr<std::unique_ptr<MemoryRegion>> local =
      pair->first->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(local.ok());
  Status wrote = pair->first->Write(**local, 0, gone, 0, 16);
  EXPECT_EQ(wrote.code(), StatusCode::kNotFound) << wrote.ToString();
  EXPECT_EQ(pair->second->Recv(seconds(5)).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(pair->first->Recv(seconds(5)).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(target, std::vector<uint8_t>(4096));
}

}  // namespace
}  // namespace rdmad::internal
