// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The host's PCIe topology as rdmad reads it (docs/topology.md): its RDMA
// devices and GPUs, where each sits, and the path between them in NCCL's
// terms. Plain values returned by rdmad::Client::GetTopology.
//
// Thread safety: values.

#ifndef RDMAD_TOPOLOGY_H_
#define RDMAD_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rdmad {

// Where a PCI device sits.
struct TopologyPlace {
  std::string pci_address;             // "0000:3b:00.0"; "" off the PCIe tree
  std::vector<std::string> pcie_path;  // the bridges above it, host bridge first
  int32_t numa_node = -1;              // -1: unknown
  std::string cpus;                    // its local CPUs, "0-15,32-47"
};

struct TopologyNic {
  std::string name;    // "mlx5_0", "rxe0"
  std::string netdev;  // its Ethernet or IPoIB netdev
  TopologyPlace place;
  // The path to each GPU (by index) and each NIC (in HostTopology::nics'
  // order): "X" (itself), "PIX", "PXB", "PHB", "NODE", "SYS".
  std::vector<std::string> to_gpus;
  std::vector<std::string> to_nics;
  bool usable = false;  // rails may use it: the device filter admits it, a port is ACTIVE
  uint32_t plans = 0;   // live rail plans on it, every process's
};

struct TopologyGpu {
  uint32_t index = 0;  // in PCI address order (CUDA_DEVICE_ORDER=PCI_BUS_ID)
  std::string vendor;  // "NVIDIA", "AMD", ...
  std::string model;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  uint32_t class_id = 0;  // PCI class: 0x0302 3D controller, ...
  TopologyPlace place;
};

// Where a process asks rails for (Client::PlanRails).
struct RailRequest {
  std::string gpu;            // "": by cpus; a GPU's index ("3") or PCI address ("0000:11:00.0")
  std::string cpus;           // allowed CPUs ("0-7,16"); "": the calling thread's affinity
  uint32_t rails = 1;         // how many devices, nearest first
  bool explain_only = false;  // make and explain the plan, record nothing
};

struct PlannedRail {
  std::string device;    // "mlx5_0"
  std::string path;      // from what the plan is near: "PIX", ... "SYS" (NODE: local CPUs)
  uint32_t sharing = 0;  // other live plans on the device before this one
  uint32_t port = 1;
  int32_t gid_index = -1;  // the GID the policy prefers on the port; -1: none known
  std::string gid_type;    // "RoCE v2", "IB", ""
  std::string netdev;
};

// The devices a process should use, nearest first, and why.
struct RailPlan {
  std::string near;  // "GPU 0 (0000:11:00.0)", "CPUs 0-7", "any CPU"
  std::vector<PlannedRail> rails;
  std::string reason;
  uint32_t traffic_class = 0;  // qp.traffic_class
};

// A live plan of a process of this host.
struct RailAssignment {
  uint32_t pid = 0;
  uint32_t uid = 0;
  std::string place;  // "gpu 0000:11:00.0", "cpus 0-7"
  RailPlan plan;
};

struct HostTopology {
  std::string source;   // "sysfs" or the XML file read (rails.topology_xml)
  std::string machine;  // the product name, when known
  uint32_t numa_nodes = 0;
  std::vector<TopologyNic> nics;
  std::vector<TopologyGpu> gpus;
  std::string error;                  // why the last read failed ("": it did not)
  std::vector<RailAssignment> plans;  // the live plans of the caller's uid (all: an admin)
};

}  // namespace rdmad

#endif  // RDMAD_TOPOLOGY_H_
