// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The rail plan on the 8-GPU server's topology, for real processes (forked
// children that wait; a plan ends when its process exits).

#include "daemon/topology/rail_plan.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "daemon/topology/hwloc_reader.h"

namespace rdmad {
namespace {

RailRequest Gpu(std::string gpu, int rails = 1) {
  RailRequest r;
  r.gpu = std::move(gpu);
  r.rails = rails;
  return r;
}

RailRequest Cpus(std::string cpus) {
  RailRequest r;
  r.cpus = std::move(cpus);
  return r;
}

RailRequest Rails(int rails) {
  RailRequest r;
  r.rails = rails;
  return r;
}

class RailPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = ReadTopology(
        std::string(RDMAD_SOURCE_DIR) + "/tests/fixtures/topology/gpu8-nic8-2socket.xml", {});
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    topology_ = *t;
    for (const TopoNic& nic : topology_.nics) all_.push_back(nic.name);
  }
  void TearDown() override {
    for (pid_t pid : children_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  // A process that waits until killed.
  pid_t Child() {
    pid_t pid = fork();
    if (pid == 0) {
      pause();
      _exit(0);
    }
    children_.push_back(pid);
    return pid;
  }
  void End(pid_t pid) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    children_.erase(std::find(children_.begin(), children_.end(), pid));
  }
  std::string Device(const RailRequest& request, pid_t pid) {
    auto plan = planner_.Plan(topology_, all_, request, pid);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    return plan.ok() && !plan->rails.empty() ? plan->rails[0].device : "";
  }

  Topology topology_;
  std::vector<std::string> all_;
  RailPlanner planner_;
  std::vector<pid_t> children_;
};

TEST_F(RailPlanTest, AGpusProcessGetsTheNicBehindItsSwitch) {
  auto plan = planner_.Plan(topology_, all_, Gpu("0"), Child());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->rails.size(), 1u);
  EXPECT_EQ(plan->rails[0].device, "mlx5_0");
  EXPECT_EQ(plan->rails[0].path, PathType::kPix);
  EXPECT_EQ(plan->near, "GPU 0 (0000:11:00.0)");
  EXPECT_NE(plan->reason.find("mlx5_0 is PIX"), std::string::npos) << plan->reason;
  for (int g = 1; g < 8; ++g) {
    EXPECT_EQ(Device(Gpu(std::to_string(g)), Child()), "mlx5_" + std::to_string(g));
  }
  // By PCI address, short or long; upper case too.
  EXPECT_EQ(Device(Gpu("0000:D1:00.0"), 0), "mlx5_6");
  EXPECT_EQ(Device(Gpu("91:00.0"), 0), "mlx5_4");
}

TEST_F(RailPlanTest, NearnessComesBeforeBalance) {
  pid_t a = Child(), b = Child();
  EXPECT_EQ(Device(Gpu("0"), a), "mlx5_0");
  EXPECT_EQ(Device(Gpu("0"), b), "mlx5_0") << "a PXB device is not nearer than a shared PIX";
  auto two = planner_.Plan(topology_, all_, Gpu("0", 2), 0);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->rails.size(), 2u);
  EXPECT_EQ(two->rails[1].device, "mlx5_1");
  EXPECT_EQ(two->rails[1].path, PathType::kPxb);
  EXPECT_EQ(two->rails[0].sharing, 2);
}

TEST_F(RailPlanTest, ProcessesEquallyNearAreSpreadHostWide) {
  // Four processes bound to socket 0's CPUs: its four devices, one each.
  std::set<std::string> devices;
  for (int i = 0; i < 4; ++i) devices.insert(Device(Cpus("0-7"), Child()));
  EXPECT_EQ(devices, (std::set<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}));
  // Socket 1's processes get socket 1's devices.
  EXPECT_EQ(Device(Cpus("8-15"), Child()), "mlx5_4");
  // A fifth on socket 0 shares; planning again does not count itself.
  pid_t fifth = Child();
  EXPECT_EQ(Device(Cpus("0-3"), fifth), "mlx5_0");
  EXPECT_EQ(Device(Cpus("0-3"), fifth), "mlx5_0");
  EXPECT_EQ(planner_.Snapshot().load["mlx5_0"], 2);
  EXPECT_EQ(planner_.Snapshot().plans.size(), 6u);
}

TEST_F(RailPlanTest, AProcessThatExitsGivesItsRailBack) {
  pid_t first = Child();
  EXPECT_EQ(Device(Cpus("8-15"), first), "mlx5_4");
  EXPECT_EQ(Device(Cpus("8-15"), Child()), "mlx5_5");
  End(first);
  EXPECT_EQ(Device(Cpus("8-15"), Child()), "mlx5_4") << "its plan ended with it";
  EXPECT_EQ(planner_.Snapshot().plans.size(), 2u);
  EXPECT_EQ(planner_.Snapshot().load.count("mlx5_6"), 0u);
}

TEST_F(RailPlanTest, TheDeviceFilterRules) {
  std::vector<std::string> usable = {"mlx5_1", "mlx5_5"};
  auto plan = planner_.Plan(topology_, usable, Gpu("0"), 0);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->rails[0].device, "mlx5_1");
  plan = planner_.Plan(topology_, usable, Gpu("0", 8), 0);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->rails.size(), 2u) << "never more rails than usable devices";
  auto none = planner_.Plan(topology_, {}, Gpu("0"), 0);
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(RailPlanTest, BadRequestsAreRefusedSayingWhy) {
  auto missing = planner_.Plan(topology_, all_, Gpu("9"), 0);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("8 GPUs"), std::string::npos);
  EXPECT_EQ(planner_.Plan(topology_, all_, Gpu("0000:98:00.0"), 0).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(planner_.Plan(topology_, all_, Cpus("seven"), 0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(planner_.Plan(topology_, all_, Cpus("7-3"), 0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(planner_.Plan(topology_, all_, Rails(0), 0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(planner_.Plan(topology_, all_, Gpu(std::string(1000, '1')), 0).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(RailPlanTest, AProcessHasABoundedNumberOfPlans) {
  pid_t pid = Child();
  for (size_t i = 0; i < kMaxPlacesPerProcess; ++i) {
    ASSERT_TRUE(planner_
                    .Plan(topology_, all_,
                          Cpus(std::to_string(i % 16) + "," + std::to_string(100 + i)), pid)
                    .ok());
  }
  auto more = planner_.Plan(topology_, all_, Cpus("0,999"), pid);
  EXPECT_EQ(more.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(planner_.Plan(topology_, all_, Cpus("0,100"), pid).ok())
      << "planning again is no more";
  EXPECT_TRUE(planner_.Plan(topology_, all_, Cpus("0,999"), 0).ok()) << "explaining costs nothing";
  EXPECT_EQ(planner_.Snapshot().plans.size(), kMaxPlacesPerProcess);
}

TEST(CpuListTest, ParsesWhatTheKernelWrites) {
  std::vector<int> cpus;
  ASSERT_TRUE(ParseCpuList("0-2,8,10-11", &cpus));
  EXPECT_EQ(cpus, (std::vector<int>{0, 1, 2, 8, 10, 11}));
  EXPECT_TRUE(ParseCpuList("", &cpus));
  EXPECT_TRUE(cpus.empty());
  EXPECT_FALSE(ParseCpuList("1,,2", &cpus));
  EXPECT_FALSE(ParseCpuList("a-b", &cpus));
  EXPECT_FALSE(ParseCpuList("0-99999999", &cpus));
}

}  // namespace
}  // namespace rdmad
