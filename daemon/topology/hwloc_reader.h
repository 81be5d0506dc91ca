// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Reads the topology (topology.h) with hwloc: this host's, from sysfs, or
// one an XML file holds (`lstopo --of xml`: another machine's, for tests and
// for hosts whose sysfs hides the PCIe tree). RDMA devices are hwloc's
// OpenFabrics devices, and the inventory's devices are placed too: a
// software device (rxe, siw) by its netdev's PCI device.
//
// Thread safety: a function; hwloc's topology is private to each call.

#ifndef RDMAD_DAEMON_TOPOLOGY_HWLOC_READER_H_
#define RDMAD_DAEMON_TOPOLOGY_HWLOC_READER_H_

#include <string>

#include "daemon/discovery/inventory.h"
#include "daemon/topology/topology.h"
#include "rdmad/status.h"

namespace rdmad {

// xml_path "": this host. Errors name the file and what hwloc said.
StatusOr<Topology> ReadTopology(const std::string& xml_path, const Inventory& inventory);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_TOPOLOGY_HWLOC_READER_H_
