// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Channels through the client library between two real rdmad processes on
// loopback: an app (a thread) Listens on "svc" through daemon B, another
// Connects to ("B", "svc") through daemon A. Without RDMA devices on the
// host the channel falls back to TCP; messages of 1 B and 1 MiB cross, and
// a region is written and read back. Then the clear statuses: unknown
// peer, no such service, rejected, a second listener.

#include <cstdlib>
#include <thread>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/daemon_process.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Process;
using testing::TempDir;

struct Node {
  std::string name;
  std::string socket;
  int port = 0;
  std::unique_ptr<Process> process;
  std::unique_ptr<Client> client;
};

class ChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_.name = "A";
    b_.name = "B";
    for (Node* n : {&a_, &b_}) {
      n->socket = dir_.File(n->name + "/rdmad.sock");
      n->port = testing::FreeLoopbackPort();
    }
    Start(&a_, b_);
    Start(&b_, a_);
  }

  // In the lab (LAB_IP set) both daemons use the VM's address, so that
  // the path policy finds rxe0; elsewhere loopback.
  static std::string Ip() {
    const char* lab = std::getenv("LAB_IP");
    return lab != nullptr && *lab != 0 ? lab : "127.0.0.1";
  }

  static std::string DaemonBinary() {
    const char* root = std::getenv("LAB_ROOT");
    return root != nullptr && *root != 0 ? std::string(root) + "/build/daemon/rdmad"
                                         : std::string(RDMAD_BINARY);
  }

  void Start(Node* n, const Node& peer) {
    std::string ip = Ip();
    std::string text = "[daemon]\nsocket = \"" + n->socket +
                       "\"\nsocket_group = \"\"\nlog_level = \"debug\"\n"
                       "peer_address = \"" + ip + "\"\npeer_port = " + std::to_string(n->port) +
                       (ip == "127.0.0.1" ? "" : "\npeer_insecure = true") +
                       "\n\n[[peers]]\nname = \"" + peer.name + "\"\naddress = \"" + ip + ":" +
                       std::to_string(peer.port) + "\"\n";
    std::string config = dir_.Write(n->name + ".toml", text);
    n->process = std::make_unique<Process>(
        DaemonBinary(), std::vector<std::string>{"--config", config},
        std::map<std::string, std::string>{{"RDMAD_DAEMON_PEER_PORT", std::to_string(n->port)}},
        dir_.File(n->name + ".log"));
    ASSERT_TRUE(testing::WaitForPath(n->socket, seconds(10))) << n->process->log();
    ClientOptions options;
    options.socket_path = n->socket;
    auto client = Client::Connect(options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    n->client = std::move(client).value();
  }

  // Connects from A, retrying while A's session to B comes up.
  StatusOr<std::unique_ptr<Channel>> ConnectAB(const std::string& peer) {
    StatusOr<std::unique_ptr<Channel>> channel = Status::Unavailable("not tried");
    for (int i = 0; i < 50; ++i) {
      channel = a_.client->Connect(peer, "svc");
      if (channel.status().code() != StatusCode::kUnavailable) return channel;
      std::this_thread::sleep_for(milliseconds(100));
    }
    return channel;
  }

  std::string Logs() { return a_.process->log() + "\n---\n" + b_.process->log(); }

  TempDir dir_;
  Node a_;
  Node b_;
};

// Lab only (LAB_IP set, rxe0 up): the channel comes up as RDMA; both
// sides log device, GID, QPN and MTU.
TEST_F(ChannelTest, LabComesUpAsRdma) {
  if (std::getenv("LAB_IP") == nullptr) GTEST_SKIP() << "lab only (LAB_IP unset)";
  auto listener = b_.client->Listen("svc");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  std::thread app_b([&] {
    auto channel = listener.value()->Accept(seconds(30));
    ASSERT_TRUE(channel.ok()) << channel.status().ToString();
    EXPECT_EQ(channel.value()->info().transport, ChannelTransport::kRdma)
        << channel.value()->info().transport_reason;
    auto msg = channel.value()->Recv(seconds(10));
    ASSERT_TRUE(msg.ok()) << msg.status().ToString();
    EXPECT_TRUE(channel.value()->Send(msg.value().data(), msg.value().size()).ok());
  });
  auto channel = ConnectAB("B");
  ASSERT_TRUE(channel.ok()) << channel.status().ToString() << "\n" << Logs();
  EXPECT_EQ(channel.value()->info().transport, ChannelTransport::kRdma)
      << channel.value()->info().transport_reason << "\n" << Logs();
  std::vector<uint8_t> msg(1 << 20, 0x42);
  ASSERT_TRUE(channel.value()->Send(msg.data(), msg.size()).ok());
  auto echo = channel.value()->Recv(seconds(10));
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(echo.value(), msg);
  app_b.join();
}

TEST_F(ChannelTest, FallsBackToTcpAndCarriesMessagesAndRegions) {
  if (std::getenv("LAB_IP") != nullptr) GTEST_SKIP() << "the TCP fallback is tested off the lab";
  auto listener = b_.client->Listen("svc");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  std::vector<uint8_t> region_b(4096, 0);
  std::thread app_b([&] {
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
  // Attempts made while A's session to B came up are listed as failed.
  std::vector<ChannelSummary> established;
  for (const ChannelSummary& row : table.value()) {
    if (row.state == "established") established.push_back(row);
  }
  ASSERT_EQ(established.size(), 1u);
  EXPECT_EQ(established[0].transport, "TCP");
  EXPECT_EQ(established[0].role, "initiator");
  EXPECT_EQ(established[0].service, "svc");
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
  std::thread app_b([&] { EXPECT_TRUE(listener.value()->Reject("busy", seconds(20)).ok()); });
  auto rejected = ConnectAB("B");
  app_b.join();
  EXPECT_EQ(rejected.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(rejected.status().message(), "rejected: busy");
}

}  // namespace
}  // namespace rdmad
