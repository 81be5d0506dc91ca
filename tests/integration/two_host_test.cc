// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Lab, two VMs (tests/lab/channels/two_vm.sh): an application on node a
// talks to an application on node b through the two hosts' daemons, which
// the script started (RDMAD_SOCKET names the local one). Node b listens on
// "lab.app" and serves: it echoes messages until the initiator closes, and
// offers a registered region for Write and Read. Node a connects to
// LAB_PEER_IP, checks that the channel is RDMA with both sides' devices,
// GIDs, QPNs and MTUs known, sends 1 B ... 16 MiB with checksums, writes a
// pattern into b's region and reads it back, then closes: b's Recv must end
// with UNAVAILABLE "closed by peer".

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "rdmad/client.h"
#include "tests/integration/two_host_support.h"

namespace rdmad {
namespace {

using lab::Env;
using lab::Pattern;
using std::chrono::seconds;

constexpr char kService[] = "lab.app";

class TwoHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Env("LAB_VMS") != "2" || Env("RDMAD_SOCKET").empty()) {
      GTEST_SKIP() << "lab two-VM only (tests/lab/channels/two_vm.sh)";
    }
    auto client = Client::Open();
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
  }

  void ServeOnB();
  void TalkFromA();

  std::unique_ptr<Client> client_;
};

void TwoHostTest::ServeOnB() {
  auto listener = client_->Listen(kService);
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  auto accepted = listener.value()->Accept(seconds(120));
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  Channel& c = *accepted.value();
  EXPECT_EQ(c.info().transport, ChannelTransport::kRdma) << c.info().transport_reason;
  std::vector<uint8_t> region_bytes(1 << 20, 0);
  auto region = c.RegisterMemory(region_bytes.data(), region_bytes.size());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  std::vector<uint8_t> desc = region.value()->descriptor().Serialize();
  ASSERT_TRUE(c.Send(desc.data(), desc.size()).ok());
  for (;;) {
    auto msg = c.Recv(seconds(120));
    if (!msg.ok()) {
      EXPECT_EQ(msg.status().code(), StatusCode::kUnavailable) << msg.status().ToString();
      EXPECT_NE(msg.status().message().find("closed by peer"), std::string::npos)
          << msg.status().ToString();
      return;
    }
    ASSERT_TRUE(c.Send(msg->data(), msg->size()).ok());
  }
}

void TwoHostTest::TalkFromA() {
  auto channel = lab::ConnectOnceListening(*client_, Env("LAB_PEER_IP"), kService);
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  Channel& c = *channel.value();
  const ChannelInfo& info = c.info();
  EXPECT_EQ(info.transport, ChannelTransport::kRdma) << info.transport_reason;
  EXPECT_EQ(info.local_device, Env("LAB_DEV"));
  EXPECT_FALSE(info.peer_device.empty());
  EXPECT_NE(info.local_qpn, 0u);
  EXPECT_NE(info.peer_qpn, 0u);
  EXPECT_FALSE(info.peer_gid.empty());
  EXPECT_EQ(info.mtu, std::min(info.local_active_mtu, info.peer_active_mtu));
  auto desc_bytes = c.Recv(seconds(60));
  ASSERT_TRUE(desc_bytes.ok()) << desc_bytes.status().ToString();
  auto remote = RegionDescriptor::Parse(desc_bytes->data(), desc_bytes->size());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  uint32_t seed = 1;
  for (size_t size : {size_t(1), size_t(4096), size_t(1) << 20, size_t(16) << 20}) {
    std::vector<uint8_t> msg = Pattern(size, seed++);
    ASSERT_TRUE(c.Send(msg.data(), msg.size()).ok()) << size;
    auto echo = c.Recv(seconds(120));
    ASSERT_TRUE(echo.ok()) << size << ": " << echo.status().ToString();
    EXPECT_TRUE(echo.value() == msg) << "echo of " << size << " bytes differs";
  }
  std::vector<uint8_t> out = Pattern(1 << 20, 99), in(1 << 20, 0);
  auto out_region = c.RegisterMemory(out.data(), out.size());
  auto in_region = c.RegisterMemory(in.data(), in.size());
  ASSERT_TRUE(out_region.ok() && in_region.ok());
  ASSERT_TRUE(c.Write(*out_region.value(), 0, remote.value(), 0, out.size()).ok());
  ASSERT_TRUE(c.Read(*in_region.value(), 0, remote.value(), 0, in.size()).ok());
  EXPECT_TRUE(in == out) << "read-back of the written region differs";
  c.Close();
}

TEST_F(TwoHostTest, AppOnATalksToAppOnB) {
  if (Env("LAB_NODE") == "b") {
    ServeOnB();
  } else {
    TalkFromA();
  }
}

}  // namespace
}  // namespace rdmad
