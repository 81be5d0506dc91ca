// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Channels through the client library between two real rdmad processes on
// loopback: an app (a thread) Listens on "svc" through daemon B, another
// Connects to ("B", "svc") through daemon A. Without RDMA devices on the
// host the channel falls back to TCP; messages of 1 B and 1 MiB cross, and
// a region is written and read back. Then the clear statuses: unknown
// peer, no such service, rejected, a second listener.

#include <poll.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/daemon_pair.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class ChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status started = pair_.Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
  }

  // Connects from A's app to B's "svc", retrying while A's session to B
  // comes up. peer: "B", or another name for the negative tests.
  StatusOr<std::unique_ptr<Channel>> ConnectAB(const std::string& peer) {
    if (peer == "B") return pair_.ConnectAB("svc");
    return a_.client->Connect(peer, "svc");
  }

  std::string Logs() const { return pair_.Logs(); }

  testing::DaemonPair pair_;
  testing::DaemonNode& a_ = pair_.a();
  testing::DaemonNode& b_ = pair_.b();
};

// Lab only (LAB_IP set, rxe0 up): the channel comes up as RDMA; both
// sides log device, GID, QPN and MTU.
// Every RDMA field of ChannelInfo, filled on either role.
void ExpectRdmaInfo(const ChannelInfo& info) {
  EXPECT_NE(info.id, 0u);
  EXPECT_FALSE(info.peer.empty());
  EXPECT_EQ(info.service, "svc");
  EXPECT_FALSE(info.transport_reason.empty());
  EXPECT_FALSE(info.local_device.empty());
  EXPECT_FALSE(info.peer_device.empty());
  EXPECT_NE(info.local_port, 0u);
  EXPECT_NE(info.peer_port, 0u);
  EXPECT_FALSE(info.local_gid.empty());
  EXPECT_FALSE(info.peer_gid.empty());
  EXPECT_FALSE(info.gid_type.empty());
  EXPECT_NE(info.local_qpn, 0u);
  EXPECT_NE(info.peer_qpn, 0u);
  EXPECT_NE(info.mtu, 0u);
  EXPECT_NE(info.local_active_mtu, 0u);
  EXPECT_NE(info.peer_active_mtu, 0u);
  EXPECT_LE(info.mtu, std::min(info.local_active_mtu, info.peer_active_mtu));
  EXPECT_NE(info.send_depth, 0u);
  EXPECT_NE(info.recv_depth, 0u);
  EXPECT_NE(info.slot_size, 0u);
  EXPECT_GT(info.handshake_ms, 0);
}

TEST_F(ChannelTest, LabComesUpAsRdma) {
  if (std::getenv("LAB_IP") == nullptr) GTEST_SKIP() << "lab only (LAB_IP unset)";
  auto listener = b_.client->Listen("svc");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  ChannelInfo acceptor;
  std::jthread app_b([&] {
    auto channel = listener.value()->Accept(seconds(30));
    ASSERT_TRUE(channel.ok()) << channel.status().ToString();
    EXPECT_EQ(channel.value()->info().transport, ChannelTransport::kRdma)
        << channel.value()->info().transport_reason;
    acceptor = channel.value()->info();
    auto msg = channel.value()->Recv(seconds(10));
    ASSERT_TRUE(msg.ok()) << msg.status().ToString();
    EXPECT_TRUE(channel.value()->Send(msg.value().data(), msg.value().size()).ok());
  });
  auto channel = ConnectAB("B");
  ASSERT_TRUE(channel.ok()) << channel.status().ToString() << "\n" << Logs();
  EXPECT_EQ(channel.value()->info().transport, ChannelTransport::kRdma)
      << channel.value()->info().transport_reason << "\n"
      << Logs();
  std::vector<uint8_t> msg(1 << 20, 0x42);
  ASSERT_TRUE(channel.value()->Send(msg.data(), msg.size()).ok());
  auto echo = channel.value()->Recv(seconds(10));
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(echo.value(), msg);
  app_b.join();
  const ChannelInfo& initiator = channel.value()->info();
  ExpectRdmaInfo(initiator);
  ExpectRdmaInfo(acceptor);
  EXPECT_EQ(initiator.id, acceptor.id);
  EXPECT_EQ(initiator.local_qpn, acceptor.peer_qpn);
  EXPECT_EQ(initiator.peer_qpn, acceptor.local_qpn);
  EXPECT_EQ(initiator.local_gid, acceptor.peer_gid);
  EXPECT_EQ(initiator.peer_gid, acceptor.local_gid);
  EXPECT_EQ(initiator.mtu, acceptor.mtu);
}

