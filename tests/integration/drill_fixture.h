// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The failure drills' fixture (drill_test.cc, device_drill_test.cc): two
// real daemons; an application on A keeps a pool of channels to service
// "svc", served on B by a separate process (channel_close_helper echo), and
// uses some of them. Over TCP on the host; in the lab (LAB_IP) over RDMA on
// rxe0. A's channels wait 1 s for a lost peer daemon unless a drill says
// otherwise (DaemonConfig).
//
// Thread safety: as a gtest fixture, from the test's thread; BlockInRecv's
// futures run on threads of their own.

#ifndef RDMAD_TESTS_INTEGRATION_DRILL_FIXTURE_H_
#define RDMAD_TESTS_INTEGRATION_DRILL_FIXTURE_H_

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/daemon_pair.h"
#include "tests/integration/test_app.h"

namespace rdmad::testing {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

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
    // The pool's report and A's table agree: every channel is up (a refill
    // may still be in its handshake when the report already counts it).
    ASSERT_TRUE(Eventually([&] {
      return Row().warm == kWarm && Row().in_use == kInUse &&
             CountOnA("established") == kWarm + kInUse && CountOnA("opening") == 0 &&
             CountOnA("planned") == 0;
    })) << pair_.Logs();
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

  // The pool is back to its target after a drill. A pooled channel whose
  // ping timed out (the drills' retry loops try again) goes back to the
  // pool healthy after its place was refilled, so the pool may hold one
  // beyond its target until the idle timeout closes it.
  bool PoolRefilled() { return Row().warm >= kWarm; }

  // A's channels to svc in state.
  size_t CountOnA(const std::string& state) {
    auto rows = pair_.a().client->ListChannels();
    size_t n = 0;
    for (const auto& c : rows.ok() ? *rows : std::vector<ChannelSummary>{}) {
      n += c.service == "svc" && c.state == state;
    }
    return n;
  }

  TempDir dir_;
  DaemonPair pair_;
  int serves_ = 0;
  std::unique_ptr<Process> server_;
  std::unique_ptr<Client> app_;
  std::vector<std::unique_ptr<Channel>> in_use_;
};

// A's session to B is up.
inline bool PeerUp(Client& client) {
  auto peers = client.ListPeers();
  if (!peers.ok()) return false;
  for (const PeerInfo& p : peers.value()) {
    if (p.name == "B") return p.state == PeerState::kUp;
  }
  return false;
}

// One message there and back on channel; "" or what went wrong.
inline std::string Ping(Channel& channel, const std::string& text) {
  Status sent = channel.Send(text.data(), text.size());
  if (!sent.ok()) return "Send: " + sent.ToString();
  auto reply = channel.Recv(5s);
  if (!reply.ok()) return "Recv: " + reply.status().ToString();
  if (std::string(reply->begin(), reply->end()) != text) return "a different reply";
  return "";
}

}  // namespace rdmad::testing

#endif  // RDMAD_TESTS_INTEGRATION_DRILL_FIXTURE_H_
