// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Lab, two VMs with two rails each (tests/lab/channels/rails.sh, run with
// --rails 2): the host-wide rail plan decides a channel's rails. On node
// a, another process (channel_close_helper plan) holds a plan of rxe0;
// this process then plans one rail and is balanced onto rxe1. Its channel
// to b still has rxe0 as its first rail (the path policy's: it carries the
// messages), but only the plan's rxe1 as a further rail, and a large Write
// goes on rxe1 alone: the first rail, outside the plan, takes no share.

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "rdmad/client.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/two_host_support.h"

namespace rdmad {
namespace {

using lab::Env;
using lab::Pattern;
using std::chrono::seconds;
using testing::Process;

constexpr char kService[] = "lab.rails.plan";
constexpr size_t kBytes = 8u << 20;

class TwoHostRailsPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!lab::TwoVmsTwoRails()) {
      GTEST_SKIP() << "lab, two VMs with two rails only (tests/lab/channels/rails.sh)";
    }
    auto client = Client::Open();
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
  }
  void ServeOnB();
  void DriveFromA();

  std::unique_ptr<Client> client_;
};

void TwoHostRailsPlanTest::ServeOnB() {
  auto listener = client_->Listen(kService);
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  auto accepted = listener.value()->Accept(seconds(120));
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  Channel& c = *accepted.value();
  std::vector<uint8_t> bytes(kBytes, 0);
  auto region = c.RegisterMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  std::vector<uint8_t> desc = region.value()->descriptor().Serialize();
  ASSERT_TRUE(c.Send(desc.data(), desc.size()).ok());
  auto end = c.Recv(seconds(300));
  EXPECT_FALSE(end.ok());
}

void TwoHostRailsPlanTest::DriveFromA() {
  // Another process of the host holds the first device.
  // Its log beside the daemon's socket, in the node's work directory.
  std::string socket = Env("RDMAD_SOCKET");
  std::string log = socket.substr(0, socket.rfind('/')) + "/plan_helper.log";
  Process helper(CHANNEL_CLOSE_HELPER, {socket, "plan"}, std::map<std::string, std::string>{}, log);
  std::string planned;
  for (int i = 0; i < 200 && planned.empty(); ++i) {
    std::string out = helper.log();
    size_t at = out.find("HELPER planned ");
    if (at != std::string::npos && out.find('\n', at) != std::string::npos) {
      planned = out.substr(at + 15, out.find('\n', at) - at - 15);
    }
    if (planned.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(planned, Env("LAB_DEV")) << helper.log();
  auto mine = client_->PlanRails(RailRequest{});
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  ASSERT_EQ(mine->rails.size(), 1u);
  EXPECT_EQ(mine->rails[0].device, Env("LAB_DEV1")) << "not balanced: " << mine->reason;

  auto channel = lab::ConnectOnceListening(*client_, Env("LAB_PEER_IP"), kService);
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  Channel& c = *channel.value();
  std::vector<ChannelRail> rails = c.rails();
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_EQ(rails[0].local_device, Env("LAB_DEV"));  // the path policy's
  EXPECT_EQ(rails[0].weight, 0u) << "the first rail, outside the plan, takes a share";
  EXPECT_EQ(rails[1].local_device, Env("LAB_DEV1"));
  auto desc_bytes = c.Recv(seconds(60));
  ASSERT_TRUE(desc_bytes.ok()) << desc_bytes.status().ToString();
  auto remote = RegionDescriptor::Parse(desc_bytes->data(), desc_bytes->size());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  std::vector<uint8_t> out = Pattern(kBytes, 11), in(kBytes, 0);
  auto out_region = c.RegisterMemory(out.data(), out.size());
  auto in_region = c.RegisterMemory(in.data(), in.size());
  ASSERT_TRUE(out_region.ok() && in_region.ok());
  ASSERT_TRUE(c.Write(*out_region.value(), 0, *remote, 0, kBytes).ok());
  ASSERT_TRUE(c.Read(*in_region.value(), 0, *remote, 0, kBytes).ok());
  EXPECT_TRUE(in == out);
  rails = c.rails();
  std::cout << "[ rails    ] planned on " << Env("LAB_DEV1") << ": " << rails[0].bytes_written
            << " B written on " << rails[0].local_device << ", " << rails[1].bytes_written
            << " B on " << rails[1].local_device << "\n";
  EXPECT_EQ(rails[0].bytes_written, 0u);
  EXPECT_EQ(rails[1].bytes_written, kBytes);
  EXPECT_EQ(rails[1].bytes_read, kBytes);
  c.Close();
}

TEST_F(TwoHostRailsPlanTest, AChannelStripesOverItsProcesssPlannedRailsOnly) {
  if (Env("LAB_NODE") == "b") {
    ServeOnB();
  } else {
    DriveFromA();
  }
}

}  // namespace
}  // namespace rdmad
