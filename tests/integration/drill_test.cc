// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Failure drills between two real daemons (docs/channels.md, "Failure
// drills"): an application on A keeps a pool of channels to service "svc",
// served on B by a separate process (channel_close_helper serve), and uses
// some of them. Then
//   - B's application is killed (-9): A's application sees its channels
//     closed within 1 s, and once a new server is up the pool refills;
//   - B's daemon is killed (-9): A reports B's channels failed within 3 s
//     and serves on; when B comes back the pool is established again;
//   - (lab only) the RDMA device's netdev goes down: the RDMA channels fail
//     with the port's reason; once it is up again new channels are RDMA and
//     the pool is full again.
// Over TCP on the host; in the lab (LAB_IP) over RDMA on rxe0.

#include <signal.h>

#include <chrono>
#include <future>
#include <map>
#include <thread>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/daemon_pair.h"
#include "tests/integration/test_app.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::DaemonNode;
using testing::Eventually;
using testing::Process;

// How a blocked Recv ended, and when.
struct Woken {
  Status status;
  Clock::time_point at;
};

class DrillTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kWarm = 2;
  static constexpr int kInUse = 2;

  void SetUp() override {
    Status started = pair_.Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    server_ = Serve();
    ClientOptions options;
    options.socket_path = pair_.a().socket;
    auto app = Client::Open(options);
    ASSERT_TRUE(app.ok()) << app.status().ToString();
    app_ = std::move(app).value();
    ASSERT_TRUE(app_->Prewarm("B", "svc", kWarm).ok());
    ASSERT_TRUE(Eventually([&] { return Row().warm == kWarm; })) << pair_.Logs();
    for (int i = 0; i < kInUse; ++i) {
      auto channel = app_->Connect("B", "svc");
      ASSERT_TRUE(channel.ok()) << channel.status().ToString();
      if (std::getenv("LAB_IP") != nullptr) {
        EXPECT_EQ(channel.value()->info().transport, ChannelTransport::kRdma);
      }
      in_use_.push_back(std::move(channel).value());
    }
    ASSERT_TRUE(Eventually([&] { return Row().warm == kWarm && Row().in_use == kInUse; }))
        << pair_.Logs();
  }

  // B's application: a process serving "svc", listening once it returns.
  std::unique_ptr<Process> Serve() {
    auto p = std::make_unique<Process>(
        CHANNEL_CLOSE_HELPER, std::vector<std::string>{pair_.b().socket, "serve", "svc"},
        std::map<std::string, std::string>{}, dir_.File("serve" + std::to_string(serves_++)));
    Eventually([&] { return p->log().find("HELPER listening\n") != std::string::npos; }, 20s);
    EXPECT_NE(p->log().find("HELPER listening\n"), std::string::npos) << p->log();
    return p;
  }

  // Recv on every channel in use, each on its own thread.
  std::vector<std::future<Woken>> BlockInRecv() {
    std::vector<std::future<Woken>> out;
    for (auto& channel : in_use_) {
      out.push_back(std::async(std::launch::async, [c = channel.get()] {
        Status s = c->Recv(20s).status();
        return Woken{s, Clock::now()};
      }));
    }
    std::this_thread::sleep_for(300ms);  // all of them in Recv
    return out;
  }

  PoolSummary Row() {
    auto pools = pair_.a().client->ListPools();
    for (const PoolSummary& p : pools.ok() ? *pools : std::vector<PoolSummary>{}) {
      if (p.peer == "B" && p.service == "svc") return p;
    }
    return PoolSummary{};
  }

  // A's channels to svc in state.
  size_t CountOnA(const std::string& state) {
    auto rows = pair_.a().client->ListChannels();
    size_t n = 0;
    for (const auto& c : rows.ok() ? *rows : std::vector<ChannelSummary>{}) {
      n += c.service == "svc" && c.state == state;
    }
    return n;
  }

  testing::TempDir dir_;
  testing::DaemonPair pair_;
  int serves_ = 0;
  std::unique_ptr<Process> server_;
  std::unique_ptr<Client> app_;
  std::vector<std::unique_ptr<Channel>> in_use_;
};

