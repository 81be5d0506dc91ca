// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl top against two real daemons on loopback while the test process
// streams messages to B's echo service: --once --json gives B up with the
// channel and a send rate near what the stream made; -n 2 prints two
// frames of the text view.

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/echo_protocol.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/daemon_pair.h"

namespace rdmad {
namespace {

using std::chrono::seconds;

class TopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status started = pair_.Start();
    ASSERT_TRUE(started.ok()) << started.ToString() << pair_.Logs();
    auto channel = pair_.ConnectAB(echo::kService);
    ASSERT_TRUE(channel.ok()) << channel.status().ToString() << pair_.Logs();
    channel_ = std::move(channel).value();
    ASSERT_TRUE(
        echo::Handshake(*channel_, {echo::kVersion, echo::Mode::kEcho, 0}, seconds(10)).ok());
    // 64 KiB round trips until the test ends: a steady stream both ways.
    streamer_ = std::thread([this] {
      std::vector<uint8_t> payload(64 << 10, 1);
      while (!stop_) {
        if (!channel_->Send(payload.data(), payload.size()).ok()) return;
        auto back = channel_->Recv(seconds(10));
        if (!back.ok()) return;
        ++round_trips_;
      }
    });
  }
  void TearDown() override {
    stop_ = true;
    if (streamer_.joinable()) streamer_.join();
    if (channel_) channel_->Close();
    if (HasFailure()) std::fprintf(stderr, "%s\n", pair_.Logs().c_str());
  }
  int Top(std::vector<std::string> args, std::string* out) {
    args.insert(args.begin(), {"--socket", pair_.a().socket, "top"});
    return testing::RunCommand(RDMACTL_BINARY, args, out);
  }

  testing::DaemonPair pair_;
  std::unique_ptr<Channel> channel_;
  std::thread streamer_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> round_trips_{0};
};

TEST_F(TopTest, OnceAsJsonShowsThePeerTheChannelAndItsRate) {
  std::string out;
  uint64_t before = round_trips_;
  ASSERT_EQ(Top({"--once", "--json", "-d", "3"}, &out), 0) << out;
  uint64_t trips = round_trips_ - before;
  auto json = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << out;
  EXPECT_NEAR(json["interval_s"].get<double>(), 3, 0.5) << out;
  EXPECT_EQ(json["established"], 1) << out;
  ASSERT_EQ(json["peers"].size(), 1u) << out;
  EXPECT_EQ(json["peers"][0]["peer"], "B") << out;
  EXPECT_EQ(json["peers"][0]["state"], "up") << out;
  EXPECT_EQ(json["peers"][0]["channels"], 1) << out;
  ASSERT_EQ(json["channels"].size(), 1u) << out;
  EXPECT_EQ(json["channels"][0]["id"], FormatChannelId(channel_->info().id)) << out;
  EXPECT_EQ(json["channels"][0]["transport"], "TCP") << out;
  // What the stream made over the frame, within the library's reporting
  // (about once a second, so up to two reports' worth either way).
  double made = double(trips) * (64 << 10) / 3.0;
  double shown = json["peers"][0]["tx_bytes_per_s"].get<double>();
  EXPECT_GT(shown, 0) << out;
  EXPECT_GT(shown, made * 0.2) << "made " << made << " B/s\n" << out;
  EXPECT_LT(shown, made * 3 + (64 << 10)) << "made " << made << " B/s\n" << out;
  EXPECT_EQ(json["rails"][0]["device"], "TCP") << out;
}

TEST_F(TopTest, TwoFramesOfTheTextView) {
  std::string out;
  ASSERT_EQ(Top({"-n", "2", "-d", "0.5"}, &out), 0) << out;
  size_t first = out.find("rdmad ");
  ASSERT_NE(first, std::string::npos) << out;
  EXPECT_NE(out.find("rdmad ", first + 1), std::string::npos) << "one frame only\n" << out;
  EXPECT_NE(out.find("peers 1/1 up | channels 1 (0 RDMA, 1 TCP)"), std::string::npos) << out;
  EXPECT_NE(out.find("PEER  STATE"), std::string::npos) << out;
  EXPECT_NE(out.find("B     up"), std::string::npos) << out;
  EXPECT_NE(out.find(FormatChannelId(channel_->info().id)), std::string::npos) << out;
  EXPECT_EQ(out.find("\x1b["), std::string::npos) << "no screen control when not a terminal";
}

}  // namespace
}  // namespace rdmad
