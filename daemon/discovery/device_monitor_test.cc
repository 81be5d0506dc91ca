// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Device tests: the inventory and the monitor on a real RDMA device. They
// read the lab's environment (LAB_DEV, LAB_NETDEV, LAB_IP, LAB_GID_INDEX, see
// tests/lab/lib.sh). Read-only tests skip where no RDMA device exists; tests
// that add devices, move links or addresses run only inside the lab
// (LAB_NODE set), never on a developer's host.

#include "daemon/discovery/device_monitor.h"

#include <infiniband/verbs.h>
#include <sys/wait.h>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include "daemon/discovery/sysfs_reader.h"
#include "daemon/discovery/verbs_probe.h"
#include "gtest/gtest.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;
using Kind = InventoryChange::Kind;

std::string Env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

bool HasRdmaDevice() {
  std::error_code ec;
  auto it = std::filesystem::directory_iterator("/sys/class/infiniband", ec);
  return !ec && it != std::filesystem::directory_iterator();
}

bool InLab() { return !Env("LAB_NODE").empty() && !Env("LAB_DEV").empty(); }

// Runs a shell command; the test fails on a non-zero exit.
void Sh(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd << " failed (" << rc << ")";
}

// Collects the monitor's changes for the test thread.
class ChangeLog final : public InventoryListener {
 public:
  void OnInventory(std::shared_ptr<const Inventory>,
                   const std::vector<InventoryChange>& changes) override {
    std::lock_guard lock(mu_);
    for (const auto& c : changes) log_.push_back(c);
    cv_.notify_all();
  }
  // Waits up to timeout for a change matching kind/device/port whose message
  // contains text; consumes the changes before it.
  std::optional<InventoryChange> WaitFor(Kind kind, const std::string& device, int port,
                                         const std::string& text,
                                         std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      while (!log_.empty()) {
        InventoryChange c = log_.front();
        log_.pop_front();
        if (c.kind == kind && c.device == device && (port == 0 || c.port == port) &&
            c.message.find(text) != std::string::npos) {
          return c;
        }
      }
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && log_.empty()) {
        return std::nullopt;
      }
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<InventoryChange> log_;
};

class DeviceLabTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HasRdmaDevice()) GTEST_SKIP() << "no RDMA device on this host";
    dev_ = Env("LAB_DEV", "rxe0");
  }

  // Starts a monitor on the real /sys.
  void StartMonitor() {
    monitor_ = std::make_unique<DeviceMonitor>("/sys", &log_, /*use_verbs=*/true);
    ASSERT_TRUE(monitor_->Start().ok());
  }

  void TearDown() override {
    if (monitor_) monitor_->Stop();
  }

  std::string dev_;
  ChangeLog log_;
  std::unique_ptr<DeviceMonitor> monitor_;
};

TEST_F(DeviceLabTest, InventoryDescribesTheDevice) {
  auto inventory = ReadInventory("/sys");
  ASSERT_TRUE(inventory.ok()) << inventory.status().ToString();
  const DeviceInfo* d = inventory->Find(dev_);
  ASSERT_NE(d, nullptr) << dev_ << " not in the inventory";
  EXPECT_GT(d->max_qp, 0) << "verbs facts missing";
  EXPECT_GT(d->max_mr, 0);
  EXPECT_FALSE(d->node_guid.empty());
  ASSERT_FALSE(d->ports.empty());
  const PortInfo& p = d->ports[0];
  EXPECT_EQ(p.port, 1);
  if (!InLab()) return;  // the rest knows the lab's set-up
  EXPECT_EQ(d->vendor, "software");
  EXPECT_EQ(d->driver, "rdma_rxe");
  EXPECT_EQ(d->node_type, NodeType::kCa);
  EXPECT_EQ(d->parent_netdev, Env("LAB_NETDEV"));
  EXPECT_EQ(p.state_name, "ACTIVE");
  EXPECT_EQ(p.link_layer, LinkLayer::kEthernet);
  EXPECT_EQ(p.transport, Transport::kRoceV2);
  EXPECT_EQ(p.netdev, Env("LAB_NETDEV"));
  EXPECT_EQ(p.netdev_mtu, 1500);
  EXPECT_EQ(p.active_mtu, 1024);  // 1500 - RoCE headers -> 1024
  EXPECT_EQ(p.max_mtu, 4096);
  const GidEntry* v4 = nullptr;
  for (const GidEntry& g : p.gids) {
    if (g.index == std::atoi(Env("LAB_GID_INDEX", "1").c_str())) v4 = &g;
  }
  ASSERT_NE(v4, nullptr);
  EXPECT_EQ(v4->type, GidType::kRoceV2);
  EXPECT_EQ(v4->ip, Env("LAB_IP"));
  EXPECT_EQ(v4->netdev, Env("LAB_NETDEV"));
}

