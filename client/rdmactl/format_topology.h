// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// `rdmactl topo`: the host's topology as nvidia-smi topo -m shows it (a row
// per RDMA device, a column per GPU and per device, NCCL's words), then
// the GPUs; and the --json form (rdmad::HostTopology's field list).
//
// Thread safety: pure functions over values.

#ifndef RDMAD_CLIENT_RDMACTL_FORMAT_TOPOLOGY_H_
#define RDMAD_CLIENT_RDMACTL_FORMAT_TOPOLOGY_H_

#include <string>
#include <utility>
#include <vector>

#include "client/rdmactl/json.h"
#include "rdmad/client.h"
#include "rdmad/topology.h"

namespace rdmactl {

// What the words in the matrix mean, printed under it.
inline constexpr char kTopologyLegend[] =
    "  X    = itself\n"
    "  PIX  = at most one PCIe switch between them\n"
    "  PXB  = several PCIe bridges, not through the host bridge\n"
    "  PHB  = through a PCIe host bridge (the CPU)\n"
    "  NODE = between PCIe host bridges of one NUMA node\n"
    "  SYS  = across the interconnect between NUMA nodes (sockets)\n";

std::string FormatTopology(const rdmad::HostTopology& topology);

// "GPU 0 (0000:11:00.0): mlx5_0 (PIX)" and the plan's reason.
std::string FormatRailPlan(const rdmad::RailPlan& plan);

// The tools `rdmactl env` knows.
inline constexpr const char* kEnvTools[] = {"nccl", "ucx", "nvshmem"};

// The environment tool (nccl, ucx, nvshmem) needs to use plan's rails with
// rdmad's GID choice: NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_SOCKET_IFNAME,
// UCX_NET_DEVICES, NVSHMEM_HCA_LIST, ... in a stable order; notes (one line
// each) say what could not be expressed.
struct ToolEnv {
  std::vector<std::pair<std::string, std::string>> vars;
  std::vector<std::string> notes;
};
ToolEnv EnvFor(const std::string& tool, const rdmad::RailPlan& plan);

// `export NAME='value'` lines under a comment with the plan's reason.
std::string FormatEnv(const std::string& tool, const rdmad::RailPlan& plan, const ToolEnv& env);

// RecordJson(topology): {"source", "machine", "numa_nodes", "nics": [{"name",
// "netdev", "place": {...}, "to_gpus", "to_nics"}...], "gpus": [...], "error"}.
Json TopologyJson(const rdmad::HostTopology& topology);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_FORMAT_TOPOLOGY_H_
