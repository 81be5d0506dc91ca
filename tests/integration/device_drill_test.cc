// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Drills on the RDMA device under the channels (lab only; the fixture in
// drill_fixture.h): its netdev goes down and up, the address behind its GID
// changes, the device is removed and added again. Channels over it fail
// with the reason, rdmactl shows each step, and new channels and the pool
// come back over RDMA.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/drill_fixture.h"

namespace rdmad {
namespace {

using namespace rdmad::testing;

TEST_F(DrillTest, ALinkDownFailsRdmaChannelsWithThePortsReason) {
  const char* netdev = std::getenv("LAB_NETDEV");
  const char* dev = std::getenv("LAB_DEV");
  if (std::getenv("LAB_IP") == nullptr || netdev == nullptr || dev == nullptr) {
    GTEST_SKIP() << "needs the lab: an RDMA device whose netdev can go down";
  }
  std::string ip_link = std::string("ip link set ") + netdev;
  auto recvs = BlockInRecv();
  auto t0 = Clock::now();
  ASSERT_EQ(std::system((ip_link + " down").c_str()), 0);
  for (auto& recv : recvs) {
    Woken w = recv.get();
    EXPECT_EQ(w.status.code(), StatusCode::kUnavailable) << w.status.ToString();
    EXPECT_NE(w.status.message().find(std::string(dev) + " port 1"), std::string::npos)
        << w.status.ToString();
    EXPECT_LT(w.at - t0, 3s) << w.status.ToString();
  }
  ASSERT_EQ(std::system((ip_link + " up").c_str()), 0);
  // Once the port is ACTIVE again a new channel is RDMA, and the pool is full.
  bool rdma = Eventually(
      [&] {
        auto c = pair_.a().client->Connect("B", "svc");
        return c.ok() && c.value()->info().transport == ChannelTransport::kRdma;
      },
      60s);
  EXPECT_TRUE(rdma) << pair_.Logs();
  EXPECT_TRUE(Eventually([&] { return Row().warm == kWarm; })) << pair_.Logs();
}

// The GIDs rdmad may use: 192.0.2.128/25 (gid.subnet), so that an address
// behind the GID can go while the daemons keep peering on LAB_IP.
class GidDrillTest : public DrillTest {
 protected:
  void SetUp() override {
    netdev_ = std::getenv("LAB_NETDEV") != nullptr ? std::getenv("LAB_NETDEV") : "";
    if (std::getenv("LAB_IP") == nullptr || netdev_.empty()) {
      GTEST_SKIP() << "needs the lab: a netdev under the RDMA device to add addresses to";
    }
    ASSERT_TRUE(Ip("add", kFirst)) << "step: adding " << kFirst;
    DrillTest::SetUp();
  }
  void TearDown() override {
    if (netdev_.empty()) return;
    Ip("del", kFirst);
    Ip("del", kSecond);
  }
  std::string DaemonConfig() override {
    return "peer_channel_grace_s = 1\n\n[gid]\nsubnet = \"192.0.2.128/25\"\n";
  }
  bool Ip(const std::string& verb, const std::string& address) {
    std::string cmd = "ip addr " + verb + " " + address + "/24 dev " + netdev_ + " 2>/dev/null";
    return std::system(cmd.c_str()) == 0;
  }
  // The GID `rdmactl route` shows for the peer, as sysfs writes it.
  std::string RouteGid() {
    auto path = pair_.a().client->ResolvePath(std::getenv("LAB_IP"));
    return path.ok() ? path->gid : "(" + path.status().ToString() + ")";
  }
  static constexpr char kFirst[] = "192.0.2.200";   // c000:02c8
  static constexpr char kSecond[] = "192.0.2.201";  // c000:02c9
  std::string netdev_;
};

// The address behind the channels' GID is removed and another added: the
// channels fail with the GID's removal as the reason, new channels and
// `rdmactl route` use the new GID.
TEST_F(GidDrillTest, AGidChangeFailsItsChannelsAndNewOnesUseTheNewGid) {
  std::string before = RouteGid();
  ASSERT_NE(before.find("c000:02c8"), std::string::npos) << "step: the route before: " << before;
  auto recvs = BlockInRecv();
  auto t0 = Clock::now();
  ASSERT_TRUE(Ip("add", kSecond)) << "step: adding " << kSecond;
  ASSERT_TRUE(Ip("del", kFirst)) << "step: removing " << kFirst;
  for (auto& recv : recvs) {
    Woken w = recv.get();
    EXPECT_EQ(w.status.code(), StatusCode::kUnavailable) << w.status.ToString();
    EXPECT_NE(w.status.message().find("removed"), std::string::npos)
        << "step: " << kFirst << " removed; expected the GID's removal as the reason, saw "
        << w.status.ToString();
    EXPECT_LT(w.at - t0, 3s) << w.status.ToString();
    std::printf("DRILL GID change: a blocked Recv woke after %.2f s (limit 3 s): %s\n",
                std::chrono::duration<double>(w.at - t0).count(), w.status.message().c_str());
  }
  ASSERT_TRUE(Eventually([&] { return RouteGid().find("c000:02c9") != std::string::npos; }, 5s))
      << "step: the route after the change: " << RouteGid();
  // A new channel works over the new GID. The pool's channels on the old
  // one fail too, each as soon as its application hears it; an application
  // tries again (docs/channels.md, "Failure drills").
  auto fresh = pair_.a().client->Connect("B", "svc");
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(fresh.value()->info().transport, ChannelTransport::kRdma);
  EXPECT_EQ(Ping(*fresh.value(), "over the new GID"), "");
  EXPECT_TRUE(Eventually(
      [&] {
        auto c = app_->Connect("B", "svc");
        return c.ok() && c.value()->info().transport == ChannelTransport::kRdma &&
               Ping(*c.value(), "pooled, over the new GID").empty();
      },
      20s))
      << pair_.Logs();
  EXPECT_TRUE(Eventually([&] { return PoolRefilled(); }, 20s)) << pair_.Logs();
}

// Every event A's daemon sends from now on, until Stop().
class EventLog {
 public:
  explicit EventLog(Client& client) {
    auto stream = client.WatchEvents();
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    if (!stream.ok()) return;
    stream_ = std::move(stream).value();
    thread_ = std::thread([this] {
      Event e;
      while (stream_->Next(&e)) {
        std::lock_guard lock(mu_);
        lines_.push_back(std::string(EventKindName(e.kind)) + " " + e.device);
      }
    });
  }
  ~EventLog() { Stop(); }
  void Stop() {
    if (stream_) stream_->Cancel();
    if (thread_.joinable()) thread_.join();
  }
  // Where line is in the log (npos: not there).
  size_t Find(const std::string& line) {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < lines_.size(); ++i) {
      if (lines_[i] == line) return i;
    }
    return std::string::npos;
  }

