// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Drill 5: an application's own rdmad restarts (docs/channels.md, "When
// rdmad restarts"). The data path lives in the application, so
//   - a ping running across a kill -9 (or a SIGTERM) and restart of A's
//     rdmad loses no reply;
//   - the client library re-attaches within 5 s: A's new daemon lists the
//     channel established and confirmed by B, and the application's pool
//     target is back in `rdmactl pools`;
//   - a channel whose peer went away while A's daemon was down is failed
//     with the reason once A is back;
//   - without a daemon coming back the channel fails after the library's
//     reattach_timeout.
// Over TCP on the host; in the lab (LAB_IP) over RDMA on rxe0.

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/daemon_pair.h"
#include "tests/integration/test_app.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::Eventually;
using testing::Process;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

class RestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status started = pair_.Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    server_ = std::make_unique<Process>(CHANNEL_CLOSE_HELPER,
                                        std::vector<std::string>{pair_.b().socket, "echo", "svc"},
                                        std::map<std::string, std::string>{}, dir_.File("server"));
    ASSERT_TRUE(Eventually([&] { return Has(*server_, "HELPER listening\n"); }, 20s))
        << server_->log();
    app_ = Open(10s);
    ASSERT_NE(app_, nullptr);
    auto channel = app_->Connect("B", "svc");
    ASSERT_TRUE(channel.ok()) << channel.status().ToString() << pair_.Logs();
    channel_ = std::move(channel).value();
    if (std::getenv("LAB_IP") != nullptr) {
      EXPECT_EQ(channel_->info().transport, ChannelTransport::kRdma);
    }
  }

  static bool Has(const Process& p, const std::string& text) {
    return p.log().find(text) != std::string::npos;
  }

  std::unique_ptr<Client> Open(std::chrono::milliseconds reattach) {
    ClientOptions options;
    options.socket_path = pair_.a().socket;
    options.reattach_timeout = reattach;
    auto app = Client::Open(options);
    EXPECT_TRUE(app.ok()) << app.status().ToString();
    return app.ok() ? std::move(app).value() : nullptr;
  }

  // The channel's row on node ("" state: not listed).
  static ChannelSummary RowOf(testing::DaemonNode& node, uint64_t id) {
    auto rows = node.client ? node.client->ListChannels()
                            : StatusOr<std::vector<ChannelSummary>>(Status::Unavailable("down"));
    for (const ChannelSummary& c : rows.ok() ? *rows : std::vector<ChannelSummary>{}) {
      if (c.id == id) return c;
    }
    return ChannelSummary{};
  }

  // Established on both daemons and confirmed by B (no longer waiting).
  bool Confirmed(uint64_t id) {
    ChannelSummary a = RowOf(pair_.a(), id);
    ChannelSummary b = RowOf(pair_.b(), id);
    return a.state == "established" && b.state == "established" &&
           a.reason.find("confirming") == std::string::npos &&
           b.reason.find("lost") == std::string::npos;
  }

  // Pings on channel_ from a thread of its own until Stop().
  class Pinger {
   public:
    explicit Pinger(Channel* channel) : thread_([this, channel] { Run(channel); }) {}
    ~Pinger() { Stop(); }
    void Stop() {
      stop_ = true;
      if (thread_.joinable()) thread_.join();
    }
    int replies() const { return replies_; }
    std::string first_error() const {
      std::lock_guard lock(mu_);
      return first_error_;
    }

   private:
    void Run(Channel* channel) {
      for (uint64_t seq = 0; !stop_; ++seq) {
        std::string text = "ping " + std::to_string(seq);
        Status sent = channel->Send(text.data(), text.size());
        auto reply = sent.ok() ? channel->Recv(5s) : StatusOr<std::vector<uint8_t>>(sent);
        if (!reply.ok() || std::string(reply->begin(), reply->end()) != text) {
          std::lock_guard lock(mu_);
          if (first_error_.empty()) {
            first_error_ = "ping " + std::to_string(seq) + ": " +
                           (reply.ok() ? "another reply" : reply.status().ToString());
          }
          return;
        }
        ++replies_;
        std::this_thread::sleep_for(5ms);
      }
    }
    std::atomic<bool> stop_{false};
    std::atomic<int> replies_{0};
    mutable std::mutex mu_;
    std::string first_error_;
    std::thread thread_;
  };

  // A's daemon goes away with signo and a new one starts; the ping runs
  // across it and the channel is re-attached and confirmed within 5 s.
  void RestartUnderPing(int signo) {
    uint64_t id = channel_->info().id;
    ASSERT_TRUE(Eventually([&] { return Confirmed(id); }, 5s)) << pair_.Logs();
    Pinger pinger(channel_.get());
    ASSERT_TRUE(Eventually([&] { return pinger.replies() >= 20; }, 10s)) << pinger.first_error();
    pair_.a().process->Signal(signo);
    ASSERT_TRUE(pair_.a().process->WaitExit(10s).has_value()) << "step: rdmad A did not exit";
    int during = pinger.replies();
    auto t0 = Clock::now();
    Status restarted = pair_.Restart(&pair_.a());
    ASSERT_TRUE(restarted.ok()) << restarted.ToString();
    auto started = Clock::now();
    bool confirmed = Eventually([&] { return Confirmed(id); }, 10s);
    auto at = Clock::now();
    std::printf(
        "DRILL own daemon restart (signal %d): rdmad up after %.2f s; channel re-attached and "
        "confirmed %.2f s later (limit 5 s); %d pings during\n",
        signo, Seconds(started - t0), Seconds(at - started), pinger.replies() - during);
    EXPECT_TRUE(confirmed) << "step: A restarted; expected the channel established on both "
                              "daemons\nA: "
                           << RowOf(pair_.a(), id).state << " " << RowOf(pair_.a(), id).reason
                           << "\n"
                           << pair_.Logs();
    EXPECT_LT(at - started, 5s);
    int before = pinger.replies();
    EXPECT_TRUE(Eventually([&] { return pinger.replies() >= before + 20; }, 10s));
    pinger.Stop();
    EXPECT_EQ(pinger.first_error(), "") << "step: pinging across the restart; expected no loss";
    // A's new daemon carries the close to B.
    channel_->Close();
    EXPECT_TRUE(Eventually([&] { return Has(*server_, "HELPER ended "); }, 5s)) << server_->log();
    EXPECT_TRUE(Eventually([&] { return RowOf(pair_.b(), id).state == "closed"; }, 5s))
        << pair_.Logs();
  }

  testing::TempDir dir_;
  testing::DaemonPair pair_;
  std::unique_ptr<Process> server_;
  std::unique_ptr<Client> app_;
  std::unique_ptr<Channel> channel_;
};