TEST_F(DrillTest, AKilledApplicationClosesItsPeersChannelsAndThePoolRefills) {
  auto recvs = BlockInRecv();
  auto t0 = Clock::now();
  server_->Signal(SIGKILL);
  for (auto& recv : recvs) {
    Woken w = recv.get();
    EXPECT_EQ(w.status.code(), StatusCode::kUnavailable) << w.status.ToString();
    EXPECT_LT(w.at - t0, 1s) << w.status.ToString();
  }
  // The warm ones went too; with nobody serving svc the pool stays empty.
  ASSERT_TRUE(Eventually([&] { return CountOnA("established") == 0 && Row().warm == 0; }))
      << pair_.Logs();
  server_ = Serve();
  ASSERT_TRUE(Eventually([&] { return Row().warm == kWarm; })) << pair_.Logs();
  auto again = app_->Connect("B", "svc");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again.value()->Send("x", 1).ok());
}

TEST_F(DrillTest, AKilledPeerDaemonFailsItsChannelsAndThePoolComesBack) {
  auto recvs = BlockInRecv();
  auto t0 = Clock::now();
  pair_.b().process->Signal(SIGKILL);
  for (auto& recv : recvs) {
    Woken w = recv.get();
    EXPECT_EQ(w.status.code(), StatusCode::kUnavailable) << w.status.ToString();
    EXPECT_LT(w.at - t0, 3s) << w.status.ToString();
  }
  ASSERT_TRUE(Eventually([&] { return CountOnA("established") == 0; }, 3s)) << pair_.Logs();
  EXPECT_GE(CountOnA("failed"), size_t{kWarm + kInUse});
  // A serves on: its own API, and its pool keeps the target.
  auto status = pair_.a().client->GetStatus();
  EXPECT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(Row().target, kWarm);
  // The library has seen its warm channels fail.
  ASSERT_TRUE(Eventually([&] { return Row().warm == 0; }, 5s)) << pair_.Logs();

  Status restarted = pair_.Restart(&pair_.b());
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  server_ = Serve();
  // A's session to B is back within 10 s (the breaker does not hold a
  // restarting peer off), then the pool refills: first it sees its warm
  // channels gone, then it has them again.
  auto peer_up = [&] {
    auto peers = pair_.a().client->ListPeers();
    if (!peers.ok()) return false;
    for (const PeerInfo& p : peers.value()) {
      if (p.name == "B") return p.state == PeerState::kUp;
    }
    return false;
  };
  auto up_from = Clock::now();
  ASSERT_TRUE(Eventually(peer_up, 10s)) << pair_.Logs();
  std::printf("DRILL peer daemon restart: A's session to B up again after %.2f s (limit 10 s)\n",
              std::chrono::duration<double>(Clock::now() - up_from).count());
  ASSERT_TRUE(Eventually([&] { return Row().warm == kWarm; }, 20s)) << pair_.Logs();
  auto again = app_->Connect("B", "svc");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again.value()->Send("x", 1).ok());
  if (std::getenv("LAB_IP") != nullptr) {
    EXPECT_EQ(again.value()->info().transport, ChannelTransport::kRdma);
  }
}

TEST_F(DrillTest, ALinkDownFailsRdmaChannelsWithThePortsReason) {
  const char* netdev = std::getenv("LAB_NETDEV");
  const char* dev = std::getenv("LAB_DEV");
  if (std::getenv("LAB_IP") == nullptr || netdev == nullptr || dev == nullptr) {
    GTEST_SKIP() << "needs the lab: an RDMA device whose netdev can go down";
  }
  std::string ip_link = std::string("ip link set ") + netdev;
  auto recvs = BlockInRecv();
  auto t0 = Clock::now();
  ASSERT_EQ(std::system((ip_link + " down").c_str()), 0);
  for (auto& recv : recvs) {
    Woken w = recv.get();
    EXPECT_EQ(w.status.code(), StatusCode::kUnavailable) << w.status.ToString();
    EXPECT_NE(w.status.message().find(std::string(dev) + " port 1"), std::string::npos)
        << w.status.ToString();
    EXPECT_LT(w.at - t0, 3s) << w.status.ToString();
  }
  ASSERT_EQ(std::system((ip_link + " up").c_str()), 0);
  // Once the port is ACTIVE again a new channel is RDMA, and the pool is full.
  bool rdma = Eventually(
      [&] {
        auto c = pair_.a().client->Connect("B", "svc");
        return c.ok() && c.value()->info().transport == ChannelTransport::kRdma;
      },
      60s);
  EXPECT_TRUE(rdma) << pair_.Logs();
  EXPECT_TRUE(Eventually([&] { return Row().warm == kWarm; })) << pair_.Logs();
}

}  // namespace
}  // namespace rdmad