TEST_F(DeviceLabTest, GidTableFromVerbsMatchesSysfs) {
  auto sysfs = ReadSysfsDevices("/sys");
  ASSERT_TRUE(sysfs.ok());
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ASSERT_NE(list, nullptr);
  ibv_context* ctx = nullptr;
  for (int i = 0; i < n && ctx == nullptr; ++i) {
    if (dev_ == ibv_get_device_name(list[i])) ctx = ibv_open_device(list[i]);
  }
  ibv_free_device_list(list);
  ASSERT_NE(ctx, nullptr) << "cannot open " << dev_;
  for (const DeviceInfo& d : *sysfs) {
    if (d.name != dev_) continue;
    for (const PortInfo& p : d.ports) {
      auto verbs = QueryGidTable(ctx, p, d.node_type);
      ASSERT_TRUE(verbs.has_value()) << "ibv_query_gid_table failed";
      EXPECT_EQ(*verbs, p.gids) << "port " << p.port;
      EXPECT_FALSE(p.gids.empty());
    }
  }
  ibv_close_device(ctx);
}

TEST_F(DeviceLabTest, MonitorSeesDevicesAddedAndDeletedWithinOneSecond) {
  if (!InLab() || Env("LAB_VMS") != "1") GTEST_SKIP() << "needs the single-VM lab (veth1)";
  StartMonitor();
  Sh("rdma link add rxe_t1 type rxe netdev veth1");
  EXPECT_TRUE(log_.WaitFor(Kind::kDeviceAdded, "rxe_t1", 0, "", 1s)) << "no device-added event";
  const DeviceInfo* added = monitor_->current()->Find("rxe_t1");
  ASSERT_NE(added, nullptr);
  EXPECT_GT(added->max_qp, 0) << "the monitor did not probe the new device";
  const DeviceInfo* lab = monitor_->current()->Find(dev_);
  ASSERT_NE(lab, nullptr);
  EXPECT_EQ(lab->ports.at(0).active_mtu, 1024);
  // The monitor holds the device open for its async events; rxe cannot
  // disassociate, so `rdma link delete` waits until the monitor closes it.
  auto deleted =
      std::async(std::launch::async, [] { return std::system("rdma link delete rxe_t1"); });
  EXPECT_TRUE(log_.WaitFor(Kind::kDeviceRemoved, "rxe_t1", 0, "", 1s)) << "no device-removed event";
  if (deleted.wait_for(5s) != std::future_status::ready) {
    monitor_->Stop();  // closes the device, so the delete can finish
    FAIL() << "rdma link delete hangs while the monitor runs";
  }
  EXPECT_EQ(deleted.get(), 0);
  EXPECT_EQ(monitor_->current()->Find("rxe_t1"), nullptr);
}

// `rdma link delete` and `add` back to back, faster than the monitor's
// rescan: the device of the same name is a new one and must be listed.
TEST_F(DeviceLabTest, ADeviceDeletedAndAddedAtOnceIsListedAgain) {
  if (!InLab() || Env("LAB_VMS") != "1") GTEST_SKIP() << "needs the single-VM lab (veth1)";
  StartMonitor();
  Sh("rdma link add rxe_t2 type rxe netdev veth1");
  ASSERT_TRUE(log_.WaitFor(Kind::kDeviceAdded, "rxe_t2", 0, "", 1s)) << "no device-added event";
  for (int round = 0; round < 3; ++round) {
    Sh("rdma link delete rxe_t2 && rdma link add rxe_t2 type rxe netdev veth1");
    bool back = false;
    for (int i = 0; i < 30 && !back; ++i) {
      std::this_thread::sleep_for(100ms);
      const DeviceInfo* d = monitor_->current()->Find("rxe_t2");
      back = d != nullptr && d->max_qp > 0;
    }
    EXPECT_TRUE(back) << "round " << round << ": rxe_t2 not listed 3 s after delete and add";
  }
  Sh("rdma link delete rxe_t2");
}

TEST_F(DeviceLabTest, MonitorSeesPortDownAndUpWithinOneSecond) {
  if (!InLab()) GTEST_SKIP() << "changes the lab's links";
  StartMonitor();
  const std::string netdev = Env("LAB_NETDEV");
  Sh("ip link set " + netdev + " down");
  auto down = log_.WaitFor(Kind::kPortStateChanged, dev_, 1, "-> DOWN", 1s);
  Sh("ip link set " + netdev + " up");
  EXPECT_TRUE(down) << "no port-down event";
  EXPECT_TRUE(log_.WaitFor(Kind::kPortStateChanged, dev_, 1, "-> ACTIVE", 1500ms))
      << "no port-active event";
}

TEST_F(DeviceLabTest, MonitorSeesGidsFollowAddresses) {
  if (!InLab()) GTEST_SKIP() << "changes the lab's addresses";
  StartMonitor();
  const std::string netdev = Env("LAB_NETDEV");
  Sh("ip addr add 192.0.2.77/24 dev " + netdev);
  auto added = log_.WaitFor(Kind::kGidAdded, dev_, 1, "192.0.2.77", 1s);
  Sh("ip addr del 192.0.2.77/24 dev " + netdev);
  EXPECT_TRUE(added) << "no GID-added event for 192.0.2.77";
  EXPECT_TRUE(log_.WaitFor(Kind::kGidRemoved, dev_, 1, "192.0.2.77", 1s)) << "no GID-removed event";
}

}  // namespace
}  // namespace rdmad