 private:
  std::unique_ptr<EventStream> stream_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> lines_;  // guarded by mu_
};

// The device under the channels is removed (`rdma link delete`) and added
// again. rxe waits for every user of the device before the delete finishes:
// rdmad counts the device removed as soon as its uverbs node goes, so the
// channels fail with "DEV removed" and their applications let them go; then
// the delete finishes, `rdmactl devices` and `rdmactl events` show each
// step, and once the device is back the pool rebuilds over RDMA.
TEST_F(DrillTest, ADeviceRemovedAndAddedAgainFailsItsChannelsAndThePoolRebuilds) {
  const char* dev = std::getenv("LAB_DEV");
  const char* netdev = std::getenv("LAB_NETDEV");
  if (std::getenv("LAB_IP") == nullptr || dev == nullptr || netdev == nullptr) {
    GTEST_SKIP() << "needs the lab: a Soft-RoCE device to delete and add";
  }
  auto listed = [&] {
    auto devices = pair_.a().client->ListDevices();
    bool active = false;
    for (const Device& d : devices.ok() ? *devices : std::vector<Device>{}) {
      for (const Port& p : d.ports) active = active || (d.name == dev && p.state == "ACTIVE");
    }
    return active;
  };
  ASSERT_TRUE(listed()) << "step: before; expected " << dev << " ACTIVE in rdmactl devices";
  EventLog events(*pair_.a().client);
  auto recvs = BlockInRecv();
  auto t0 = Clock::now();
  // Not std::async: a delete that never finishes must not hold the test up.
  auto deleted = std::make_shared<std::promise<int>>();
  auto delete_done = deleted->get_future();
  std::thread([deleted, cmd = std::string("rdma link delete ") + dev] {
    deleted->set_value(std::system(cmd.c_str()));
  }).detach();
  for (auto& recv : recvs) {
    Woken w = recv.get();
    EXPECT_EQ(w.status.code(), StatusCode::kUnavailable) << w.status.ToString();
    EXPECT_NE(w.status.message().find(std::string(dev) + " removed"), std::string::npos)
        << "step: rdma link delete; expected \"" << dev << " removed\", saw "
        << w.status.ToString();
    EXPECT_LT(w.at - t0, 3s) << w.status.ToString();
    std::printf("DRILL device removed: a blocked Recv woke after %.2f s (limit 3 s): %s\n",
                std::chrono::duration<double>(w.at - t0).count(), w.status.message().c_str());
  }
  in_use_.clear();  // the application lets its failed channels go
  ASSERT_EQ(delete_done.wait_for(30s), std::future_status::ready)
      << "step: rdma link delete; expected it to finish once the channels were let go\n"
      << pair_.Logs() << server_->log();
  EXPECT_EQ(delete_done.get(), 0);
  std::printf("DRILL device removed: rdma link delete finished after %.2f s\n",
              std::chrono::duration<double>(Clock::now() - t0).count());
  EXPECT_FALSE(listed()) << "step: deleted; expected rdmactl devices without " << dev;

  std::string add = std::string("rdma link add ") + dev + " type rxe netdev " + netdev;
  ASSERT_EQ(std::system(add.c_str()), 0) << "step: " << add;
  auto added_at = Clock::now();
  ASSERT_TRUE(Eventually(listed, 10s)) << "step: added; expected " << dev << " ACTIVE again";
  // New channels are RDMA again (warm channels made over TCP while the
  // device was gone stay TCP until they are closed, as after a link down).
  bool rdma = Eventually(
      [&] {
        auto c = pair_.a().client->Connect("B", "svc");
        return c.ok() && c.value()->info().transport == ChannelTransport::kRdma &&
               Ping(*c.value(), "on the new device").empty();
      },
      30s);
  std::printf("DRILL device added again: a new channel is RDMA after %.2f s\n",
              std::chrono::duration<double>(Clock::now() - added_at).count());
  EXPECT_TRUE(rdma) << "step: added; expected new channels over RDMA\n" << pair_.Logs();
  EXPECT_TRUE(Eventually([&] { return Row().warm == kWarm; }, 30s))
      << "step: added; expected the pool full\n"
      << pair_.Logs();
  EXPECT_TRUE(Eventually([&] {
    size_t removed = events.Find(std::string("device-removed ") + dev);
    size_t added = events.Find(std::string("device-added ") + dev);
    return removed != std::string::npos && added != std::string::npos && removed < added;
  })) << "step: rdmactl events; expected device-removed, then device-added";
}

}  // namespace
}  // namespace rdmad
