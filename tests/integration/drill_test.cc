// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Failure drills between two real daemons (docs/channels.md, "Failure
// drills"): an application on A keeps a pool of channels to service "svc",
// served on B by a separate process (channel_close_helper echo), and uses
// some of them. Then
//   - B's application is killed (-9): A's application sees its channels
//     closed within 1 s, and once a new server is up the pool refills;
//   - B's daemon is killed (-9) while B's application lives: the channels
//     carry on; B's restarted daemon takes them back (drill 5 seen from the
//     peer), and B's application is listening again;
//   - B's daemon and application are killed: A's channels fail within 3 s
//     and A serves on; when B comes back the pool is established again;
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
    Status started = pair_.Start(DaemonConfig());
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

  // Added to each daemon's [daemon] table: A's channels wait 1 s for a lost
  // peer daemon (the default is 10 s), so that a lost host fails them
  // within the drill's 3 s.
  virtual std::string DaemonConfig() { return "peer_channel_grace_s = 1\n"; }

  // B's application: a process serving "svc", listening once it returns.
  std::unique_ptr<Process> Serve() {
    auto p = std::make_unique<Process>(
        CHANNEL_CLOSE_HELPER, std::vector<std::string>{pair_.b().socket, "echo", "svc"},
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

// A's session to B is up.
bool PeerUp(Client& client) {
  auto peers = client.ListPeers();
  if (!peers.ok()) return false;
  for (const PeerInfo& p : peers.value()) {
    if (p.name == "B") return p.state == PeerState::kUp;
  }
  return false;
}

// One message there and back on channel; "" or what went wrong.
std::string Ping(Channel& channel, const std::string& text) {
  Status sent = channel.Send(text.data(), text.size());
  if (!sent.ok()) return "Send: " + sent.ToString();
  auto reply = channel.Recv(5s);
  if (!reply.ok()) return "Recv: " + reply.status().ToString();
  if (std::string(reply->begin(), reply->end()) != text) return "a different reply";
  return "";
}

// The drills that a new user's daemons must pass as installed.
class DefaultConfigDrillTest : public DrillTest {
 protected:
  std::string DaemonConfig() override { return ""; }
};

// B's daemon dies, B's application lives: the channels are the
// applications', so they carry on; B's restarted daemon takes them back.
TEST_F(DefaultConfigDrillTest, AKilledPeerDaemonWhoseApplicationLivesKeepsItsChannels) {
  auto t0 = Clock::now();
  pair_.b().process->Signal(SIGKILL);
  ASSERT_TRUE(pair_.b().process->WaitExit(5s).has_value());
  for (size_t i = 0; i < in_use_.size(); ++i) {
    EXPECT_EQ(Ping(*in_use_[i], "while B is down " + std::to_string(i)), "")
        << "step: a ping with B's daemon down; expected the echo";
  }
  ASSERT_TRUE(Eventually([&] { return !PeerUp(*pair_.a().client); }, 5s)) << pair_.Logs();
  EXPECT_EQ(CountOnA("established"), size_t{kWarm + kInUse})
      << "step: B's daemon lost; expected every channel still established";
  EXPECT_EQ(CountOnA("failed"), 0u);

  Status restarted = pair_.Restart(&pair_.b());
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  ASSERT_TRUE(Eventually([&] { return PeerUp(*pair_.a().client); }, 10s)) << pair_.Logs();
  // B's application re-attaches its channels and B's new daemon takes them
  // back from A: both tables show them established, none waiting.
  auto confirmed = [&] {
    auto a = pair_.a().client->ListChannels();
    auto b = pair_.b().client->ListChannels();
    if (!a.ok() || !b.ok()) return false;
    size_t on_a = 0, on_b = 0;
    for (const auto& c : *a) {
      on_a += c.service == "svc" && c.state == "established" &&
              c.reason.find("lost") == std::string::npos;
    }
    for (const auto& c : *b) on_b += c.service == "svc" && c.state == "established";
    return on_a == kWarm + kInUse && on_b == kWarm + kInUse;
  };
  bool back = Eventually(confirmed, 10s);
  std::printf(
      "DRILL peer daemon restart, application alive: channels confirmed %.2f s after the kill "
      "(limit 5 s after the restart)\n",
      std::chrono::duration<double>(Clock::now() - t0).count());
  ASSERT_TRUE(back) << "step: B restarted; expected its channels taken back on both sides\n"
                    << pair_.Logs() << server_->log();
  for (size_t i = 0; i < in_use_.size(); ++i) {
    EXPECT_EQ(Ping(*in_use_[i], "after B is back " + std::to_string(i)), "");
  }
  EXPECT_EQ(Row().warm, kWarm);
  // B's application still listens (it registered again): a new channel.
  auto again = app_->Connect("B", "svc");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Ping(*again.value(), "new"), "");
}

// B's daemon and application both die (the host's software is gone): A's
// channels fail within 3 s (the data path's error, or A's 1 s grace), A
// serves on, and once B is back the pool is established again.
TEST_F(DrillTest, AKilledPeerHostFailsItsChannelsAndThePoolComesBack) {
  auto recvs = BlockInRecv();
  auto t0 = Clock::now();
  pair_.b().process->Signal(SIGKILL);
  server_->Signal(SIGKILL);
  for (auto& recv : recvs) {
    Woken w = recv.get();
    EXPECT_EQ(w.status.code(), StatusCode::kUnavailable) << w.status.ToString();
    EXPECT_LT(w.at - t0, 3s) << w.status.ToString();
    std::printf("DRILL peer host lost: a blocked Recv woke after %.2f s (limit 3 s): %s\n",
                std::chrono::duration<double>(w.at - t0).count(), w.status.message().c_str());
  }
  ASSERT_TRUE(Eventually([&] { return CountOnA("established") == 0; }, 5s)) << pair_.Logs();
  // A serves on: its own API, and its pool keeps the target.
  auto status = pair_.a().client->GetStatus();
  EXPECT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(Row().target, kWarm);
  ASSERT_TRUE(Eventually([&] { return Row().warm == 0; }, 5s)) << pair_.Logs();

  Status restarted = pair_.Restart(&pair_.b());
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  server_ = Serve();
  // A's session to B is back within 10 s (the breaker does not hold a
  // restarting peer off), then the pool refills.
  auto up_from = Clock::now();
  ASSERT_TRUE(Eventually([&] { return PeerUp(*pair_.a().client); }, 10s)) << pair_.Logs();
  std::printf("DRILL peer daemon restart: A's session to B up again after %.2f s (limit 10 s)\n",
              std::chrono::duration<double>(Clock::now() - up_from).count());
  ASSERT_TRUE(Eventually([&] { return Row().warm == kWarm; }, 20s)) << pair_.Logs();
  auto again = app_->Connect("B", "svc");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Ping(*again.value(), "x"), "");
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
