// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Client::ConnectMany between two real rdmad processes: channels opened in
// batches (one plan, one Connect, one request to the listener per batch),
// each carrying messages both ways, over TCP on the host and RDMA in the
// lab; a rejected batch opens nothing.

#include <cstdlib>
#include <set>
#include <thread>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/daemon_pair.h"

namespace rdmad {
namespace {

using std::chrono::seconds;

// More than one batch (64 channels at most each).
constexpr size_t kChannels = 70;

class ConnectManyTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(Start()); }
  void Start() {
    Status started = pair_.Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
  }

  // ConnectMany from A's application (or another client of A) to B's
  // "svc", retrying while A's session to B comes up.
  StatusOr<std::vector<std::unique_ptr<Channel>>> ConnectMany(size_t count,
                                                              Client* client = nullptr) {
    if (client == nullptr) client = a_.client.get();
    StatusOr<std::vector<std::unique_ptr<Channel>>> channels = Status::Unavailable("not tried");
    for (int i = 0; i < 50; ++i) {
      channels = client->ConnectMany("B", "svc", count);
      if (channels.status().code() != StatusCode::kUnavailable) return channels;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return channels;
  }

  // The channels of A's table in state.
  size_t ChannelsOfA(const std::string& state) {
    auto table = a_.client->ListChannels();
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    size_t n = 0;
    for (const ChannelSummary& c : table.ok() ? table.value() : std::vector<ChannelSummary>{}) {
      n += c.state == state;
    }
    return n;
  }

  testing::DaemonPair pair_;
  testing::DaemonNode& a_ = pair_.a();
  testing::DaemonNode& b_ = pair_.b();
};

TEST_F(ConnectManyTest, OpensChannelsInBatchesThatEachCarryMessages) {
  auto listener = b_.client->Listen("svc");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  std::set<uint64_t> accepted_ids;
  std::jthread app_b([&] {
    std::vector<std::unique_ptr<Channel>> accepted;
    for (size_t i = 0; i < kChannels; ++i) {
      auto channel = listener.value()->Accept(seconds(60));
      ASSERT_TRUE(channel.ok()) << i << ": " << channel.status().ToString();
      accepted_ids.insert(channel.value()->info().id);
      accepted.push_back(std::move(channel).value());
    }
    for (auto& c : accepted) {  // echo one message on each
      auto msg = c->Recv(seconds(20));
      ASSERT_TRUE(msg.ok()) << msg.status().ToString();
      ASSERT_TRUE(c->Send(msg.value().data(), msg.value().size()).ok());
    }
    for (auto& c : accepted) {  // until the initiator closes it
      EXPECT_EQ(c->Recv(seconds(20)).status().code(), StatusCode::kUnavailable);
    }
  });
  auto channels = ConnectMany(kChannels);
  ASSERT_TRUE(channels.ok()) << channels.status().ToString() << "\n" << pair_.Logs();
  ASSERT_EQ(channels.value().size(), kChannels);
  bool lab = std::getenv("LAB_IP") != nullptr;
  std::set<uint64_t> ids;
  for (auto& c : channels.value()) {
    ids.insert(c->info().id);
    EXPECT_EQ(c->info().transport, lab ? ChannelTransport::kRdma : ChannelTransport::kTcp)
        << c->info().transport_reason;
  }
  EXPECT_EQ(ids.size(), kChannels);
  EXPECT_EQ(ChannelsOfA("established"), kChannels);
  for (size_t i = 0; i < kChannels; ++i) {
    std::vector<uint8_t> msg(1 + i * 100, uint8_t(i));
    ASSERT_TRUE(channels.value()[i]->Send(msg.data(), msg.size()).ok()) << i;
  }
  for (size_t i = 0; i < kChannels; ++i) {
    auto echo = channels.value()[i]->Recv(seconds(20));
    ASSERT_TRUE(echo.ok()) << i << ": " << echo.status().ToString();
    EXPECT_EQ(echo.value(), std::vector<uint8_t>(1 + i * 100, uint8_t(i))) << i;
  }
  channels.value().clear();  // closed: the acceptor's last Recvs end
  app_b.join();
  EXPECT_EQ(accepted_ids, ids);
}

TEST_F(ConnectManyTest, ARejectedBatchOpensNoChannel) {
  auto listener = b_.client->Listen("svc");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  std::jthread app_b([&] { EXPECT_TRUE(listener.value()->Reject("busy", seconds(30)).ok()); });
  auto channels = ConnectMany(5);
  app_b.join();
  EXPECT_EQ(channels.status().code(), StatusCode::kPermissionDenied)
      << channels.status().ToString();
  EXPECT_EQ(channels.status().message(), "rejected: busy");
  EXPECT_EQ(ChannelsOfA("established"), 0u);
  EXPECT_GE(ChannelsOfA("failed"), 5u);  // and a batch per try while A's session came up
  EXPECT_EQ(a_.client->ConnectMany("B", "svc", 0).status().code(), StatusCode::kInvalidArgument);
}

// A batch's channels may outlive the Client that opened them: they still
// carry messages, and closing them afterwards (the batch's hold stream
// ending with nothing else left of the client) is clean, round after round.
TEST_F(ConnectManyTest, ABatchOutlivesItsClient) {
  auto listener = b_.client->Listen("svc");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  constexpr int kRounds = 5;
  constexpr size_t kBatch = 4;
  std::jthread app_b([&] {
    for (size_t i = 0; i < kRounds * kBatch; ++i) {
      auto channel = listener.value()->Accept(seconds(60));
      ASSERT_TRUE(channel.ok()) << i << ": " << channel.status().ToString();
      auto msg = channel.value()->Recv(seconds(20));
      ASSERT_TRUE(msg.ok()) << msg.status().ToString();
      ASSERT_TRUE(channel.value()->Send(msg.value().data(), msg.value().size()).ok());
    }
  });
  for (int round = 0; round < kRounds; ++round) {
    ClientOptions options;
    options.socket_path = a_.socket;
    auto client = Client::Open(options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    auto channels = ConnectMany(kBatch, client.value().get());
    ASSERT_TRUE(channels.ok()) << channels.status().ToString() << "\n" << pair_.Logs();
    client.value().reset();
    for (auto& c : channels.value()) {
      uint8_t byte = uint8_t(round);
      ASSERT_TRUE(c->Send(&byte, 1).ok());
      auto echo = c->Recv(seconds(20));
      ASSERT_TRUE(echo.ok()) << echo.status().ToString();
      EXPECT_EQ(echo.value(), std::vector<uint8_t>{byte});
    }
  }
  app_b.join();
}

}  // namespace
}  // namespace rdmad
