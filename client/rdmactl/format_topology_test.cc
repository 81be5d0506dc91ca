// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/format_topology.h"

#include "gtest/gtest.h"

namespace rdmactl {
namespace {

rdmad::PlannedRail Rail(std::string device, int gid, std::string netdev) {
  rdmad::PlannedRail rail;
  rail.device = std::move(device);
  rail.path = "PIX";
  rail.port = 1;
  rail.gid_index = gid;
  rail.gid_type = gid < 0 ? "" : "RoCE v2";
  rail.netdev = std::move(netdev);
  return rail;
}

rdmad::RailPlan Plan(std::vector<rdmad::PlannedRail> rails, uint32_t tc = 0) {
  rdmad::RailPlan plan;
  plan.near = "GPU 0 (0000:11:00.0)";
  plan.reason = "GPU 0 (0000:11:00.0): mlx5_0 is PIX";
  plan.rails = std::move(rails);
  plan.traffic_class = tc;
  return plan;
}

using Vars = std::vector<std::pair<std::string, std::string>>;

TEST(EnvForTest, EachToolGetsTheDevicesTheGidAndTheNetdevInItsOwnWords) {
  rdmad::RailPlan plan =
      Plan({Rail("mlx5_0", 3, "ens1f0np0"), Rail("mlx5_1", 3, "ens2f0np0")}, 106);
  EXPECT_EQ(EnvFor("nccl", plan).vars, (Vars{{"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"},
                                             {"NCCL_IB_GID_INDEX", "3"},
                                             {"NCCL_SOCKET_IFNAME", "=ens1f0np0"},
                                             {"NCCL_IB_TC", "106"}}));
  EXPECT_EQ(EnvFor("ucx", plan).vars, (Vars{{"UCX_NET_DEVICES", "mlx5_0:1,mlx5_1:1"},
                                            {"UCX_IB_GID_INDEX", "3"},
                                            {"UCX_IB_TRAFFIC_CLASS", "106"}}));
  EXPECT_EQ(EnvFor("nvshmem", plan).vars, (Vars{{"NVSHMEM_HCA_LIST", "mlx5_0:1,mlx5_1:1"},
                                                {"NVSHMEM_IB_GID_INDEX", "3"},
                                                {"NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "ens1f0np0"},
                                                {"NVSHMEM_IB_TRAFFIC_CLASS", "106"}}));
  EXPECT_TRUE(EnvFor("nccl", plan).notes.empty());
}

TEST(EnvForTest, WhatCannotBeSaidIsANote) {
  ToolEnv differing = EnvFor("nccl", Plan({Rail("mlx5_0", 3, "a"), Rail("mlx5_1", 5, "b")}));
  EXPECT_EQ(differing.vars[1], (std::pair<std::string, std::string>{"NCCL_IB_GID_INDEX", "3"}));
  ASSERT_EQ(differing.notes.size(), 1u);
  EXPECT_NE(differing.notes[0].find("mlx5_1 prefers GID 5"), std::string::npos);
  ToolEnv unknown = EnvFor("ucx", Plan({Rail("mlx5_0", -1, "")}));
  EXPECT_EQ(unknown.vars, (Vars{{"UCX_NET_DEVICES", "mlx5_0:1"}}));
  ASSERT_EQ(unknown.notes.size(), 1u);
  std::string text = FormatEnv("ucx", Plan({Rail("mlx5_0", -1, "")}), unknown);
  EXPECT_EQ(text,
            "# ucx on rdmad's rails for GPU 0 (0000:11:00.0): GPU 0 (0000:11:00.0): mlx5_0 is PIX\n"
            "# note: no RoCE GID known for these devices: the tool chooses its own\n"
            "export UCX_NET_DEVICES='mlx5_0:1'\n");
}

TEST(FormatTopologyTest, TheMatrixAndAPlan) {
  rdmad::HostTopology t;
  t.source = "sysfs";
  t.numa_nodes = 1;
  rdmad::TopologyNic nic;
  nic.name = "rxe0";
  nic.netdev = "eth1";
  nic.place.pci_address = "0000:00:04.0";
  nic.place.numa_node = 0;
  nic.place.cpus = "0";
  nic.to_nics = {"X"};
  nic.usable = true;
  nic.plans = 1;
  t.nics.push_back(nic);
  std::string text = FormatTopology(t);
  EXPECT_NE(text.find("topology from sysfs: 1 RDMA device(s), 0 GPU(s), 1 NUMA node(s)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("yes, 1 plan"), std::string::npos) << text;
  EXPECT_NE(text.find("0000:00:04.0"), std::string::npos) << text;
  EXPECT_EQ(FormatRailPlan(Plan({Rail("mlx5_0", 3, "a")})),
            "GPU 0 (0000:11:00.0): mlx5_0 (PIX)\nGPU 0 (0000:11:00.0): mlx5_0 is PIX\n");
}

}  // namespace
}  // namespace rdmactl
