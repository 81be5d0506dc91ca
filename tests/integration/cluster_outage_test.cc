// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// An etcd outage never kills a channel (docs/cluster.md, "The view"): a
// channel between applications on alpha and gamma does a round trip every
// 100 ms while etcd is away for 30 s (15 lease TTLs), and while etcd comes
// back empty (every lease and record lost, so every member drops out of
// the view and registers again); it goes on for longer than the channel
// grace (10 s) after the view is whole again. No round trip fails, and alpha's
// session to gamma is never closed or opened again.

#include <atomic>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/cluster_fixture.h"

namespace rdmad {
namespace {

using namespace rdmad::testing;

// Longer than daemon.peer_channel_grace_s (10 s): a session lost to a
// membership change would have failed the channel by then.
constexpr seconds kAfterReturn{12};

// Occurrences of text in log.
size_t Count(const std::string& log, const std::string& text) {
  size_t n = 0;
  for (size_t at = 0; (at = log.find(text, at)) != std::string::npos; at += text.size()) ++n;
  return n;
}

class ClusterOutageTest : public ClusterTest {
 protected:
  // An echo on gamma and a round trip from alpha every 100 ms, until Stop().
  void StartTraffic() {
    auto listener = nodes_["gamma"]->client->Listen("outage.test");
    ASSERT_TRUE(listener.ok()) << listener.status().ToString();
    listener_ = std::move(listener).value();
    StatusOr<std::unique_ptr<Channel>> accepted = Status::Internal("not accepted");
    std::jthread acceptor([&] { accepted = listener_->Accept(seconds(30)); });
    auto channel = nodes_["alpha"]->client->Connect("gamma", "outage.test");
    acceptor.join();
    ASSERT_TRUE(channel.ok()) << channel.status().ToString() << Logs();
    ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
    client_ = std::move(channel).value();
    server_ = std::move(accepted).value();
    echo_ = std::jthread([this](std::stop_token stop) {
      while (!stop.stop_requested()) {
        auto got = server_->Recv(milliseconds(200));
        if (got.status().code() == StatusCode::kDeadlineExceeded) continue;
        if (!got.ok() || !server_->Send(got->data(), got->size()).ok()) return;
      }
    });
    pinger_ = std::jthread([this](std::stop_token stop) {
      for (int i = 0; !stop.stop_requested(); ++i) {
        std::string text = "trip " + std::to_string(i);
        Status sent = client_->Send(text.data(), text.size());
        auto reply = sent.ok() ? client_->Recv(seconds(5)) : StatusOr<std::vector<uint8_t>>(sent);
        if (!reply.ok() || std::string(reply->begin(), reply->end()) != text) {
          std::lock_guard lock(mu_);
          error_ = text + ": " + (reply.ok() ? "a different reply" : reply.status().ToString());
          return;
        }
        ++trips_;
        std::this_thread::sleep_for(milliseconds(100));
      }
    });
  }

  // Stops the traffic; "" when every round trip came back.
  std::string StopTraffic() {
    pinger_.request_stop();
    pinger_.join();
    echo_.request_stop();
    echo_.join();
    return Error();
  }

  std::string Error() {
    std::lock_guard lock(mu_);
    return error_;
  }

  // Runs the traffic for d, then says whether it is still going.
  bool TrafficFlowsFor(milliseconds d) {
    int before = trips_.load();
    std::this_thread::sleep_for(d);
    return Error().empty() && trips_.load() > before;
  }

  // What an outage must not have done to alpha and its session to gamma.
  void ExpectTheSessionNeverWentAway() {
    const std::string log = nodes_["alpha"]->process->log();
    EXPECT_EQ(Count(log, "peer gamma: opening a session"), 1u) << log;
    EXPECT_EQ(Count(log, "peer gamma (127.0.0.1:" + std::to_string(nodes_["gamma"]->port) +
                             ") is no longer a cluster member there; closing its session"),
              0u)
        << log;
    EXPECT_EQ(
        Count(log, "peer gamma (127.0.0.1:" + std::to_string(nodes_["gamma"]->port) + ") is down"),
        0u)
        << log;
    EXPECT_EQ(PeerStateOf("alpha", "gamma"), "up");
  }

  void TearDown() override {
    if (pinger_.joinable()) StopTraffic();
  }

  std::unique_ptr<Listener> listener_;
  std::unique_ptr<Channel> client_;  // on alpha
  std::unique_ptr<Channel> server_;  // on gamma
  std::atomic<int> trips_{0};
  std::mutex mu_;
  std::string error_;  // the first failed round trip; guarded by mu_
  std::jthread echo_;
  std::jthread pinger_;
};

TEST_F(ClusterOutageTest, AChannelOutlivesEtcdStoppedForThirtySeconds) {
  ASSERT_TRUE(Sees("alpha", {"alpha", "beta", "gamma"})) << Logs();
  ASSERT_NO_FATAL_FAILURE(StartTraffic());
  ASSERT_TRUE(TrafficFlowsFor(milliseconds(500))) << Error();
  etcd_.Kill();
  ASSERT_TRUE(TrafficFlowsFor(seconds(30))) << Error() << Logs();
  ASSERT_TRUE(etcd_.Start()) << etcd_.log();
  for (const char* node : {"alpha", "beta", "gamma"}) {
    EXPECT_TRUE(Sees(node, {"alpha", "beta", "gamma"}, seconds(10))) << node << Logs();
  }
  // Every daemon renewed its lease: none expired meanwhile.
  EXPECT_TRUE(TrafficFlowsFor(kAfterReturn)) << Error() << Logs();
  EXPECT_EQ(StopTraffic(), "") << Logs();
  EXPECT_GT(trips_.load(), 250);
  ExpectTheSessionNeverWentAway();
  for (const auto& [name, node] : nodes_) {
    EXPECT_EQ(Count(node->process->log(), "expired in etcd; registering again"), 0u)
        << name << ": a lease expired although etcd answered within the TTL\n"
        << node->process->log();
    auto view = node->client->ListMembers();
    ASSERT_TRUE(view.ok()) << view.status().ToString();
    EXPECT_TRUE(view->reachable) << name;
  }
}

TEST_F(ClusterOutageTest, AChannelOutlivesEtcdComingBackWithoutItsLeases) {
  ASSERT_TRUE(Sees("alpha", {"alpha", "beta", "gamma"})) << Logs();
  ASSERT_NO_FATAL_FAILURE(StartTraffic());
  etcd_.Kill();
  ASSERT_TRUE(TrafficFlowsFor(seconds(3))) << Error() << Logs();  // longer than the TTL
  etcd_.Wipe();
  ASSERT_TRUE(etcd_.Start()) << etcd_.log();
  // Every member registers again (its lease is unknown to the new etcd).
  for (const char* node : {"alpha", "beta", "gamma"}) {
    EXPECT_TRUE(Sees(node, {"alpha", "beta", "gamma"}, seconds(10))) << node << Logs();
  }
  EXPECT_TRUE(TrafficFlowsFor(kAfterReturn)) << Error() << Logs();
  EXPECT_EQ(StopTraffic(), "") << Logs();
  ExpectTheSessionNeverWentAway();
  for (const auto& [name, node] : nodes_) {
    EXPECT_GE(Count(node->process->log(), "expired in etcd; registering again"), 1u)
        << name << ": the new etcd cannot know the old lease\n"
        << node->process->log();
  }
}

}  // namespace
}  // namespace rdmad