TEST_F(RestartTest, APingRunsAcrossAKillAndRestartOfItsDaemon) { RestartUnderPing(SIGKILL); }

TEST_F(RestartTest, APingRunsAcrossAStopAndStartOfItsDaemon) { RestartUnderPing(SIGTERM); }

TEST_F(RestartTest, PoolTargetsAreKnownToTheNewDaemon) {
  ASSERT_TRUE(app_->Prewarm("B", "svc", 2).ok());
  auto row = [&] {
    auto pools = pair_.a().client ? pair_.a().client->ListPools()
                                  : StatusOr<std::vector<PoolSummary>>(Status::Unavailable(""));
    for (const PoolSummary& p : pools.ok() ? *pools : std::vector<PoolSummary>{}) {
      if (p.peer == "B" && p.service == "svc" && p.source == "api") return p;
    }
    return PoolSummary{};
  };
  ASSERT_TRUE(Eventually([&] { return row().warm == 2; }, 10s)) << pair_.Logs();
  Status restarted = pair_.Restart(&pair_.a());
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  auto started = Clock::now();
  ASSERT_TRUE(Eventually([&] { return row().target == 2 && row().warm == 2; }, 10s))
      << pair_.Logs();
  std::printf("DRILL own daemon restart: pool target and counts back after %.2f s (limit 5 s)\n",
              Seconds(Clock::now() - started));
  EXPECT_LT(Clock::now() - started, 5s);
  auto warm = app_->Connect("B", "svc");
  ASSERT_TRUE(warm.ok()) << warm.status().ToString();
  EXPECT_TRUE(warm.value()->Send("x", 1).ok());
}

TEST_F(RestartTest, AChannelWhosePeerWentAwayMeanwhileFailsWithTheReason) {
  uint64_t id = channel_->info().id;
  ASSERT_TRUE(Eventually([&] { return Confirmed(id); }, 5s)) << pair_.Logs();
  pair_.a().process->Signal(SIGKILL);
  ASSERT_TRUE(pair_.a().process->WaitExit(5s).has_value());
  server_->Signal(SIGKILL);  // B's daemon closes its side, and cannot tell A
  ASSERT_TRUE(Eventually([&] { return RowOf(pair_.b(), id).state == "closed"; }, 5s))
      << pair_.Logs();
  Status restarted = pair_.Restart(&pair_.a());
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  ASSERT_TRUE(Eventually([&] { return RowOf(pair_.a(), id).state == "failed"; }, 10s))
      << pair_.Logs();
  EXPECT_NE(RowOf(pair_.a(), id).reason.find("no longer has the channel"), std::string::npos)
      << RowOf(pair_.a(), id).reason;
  auto recv = channel_->Recv(5s);
  EXPECT_EQ(recv.status().code(), StatusCode::kUnavailable) << recv.status().ToString();
}