TEST_F(ChannelTest, FallsBackToTcpAndCarriesMessagesAndRegions) {
  if (std::getenv("LAB_IP") != nullptr) GTEST_SKIP() << "the TCP fallback is tested off the lab";
  auto listener = b_.client->Listen("svc");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  std::vector<uint8_t> region_b(4096, 0);
  std::jthread app_b([&] {
    auto channel = listener.value()->Accept(seconds(20));
    ASSERT_TRUE(channel.ok()) << channel.status().ToString();
    Channel& c = *channel.value();
    EXPECT_EQ(c.info().transport, ChannelTransport::kTcp);
    for (int i = 0; i < 2; ++i) {  // echo 1 B and 1 MiB
      auto msg = c.Recv(seconds(10));
      ASSERT_TRUE(msg.ok()) << msg.status().ToString();
      EXPECT_TRUE(c.Send(msg.value().data(), msg.value().size()).ok());
    }
    auto region = c.RegisterMemory(region_b.data(), region_b.size());
    ASSERT_TRUE(region.ok());
    auto bytes = region.value()->descriptor().Serialize();
    EXPECT_TRUE(c.Send(bytes.data(), bytes.size()).ok());
    auto done = c.Recv(seconds(10));  // the initiator is finished with it
    EXPECT_TRUE(done.ok());
  });
  auto channel = ConnectAB("B");
  ASSERT_TRUE(channel.ok()) << channel.status().ToString() << "\n" << Logs();
  Channel& c = *channel.value();
  EXPECT_EQ(c.info().transport, ChannelTransport::kTcp);
  EXPECT_FALSE(c.info().transport_reason.empty());
  for (size_t size : {size_t(1), size_t(1) << 20}) {
    std::vector<uint8_t> msg(size, 0xAB);
    ASSERT_TRUE(c.Send(msg.data(), msg.size()).ok());
    auto echo = c.Recv(seconds(10));
    ASSERT_TRUE(echo.ok()) << echo.status().ToString();
    EXPECT_EQ(echo.value(), msg);
  }
  auto desc_bytes = c.Recv(seconds(10));
  ASSERT_TRUE(desc_bytes.ok());
  auto desc = RegionDescriptor::Parse(desc_bytes.value().data(), desc_bytes.value().size());
  ASSERT_TRUE(desc.ok());
  std::vector<uint8_t> local(4096, 0x5C);
  auto mine = c.RegisterMemory(local.data(), local.size());
  ASSERT_TRUE(mine.ok());
  EXPECT_TRUE(c.Write(*mine.value(), 0, desc.value(), 0, 4096).ok());
  std::fill(local.begin(), local.end(), 0);
  EXPECT_TRUE(c.Read(*mine.value(), 0, desc.value(), 0, 4096).ok());
  EXPECT_EQ(local, std::vector<uint8_t>(4096, 0x5C));
  uint8_t bye = 1;
  EXPECT_TRUE(c.Send(&bye, 1).ok());
  app_b.join();
  EXPECT_EQ(region_b, std::vector<uint8_t>(4096, 0x5C));

  auto table = a_.client->ListChannels();  // rdmactl channels' source
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  // Attempts made while A's session to B came up are listed as failed; this
  // channel is established, or closed already since app B let go of it.
  std::vector<ChannelSummary> rows;
  for (const ChannelSummary& row : table.value()) {
    if (row.id == c.info().id) rows.push_back(row);
  }
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].state == "established" || rows[0].state == "closed") << rows[0].state;
  EXPECT_EQ(rows[0].transport, "TCP");
  EXPECT_EQ(rows[0].role, "initiator");
  EXPECT_EQ(rows[0].service, "svc");
  std::string out;
  EXPECT_EQ(testing::RunCommand(RDMACTL_BINARY, {"--socket", b_.socket, "channels"}, &out), 0);
  EXPECT_NE(out.find("acceptor"), std::string::npos) << out;
}

