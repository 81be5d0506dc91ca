// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The soak (docs/benchmarks.md, "Soak"): not run in CI; it runs when
// RDMAD_SOAK_SECONDS is set (3600 for the hour). An application on A opens,
// uses and closes channels to B at random (at most 32 open), and B's rdmad
// is restarted every RDMAD_SOAK_RESTART_S seconds (default 180), by kill -9
// and by SIGTERM in turn; its application lives on, so open channels must
// carry on. At the end it prints the errors by kind ("SOAK ..." lines) and
// checks that A's daemon and the application are back to their baseline.
// Over TCP on the host; in the lab (LAB_IP) over RDMA.

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/daemon_pair.h"
#include "tests/integration/process_usage.h"
#include "tests/integration/test_app.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::EnvInt;
using testing::Eventually;
using testing::Usage;

TEST(SoakTest, RandomChannelsSurvivePeerDaemonRestarts) {
  const int soak_s = EnvInt("RDMAD_SOAK_SECONDS", 0);
  if (soak_s <= 0) GTEST_SKIP() << "set RDMAD_SOAK_SECONDS (3600 for the hour) to soak";
  const auto restart_every = std::chrono::seconds(EnvInt("RDMAD_SOAK_RESTART_S", 180));
  const bool lab = std::getenv("LAB_IP") != nullptr;
  testing::DaemonPair pair;
  Status started = pair.Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  // B's application has a client of its own (the pair replaces its own
  // client on every restart).
  ClientOptions b_options;
  b_options.socket_path = pair.b().socket;
  auto b_app = Client::Open(b_options);
  ASSERT_TRUE(b_app.ok()) << b_app.status().ToString();
  testing::AcceptAll server(b_app.value().get(), "svc");
  ASSERT_TRUE(pair.ConnectAB("svc").ok()) << pair.Logs();
  server.DropAll();

  std::mt19937 rng(EnvInt("RDMAD_SOAK_SEED", 1));
  std::map<std::string, int> errors;  // by kind
  std::map<std::string, int> done;    // operations by kind
  std::vector<std::unique_ptr<Channel>> open;
  auto fail = [&](const std::string& op, const Status& s) {
    ++errors[op + " " + std::string(StatusCodeName(s.code()))];
  };
  auto close_one = [&](size_t i) {
    uint64_t id = open[i]->info().id;
    open.erase(open.begin() + long(i));
    server.Drop(id);
    ++done["close"];
  };
  // Warm up allocators, caches and thread pools to the soak's peak: 32
  // channels open at once, a few times over, across restarts of B by
  // kill -9 and SIGTERM (gRPC reconnects and re-attached lifelines reach
  // their high-water marks too).
  for (int round = 0; round < 12; ++round) {
    if (round % 3 == 2) {
      pair.b().process->Signal(round % 2 == 0 ? SIGKILL : SIGTERM);
      pair.b().process->WaitExit(10s);
      Status restarted = pair.Restart(&pair.b());
      ASSERT_TRUE(restarted.ok()) << restarted.ToString();
      ASSERT_TRUE(Eventually([&] { return pair.ConnectAB("svc").ok(); }, 20s)) << pair.Logs();
      server.DropAll();
    }
    std::vector<std::unique_ptr<Channel>> batch;
    for (int i = 0; i < 32; ++i) {
      auto channel = pair.a().client->Connect("B", "svc");
      ASSERT_TRUE(channel.ok()) << channel.status().ToString();
      ASSERT_TRUE(testing::RoundTrip(channel.value().get(), server));
      batch.push_back(std::move(channel).value());
    }
    for (auto& channel : batch) server.Drop(channel->info().id);
  }
  Usage base_a = Usage::Of(pair.a().process->pid(), lab);
  Usage base_app = Usage::Of(getpid(), lab);
  std::string base_fds = testing::FdTargets(getpid());
  auto base_maps = testing::RssByMapping(getpid());
  auto start = Clock::now();
  auto next_restart = start + restart_every;
  int restarts = 0;
  while (Clock::now() - start < std::chrono::seconds(soak_s)) {
    if (Clock::now() >= next_restart) {
      int signo = restarts % 2 == 0 ? SIGKILL : SIGTERM;
      pair.b().process->Signal(signo);
      pair.b().process->WaitExit(10s);
      Status restarted = pair.Restart(&pair.b());
      if (!restarted.ok()) fail("restart", restarted);
      ++restarts;
      // The trend, before this restart's churn: a leak keeps growing, the
      // allocators' high-water marks level off.
      std::printf("SOAK restart %d at %.0f s: rdmad A %s; application %s\n", restarts,
                  std::chrono::duration<double>(Clock::now() - start).count(),
                  Usage::Of(pair.a().process->pid(), false).Describe().c_str(),
                  Usage::Of(getpid(), false).Describe().c_str());
      std::fflush(stdout);
      next_restart = Clock::now() + restart_every;
    }
    int action = int(rng() % 10);
    if (open.size() < 32 && (open.empty() || action < 3)) {
      auto channel = pair.a().client->Connect("B", "svc");
      if (!channel.ok()) {
        fail("connect", channel.status());
        std::this_thread::sleep_for(100ms);
        continue;
      }
      open.push_back(std::move(channel).value());
      ++done["connect"];
    } else if (action < 5 && !open.empty()) {
      close_one(rng() % open.size());
    } else if (!open.empty()) {
      size_t i = rng() % open.size();
      auto trip = testing::RoundTrip(open[i].get(), server);
      if (trip) {
        ++done["round trip"];
      } else {
        ++errors["round trip: " + std::string(trip.message()).substr(0, 60)];
        close_one(i);
      }
    }
  }
  while (!open.empty()) close_one(open.size() - 1);
  std::printf("SOAK seconds=%d restarts=%d seed=%d\n", soak_s, restarts,
              EnvInt("RDMAD_SOAK_SEED", 1));
  for (const auto& [kind, n] : done) std::printf("SOAK done %s: %d\n", kind.c_str(), n);
  for (const auto& [kind, n] : errors) std::printf("SOAK error %s: %d\n", kind.c_str(), n);
  std::fflush(stdout);
  // A channel that was open across a restart never fails; connects may
  // while B is down.
  for (const auto& [kind, n] : errors) {
    EXPECT_EQ(kind.rfind("connect", 0), 0u) << kind << ": " << n;
  }
  bool back = Eventually(
      [&] {
        return base_a.Same(Usage::Of(pair.a().process->pid(), lab), 0.05) &&
               base_app.Same(Usage::Of(getpid(), lab), 0.05);
      },
      30s);
  EXPECT_TRUE(back) << "rdmad A: " << base_a.Describe() << " -> "
                    << Usage::Of(pair.a().process->pid(), lab).Describe()
                    << "\napplication: " << base_app.Describe() << " -> "
                    << Usage::Of(getpid(), lab).Describe() << "\nits RSS grew in: "
                    << testing::RssGrowth(base_maps, testing::RssByMapping(getpid()))
                    << "\nits fds before:\n"
                    << base_fds << "after:\n"
                    << testing::FdTargets(getpid());
}

}  // namespace
}  // namespace rdmad