// The re-attach window is for getting back to a daemon, not for the hold
// itself: a re-attached channel outlives it, and the next restart opens a
// window of its own.
TEST_F(RestartTest, AReattachedChannelOutlivesItsWindowAndTheNextRestart) {
  // Wide enough for a restart in the lab's emulated VM under load (a kill
  // to a re-attach took 2.4 s there), which a 2 s window missed.
  constexpr auto kWindow = 5s;
  auto app = Open(kWindow);
  ASSERT_NE(app, nullptr);
  auto channel = app->Connect("B", "svc");
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  uint64_t id = channel.value()->info().id;
  for (int restart = 1; restart <= 2; ++restart) {
    Status restarted = pair_.Restart(&pair_.a());
    ASSERT_TRUE(restarted.ok()) << restarted.ToString();
    ASSERT_TRUE(Eventually([&] { return Confirmed(id); }, 5s))
        << "step: restart " << restart
        << "; expected the channel confirmed\nA: " << RowOf(pair_.a(), id).state << " "
        << RowOf(pair_.a(), id).reason << "\nB: " << RowOf(pair_.b(), id).state << " "
        << RowOf(pair_.b(), id).reason;
    std::this_thread::sleep_for(kWindow + 500ms);  // past the window
    std::string text = "after restart " + std::to_string(restart);
    ASSERT_TRUE(channel.value()->Send(text.data(), text.size()).ok());
    auto reply = channel.value()->Recv(5s);
    ASSERT_TRUE(reply.ok()) << "step: restart " << restart
                            << " + the window: " << reply.status().ToString();
    EXPECT_EQ(std::string(reply->begin(), reply->end()), text);
    EXPECT_EQ(RowOf(pair_.a(), id).state, "established");
  }
}

// A batch's channels share one lifeline stream: one of them closed leaves
// the others held, and after a restart each re-attaches on its own.
TEST_F(RestartTest, ABatchsChannelsAreHeldTogetherAndReattachEachAlone) {
  auto channels = app_->ConnectMany("B", "svc", 3);
  ASSERT_TRUE(channels.ok()) << channels.status().ToString() << pair_.Logs();
  std::vector<uint64_t> ids;
  for (auto& c : channels.value()) ids.push_back(c->info().id);
  auto confirmed = [&](std::initializer_list<size_t> which) {
    for (size_t i : which) {
      if (!Confirmed(ids[i])) return false;
    }
    return true;
  };
  ASSERT_TRUE(Eventually([&] { return confirmed({0, 1, 2}); }, 5s)) << pair_.Logs();
  channels.value()[1]->Close();
  EXPECT_TRUE(Eventually([&] { return RowOf(pair_.a(), ids[1]).state == "closed"; }, 5s));
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(confirmed({0, 2})) << "step: one channel of the batch closed; the others held";
  Status restarted = pair_.Restart(&pair_.a());
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  EXPECT_TRUE(Eventually(
      [&] {
        return confirmed({0, 2});
      },
      5s))
      << "step: A restarted; expected both channels re-attached\n"
      << pair_.Logs();
  for (size_t i : {0, 2}) {
    std::string text = "after restart, channel " + std::to_string(i);
    ASSERT_TRUE(channels.value()[i]->Send(text.data(), text.size()).ok());
    auto reply = channels.value()[i]->Recv(5s);
    ASSERT_TRUE(reply.ok()) << i << ": " << reply.status().ToString();
    EXPECT_EQ(std::string(reply->begin(), reply->end()), text);
  }
  channels.value().clear();
  EXPECT_TRUE(Eventually([&] { return RowOf(pair_.b(), ids[2]).state == "closed"; }, 5s));
}

TEST_F(RestartTest, WithoutADaemonTheChannelFailsAfterTheReattachTimeout) {
  auto app = Open(1s);
  ASSERT_NE(app, nullptr);
  auto channel = app->Connect("B", "svc");
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  auto t0 = Clock::now();
  pair_.a().process->Signal(SIGKILL);
  auto recv = channel.value()->Recv(10s);
  EXPECT_EQ(recv.status().code(), StatusCode::kUnavailable) << recv.status().ToString();
  EXPECT_EQ(recv.status().message(),
            "rdmad did not come back within 1000 ms to take the channel back");
  EXPECT_GE(Clock::now() - t0, 900ms);
  EXPECT_LT(Clock::now() - t0, 5s);
}

}  // namespace
}  // namespace rdmad
