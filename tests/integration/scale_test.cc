// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Scale and leaks between two real daemons (docs/channels.md, "Scale"):
//   - ScaleTest: N channels at once from an application on A to one on B
//     (RDMAD_SCALE_CHANNELS; 1,000 in the lab, 200 on the host), every one
//     used both ways; prints the connect rate and the daemons' RSS, and
//     once all are closed the daemons' fds are back where they started.
//   - LeakTest: open/close cycles (RDMAD_LEAK_CYCLES; 10,000 for the long
//     run, a few hundred by default) leave no fd in either daemon or in the
//     application, no QP or MR (`rdma resource show`, in the lab), and the
//     daemons' RSS grows by less than a bound.
// Channels are small (recv/send depth 4, 4 KiB slots: docs/configuration.md)
// so that 1,000 of them fit the lab VM's memory.

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/daemon_pair.h"
#include "tests/integration/process_usage.h"
#include "tests/integration/test_app.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::CountFds;
using testing::EnvInt;
using testing::Eventually;
using testing::InLab;
using testing::RssMib;

constexpr char kSmallChannels[] =
    "[qp]\nrecv_depth = 4\nsend_depth = 4\nslot_size = 4096\n"
    "[limits]\nmax_connects_per_client = 256\nmax_channels_per_peer = 4096\n";

class ScaleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Both ends of N channels live in this process: as many fds as allowed
    // (root in the lab may raise the hard limit too).
    rlimit fds{};
    getrlimit(RLIMIT_NOFILE, &fds);
    rlimit wanted{std::max<rlim_t>(fds.rlim_max, 65536), std::max<rlim_t>(fds.rlim_max, 65536)};
    if (setrlimit(RLIMIT_NOFILE, &wanted) != 0) {
      fds.rlim_cur = fds.rlim_max;
      setrlimit(RLIMIT_NOFILE, &fds);
    }
    Status started = pair_.Start(kSmallChannels, kSmallChannels);
    ASSERT_TRUE(started.ok()) << started.ToString();
    server_ = std::make_unique<testing::AcceptAll>(pair_.b().client.get(), "svc");
    ASSERT_TRUE(pair_.ConnectAB("svc").ok()) << pair_.Logs();  // A's session is up
  }

  pid_t PidA() { return pair_.a().process->pid(); }
  pid_t PidB() { return pair_.b().process->pid(); }

  size_t Established(testing::DaemonNode& n) {
    auto rows = n.client->ListChannels();
    size_t count = 0;
    for (const auto& c : rows.ok() ? *rows : std::vector<ChannelSummary>{}) {
      count += c.service == "svc" && c.state == "established";
    }
    return count;
  }

  ::testing::AssertionResult RoundTrip(Channel* channel) {
    return testing::RoundTrip(channel, *server_);
  }

  testing::DaemonPair pair_;
  std::unique_ptr<testing::AcceptAll> server_;  // B's application
};

TEST_F(ScaleTest, ManyChannelsBetweenTwoDaemonsAreAllUsable) {
  const int n = EnvInt("RDMAD_SCALE_CHANNELS", InLab() ? 1000 : 200);
  const int connectors = 4;
  server_->DropAll();
  ASSERT_TRUE(Eventually([&] { return Established(pair_.a()) == 0; })) << pair_.Logs();
  int fds_a = CountFds(PidA()), fds_b = CountFds(PidB());
  double rss_a0 = RssMib(PidA()), rss_b0 = RssMib(PidB());

  std::vector<std::unique_ptr<Channel>> channels(n);
  std::atomic<int> next{0}, failed{0};
  std::mutex error_mu;
  std::string first_error;
  auto t0 = Clock::now();
  std::vector<std::jthread> threads;
  for (int t = 0; t < connectors; ++t) {
    threads.emplace_back([&] {
      for (int i; (i = next++) < n;) {
        auto channel = pair_.a().client->Connect("B", "svc");
        if (channel.ok()) {
          channels[i] = std::move(channel).value();
          continue;
        }
        ++failed;
        std::lock_guard lock(error_mu);
        if (first_error.empty()) first_error = channel.status().ToString();
      }
    });
  }
  for (auto& t : threads) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_EQ(failed.load(), 0) << first_error << "\n" << pair_.Logs().substr(0, 20000);
  ASSERT_TRUE(Eventually([&] { return Established(pair_.b()) == size_t(n); })) << n;

  int rdma = 0;
  for (auto& c : channels) {
    ASSERT_TRUE(RoundTrip(c.get()));
    rdma += c->info().transport == ChannelTransport::kRdma;
  }
  if (InLab()) {
    EXPECT_EQ(rdma, n);
  }
  double rss_a = RssMib(PidA()), rss_b = RssMib(PidB());
  std::printf(
      "SCALE channels=%d transport=%s connectors=%d seconds=%.2f rate=%.1f "
      "rss_a_mib=%.1f rss_b_mib=%.1f rss_a0_mib=%.1f rss_b0_mib=%.1f fds_a=%d fds_b=%d\n",
      n, rdma == n ? "RDMA" : "TCP", connectors, seconds, n / seconds, rss_a, rss_b, rss_a0, rss_b0,
      CountFds(PidA()), CountFds(PidB()));
  std::fflush(stdout);

  channels.clear();  // every close reaches B, whose ends are then dropped
  ASSERT_TRUE(Eventually([&] { return Established(pair_.b()) == 0; }, 60s)) << pair_.Logs();
  server_->DropAll();
  // gRPC may keep a descriptor or two from the burst (its pollers, a
  // connection of its own); a leak would be one or more per channel.
  constexpr int kGrpcSlack = 2;
  EXPECT_TRUE(Eventually([&] {
    return CountFds(PidA()) <= fds_a + kGrpcSlack && CountFds(PidB()) <= fds_b + kGrpcSlack;
  })) << "fds A "
      << CountFds(PidA()) << " (was " << fds_a << "), B " << CountFds(PidB()) << " (was " << fds_b
      << ")";
  std::printf("SCALE after close: fds_a=%d (was %d) fds_b=%d (was %d)\n", CountFds(PidA()), fds_a,
              CountFds(PidB()), fds_b);
}

}  // namespace
}  // namespace rdmad
