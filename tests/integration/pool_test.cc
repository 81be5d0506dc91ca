// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Pooling between two real daemons (docs/channels.md, "Pooling"): an
// application on A follows the pool and keeps channels to service "svc"
// on B warm; Connect hands out one that was established before it was
// asked for, the pool refills, Close gives it back; a warm channel the
// peer closes is replaced; [[pool]] from the config; the channel limits.
// Over TCP on the host; in the lab (LAB_IP) the same tests run over RDMA.

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/daemon_pair.h"
#include "tests/integration/test_app.h"

namespace rdmad {
namespace {

using testing::Eventually;
using namespace std::chrono_literals;

class PoolTest : public ::testing::Test {
 protected:
  void Start(const std::string& a_extra = "") {
    Status started = pair_.Start(a_extra, "");
    ASSERT_TRUE(started.ok()) << started.ToString();
    acceptor_ = std::make_unique<testing::AcceptAll>(pair_.b().client.get(), "svc");
    ClientOptions options;
    options.socket_path = pair_.a().socket;
    options.follow_pool = true;
    auto app = Client::Open(options);
    ASSERT_TRUE(app.ok()) << app.status().ToString();
    app_ = std::move(app).value();
  }

  // A's pool row for (B, svc).
  PoolSummary Row() {
    auto pools = pair_.a().client->ListPools();
    if (pools.ok()) {
      for (const PoolSummary& p : *pools) {
        if (p.peer == "B" && p.service == "svc") return p;
      }
    }
    return PoolSummary{};
  }

  // A's established channels to svc.
  std::vector<uint64_t> Established() {
    std::vector<uint64_t> ids;
    auto channels = pair_.a().client->ListChannels();
    if (!channels.ok()) return ids;
    for (const ChannelSummary& c : *channels) {
      if (c.service == "svc" && c.state == "established") ids.push_back(c.id);
    }
    return ids;
  }

  testing::DaemonPair pair_;
  std::unique_ptr<testing::AcceptAll> acceptor_;  // B's application
  std::unique_ptr<Client> app_;
};

TEST_F(PoolTest, ConnectHandsOutAWarmChannelAndThePoolRefills) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_TRUE(app_->Prewarm("B", "svc", 2).ok());
  ASSERT_TRUE(Eventually([&] { return Row().warm == 2; })) << pair_.Logs();
  std::vector<uint64_t> before = Established();
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(Row().source, "api");

  auto channel = app_->Connect("B", "svc");
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  uint64_t id = channel.value()->info().id;
  if (std::getenv("LAB_IP") != nullptr) {
    EXPECT_EQ(channel.value()->info().transport, ChannelTransport::kRdma);
  }
  EXPECT_TRUE(id == before[0] || id == before[1]) << "not a warm channel: " << id;
  ASSERT_TRUE(channel.value()->Send("hello", 5).ok());
  Channel* far = nullptr;
  ASSERT_TRUE(Eventually([&] { return (far = acceptor_->Get(id)) != nullptr; }));
  auto got = far->Recv(5s);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "hello");

  // The pool refills behind it: two warm again, one in use.
  ASSERT_TRUE(Eventually([&] { return Row().warm == 2 && Row().in_use == 1; })) << pair_.Logs();
  EXPECT_EQ(Established().size(), 3u);

  // Close gives it back: still established, warm beyond the target.
  channel.value()->Close();
  ASSERT_TRUE(Eventually([&] { return Row().warm == 3 && Row().in_use == 0; }));
  EXPECT_EQ(Established().size(), 3u);
  EXPECT_EQ(far->status().code(), StatusCode::kOk);

  // A target of 0: every warm channel is closed on both sides.
  ASSERT_TRUE(app_->Prewarm("B", "svc", 0).ok());
  ASSERT_TRUE(Eventually([&] { return Established().empty(); })) << pair_.Logs();
  ASSERT_TRUE(Eventually([&] { return !far->status().ok(); }));
}

TEST_F(PoolTest, AWarmChannelThePeerClosesIsReplaced) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_TRUE(app_->Prewarm("B", "svc", 1).ok());
  ASSERT_TRUE(Eventually([&] { return Established().size() == 1 && Row().warm == 1; }));
  uint64_t first = Established()[0];
  Channel* far = nullptr;
  ASSERT_TRUE(Eventually([&] { return (far = acceptor_->Get(first)) != nullptr; }));
  far->Close();  // B's application closes it
  ASSERT_TRUE(Eventually([&] {
    auto now = Established();
    return now.size() == 1 && now[0] != first;
  })) << pair_.Logs();
  auto channel = app_->Connect("B", "svc");
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  EXPECT_NE(channel.value()->info().id, first);
  EXPECT_TRUE(channel.value()->status().ok());
}

TEST_F(PoolTest, ConfigPoolsAreFollowedAndListed) {
  ASSERT_NO_FATAL_FAILURE(Start("[[pool]]\npeer = \"B\"\nservice = \"svc\"\nchannels = 2\n"));
  ASSERT_TRUE(Eventually([&] { return Row().warm == 2; })) << pair_.Logs();
  PoolSummary row = Row();
  EXPECT_EQ(row.source, "config");
  EXPECT_EQ(row.target, 2u);
  EXPECT_GT(row.pid, 0);
  // The client that does not follow the pool (rdmactl's kind) gets none.
  auto plain = pair_.a().client->Connect("B", "svc");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(Established().size(), 3u);
  app_.reset();  // the follower goes: its rows and warm channels go
  ASSERT_TRUE(Eventually([&] { return Row().client_id == 0 && Established().size() == 1; }))
      << pair_.Logs();
}

TEST_F(PoolTest, ChannelLimitsRefuseWithTheReason) {
  ASSERT_NO_FATAL_FAILURE(Start("[limits]\nmax_channels_per_peer = 2\n"));
  // ConnectAB retries while A's session to B comes up (UNAVAILABLE) only.
  auto one = pair_.ConnectAB("svc");
  auto two = pair_.ConnectAB("svc");
  ASSERT_TRUE(one.ok()) << one.status().ToString() << pair_.Logs();
  ASSERT_TRUE(two.ok()) << two.status().ToString() << pair_.Logs();
  auto three = pair_.ConnectAB("svc");
  ASSERT_EQ(three.status().code(), StatusCode::kResourceExhausted) << three.status().ToString();
  EXPECT_NE(three.status().message().find("limits.max_channels_per_peer"), std::string::npos);
  one.value()->Close();
  ASSERT_TRUE(Eventually([&] { return Established().size() == 1; }));
  EXPECT_TRUE(pair_.ConnectAB("svc").ok());
}

}  // namespace
}  // namespace rdmad