TEST_F(ChannelTest, ClearStatuses) {
  if (std::getenv("LAB_IP") != nullptr) GTEST_SKIP() << "tested off the lab";
  EXPECT_EQ(ConnectAB("nobody").status().code(), StatusCode::kNotFound);
  auto none = ConnectAB("B");
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound) << none.status().ToString();
  auto listener = b_.client->Listen("svc");
  ASSERT_TRUE(listener.ok());
  EXPECT_EQ(b_.client->Listen("svc").status().code(), StatusCode::kAlreadyExists);
  std::jthread app_b([&] { EXPECT_TRUE(listener.value()->Reject("busy", seconds(20)).ok()); });
  auto rejected = ConnectAB("B");
  app_b.join();
  EXPECT_EQ(rejected.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(rejected.status().message(), "rejected: busy");
}

// Whether fd is readable within timeout.
bool Readable(int fd, milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, int(timeout.count())) == 1 && (p.revents & POLLIN) != 0;
}

// The request fd is readable exactly while a request waits: not before
// one comes, then until Accept takes it; Accept with timeout 0 then needs
// no wait. Close unregisters the service and cancels a waiting Accept.
TEST_F(ChannelTest, TheRequestFdSaysWhenAcceptWouldNotWaitAndCloseCancelsIt) {
  auto listener = b_.client->Listen("svc");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  auto fd = listener.value()->RequestFd();
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  EXPECT_FALSE(Readable(fd.value(), milliseconds(0)));
  EXPECT_EQ(listener.value()->Accept(milliseconds(0)).status().code(),
            StatusCode::kDeadlineExceeded);

  StatusOr<std::unique_ptr<Channel>> initiator = Status::Internal("not run");
  std::jthread app_a([&] { initiator = ConnectAB("B"); });
  ASSERT_TRUE(Readable(fd.value(), milliseconds(20000))) << Logs();
  EXPECT_TRUE(Readable(fd.value(), milliseconds(0)));  // still: nobody took it
  auto accepted = listener.value()->Accept(milliseconds(0));
  app_a.join();
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString() << Logs();
  ASSERT_TRUE(initiator.ok()) << initiator.status().ToString();
  EXPECT_FALSE(Readable(fd.value(), milliseconds(0)));
  ASSERT_TRUE(initiator.value()->Send("hi", 2).ok());
  auto got = accepted.value()->Recv(seconds(10));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got.value().begin(), got.value().end()), "hi");

  StatusOr<std::unique_ptr<Channel>> waiting = Status::Internal("not run");
  std::jthread app_b([&] { waiting = listener.value()->Accept(seconds(30)); });
  std::this_thread::sleep_for(milliseconds(100));
  listener.value()->Close();
  app_b.join();
  EXPECT_EQ(waiting.status().code(), StatusCode::kCancelled) << waiting.status().ToString();
  EXPECT_TRUE(Readable(fd.value(), milliseconds(0)));  // Accept would not wait
  EXPECT_EQ(listener.value()->Accept(seconds(30)).status().code(), StatusCode::kCancelled);
  listener.value()->Close();  // again: nothing
  // The name is free again once rdmad has seen the stream end.
  auto again = b_.client->Listen("svc");
  for (int i = 0; i < 100 && again.status().code() == StatusCode::kAlreadyExists; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
    again = b_.client->Listen("svc");
  }
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

}  // namespace
}  // namespace rdmad
