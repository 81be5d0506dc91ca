// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The host's topology as rails need it: every RDMA device and every GPU-class
// PCI device, each with its place in the PCIe tree (the bridges from its
// host bridge down), its NUMA node and local CPUs; and the path between two
// of them in NCCL's terms (PIX, PXB, PHB, NODE, SYS). hwloc_reader.h fills
// it from hwloc (this host's sysfs, or an XML file lstopo wrote).
//
// Thread safety: values; share snapshots as std::shared_ptr<const Topology>.

#ifndef RDMAD_DAEMON_TOPOLOGY_TOPOLOGY_H_
#define RDMAD_DAEMON_TOPOLOGY_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad {

// How far apart two PCI devices are, nearest first (NCCL's and nvidia-smi
// topo's words and order).
enum class PathType {
  kSelf,  // the same device
  kPix,   // at most one PCIe switch between them
  kPxb,   // several PCIe bridges, not through the host bridge
  kPhb,   // through a PCIe host bridge (the CPU's root complex)
  kNode,  // between host bridges of one NUMA node
  kSys,   // across the interconnect between NUMA nodes (sockets)
};

std::string_view PathTypeName(PathType type);  // "PIX", "SYS", ...

// Where a PCI device sits.
struct PciPlace {
  std::string address;  // "0000:3b:00.0"; "" when unknown (a device off PCI)
  // The bridges above it, from its host bridge down to its parent: the host
  // bridge as "host:0000:[2b-3b]", the others by their PCI address.
  std::vector<std::string> bridges;
  int numa_node = -1;  // -1: unknown, or local to every node
  std::string cpus;    // its local CPUs as a list, "0-15,32-47"; "" unknown
  bool operator==(const PciPlace&) const = default;
};

// The path between two places: kSys when either is unknown.
PathType PathBetween(const PciPlace& a, const PciPlace& b);

struct TopoNic {
  std::string name;    // "mlx5_0", "rxe0"
  std::string netdev;  // its Ethernet netdev, if any ("ens1f0", "eth1")
  PciPlace place;
  bool operator==(const TopoNic&) const = default;
};

struct TopoGpu {
  int index = 0;  // in PCI address order, as CUDA_DEVICE_ORDER=PCI_BUS_ID
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint16_t class_id = 0;  // 0x0302 3D controller, 0x0300 VGA, ...
  std::string vendor;     // VendorName: "NVIDIA", "AMD", "Intel", "0x1234"
  std::string model;      // when the topology names it ("NVIDIA A100-SXM4-80GB")
  PciPlace place;
  bool operator==(const TopoGpu&) const = default;
};

struct Topology {
  std::string source;   // "sysfs" or the XML file read
  std::string machine;  // the machine's product name when known ("NVIDIA DGX A100")
  int numa_nodes = 0;
  std::vector<TopoNic> nics;  // by name
  std::vector<TopoGpu> gpus;  // by index
  // Why the last read failed ("": it did not); the rest is the read before.
  std::string error;
  const TopoNic* FindNic(std::string_view name) const;
  const TopoGpu* FindGpu(std::string_view pci_address) const;
};

// Whether a PCI device of this class and vendor is a GPU (or another
// accelerator placed like one): 3D and display controllers and processing
// accelerators, but not the VGA of a server's BMC (ASPEED, Matrox).
bool IsGpuClass(uint16_t class_id, uint16_t vendor_id);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_TOPOLOGY_TOPOLOGY_H_
