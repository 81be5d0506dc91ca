// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Channels made the way applications make them: two real daemons broker
// them (Listen through B, Connect through A). The Channel conformance suite
// (client/src/channel_suite.h: messages of 1 B ... 64 MiB with checksums,
// Write/Read into registered regions, a slow receiver, idle CPU, closing)
// runs on such pairs, and many channels are open and used at once. Off the
// lab the channels fall back to TCP; in the lab (LAB_IP set) they must be
// RDMA on the VM's rxe device.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "client/src/channel_suite.h"
#include "tests/integration/daemon_pair.h"

namespace rdmad::internal {
namespace {

using std::chrono::seconds;

bool InLab() { return std::getenv("LAB_IP") != nullptr; }

// One pair of daemons for the whole binary (the suite makes a pair per test).
testing::DaemonPair* Daemons() {
  static testing::DaemonPair* pair = [] {
    auto* p = new testing::DaemonPair;
    Status st = p->Start();
    if (!st.ok()) ADD_FAILURE() << st.ToString();
    return p;
  }();
  return pair;
}

// A connected pair through the daemons: (initiator on A, acceptor on B).
StatusOr<ChannelPair> MakeBrokeredPair(const std::string& service) {
  testing::DaemonPair* d = Daemons();
  if (!d->b().client) return Status::Unavailable("the daemons did not start");
  auto listener = d->b().client->Listen(service);
  if (!listener.ok()) return listener.status();
  StatusOr<std::unique_ptr<Channel>> accepted = Status::Unavailable("not accepted");
  std::jthread acceptor([&] { accepted = listener.value()->Accept(seconds(30)); });
  StatusOr<std::unique_ptr<Channel>> connected = d->ConnectAB(service);
  acceptor.join();
  if (!connected.ok()) return connected.status();
  if (!accepted.ok()) return accepted.status();
  ChannelTransport want = InLab() ? ChannelTransport::kRdma : ChannelTransport::kTcp;
  for (const auto* c : {&connected.value(), &accepted.value()}) {
    if ((*c)->info().transport != want) {
      return Status::Internal(std::string("channel came up over ") +
                              ChannelTransportName((*c)->info().transport) + ": " +
                              (*c)->info().transport_reason);
    }
  }
  return ChannelPair(std::move(connected).value(), std::move(accepted).value());
}

StatusOr<ChannelPair> NextPair() {
  static std::atomic<int> n{0};
  return MakeBrokeredPair("suite." + std::to_string(n++));
}

}  // namespace

RDMAD_INSTANTIATE_CHANNEL_CONFORMANCE(Brokered, ChannelPairFactory{"TwoDaemons", NextPair});

namespace {

// 32 channels between the same two daemons, opened at once, each used for a
// 64 KiB round trip with distinct contents.
TEST(BrokeredChannelsTest, ManyChannelsAtOnce) {
  constexpr int kChannels = 32;
  std::vector<StatusOr<ChannelPair>> pairs;
  for (int i = 0; i < kChannels; ++i) pairs.emplace_back(Status::Unavailable("not made"));
  std::vector<std::jthread> makers;
  for (int i = 0; i < kChannels; ++i) {
    makers.emplace_back([&, i] { pairs[i] = MakeBrokeredPair("many." + std::to_string(i)); });
  }
  for (auto& t : makers) t.join();
  for (int i = 0; i < kChannels; ++i) {
    ASSERT_TRUE(pairs[i].ok()) << i << ": " << pairs[i].status().ToString() << "\n"
                               << Daemons()->Logs();
  }
  std::vector<std::jthread> users;
  std::atomic<int> good{0};
  for (int i = 0; i < kChannels; ++i) {
    users.emplace_back([&, i] {
      auto& [a, b] = pairs[i].value();
      std::vector<uint8_t> msg(64 * 1024, static_cast<uint8_t>(i));
      if (!a->Send(msg.data(), msg.size()).ok()) return;
      auto got = b->Recv(seconds(30));
      if (!got.ok() || got.value() != msg) return;
      if (!b->Send(got->data(), got->size()).ok()) return;
      auto back = a->Recv(seconds(30));
      if (back.ok() && back.value() == msg) ++good;
    });
  }
  for (auto& t : users) t.join();
  EXPECT_EQ(good.load(), kChannels);
  auto table = Daemons()->a().client->ListChannels();
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  int established = 0;
  for (const ChannelSummary& c : table.value()) {
    established += c.service.rfind("many.", 0) == 0 && c.state == "established";
  }
  EXPECT_EQ(established, kChannels);
}

}  // namespace
}  // namespace rdmad::internal
