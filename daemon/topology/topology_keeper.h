// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The daemon's current topology: read at start and again when the set of
// RDMA devices or the configured XML file (rails.topology_xml) changes;
// each read is logged with what it found. A read that fails keeps the last
// good topology with its error set; before any, current() is empty.
//
// Thread safety: every method may be called from any thread; current()
// hands out immutable snapshots.

#ifndef RDMAD_DAEMON_TOPOLOGY_TOPOLOGY_KEEPER_H_
#define RDMAD_DAEMON_TOPOLOGY_TOPOLOGY_KEEPER_H_

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "daemon/discovery/inventory.h"
#include "daemon/topology/topology.h"
#include "rdmad/status.h"

namespace rdmad {

class TopologyKeeper {
 public:
  TopologyKeeper();

  // Reads the topology when xml_path or the inventory's device names differ
  // from the last read (or force). The read's error, if any.
  Status Update(const std::string& xml_path, const Inventory& inventory, bool force = false);

  std::shared_ptr<const Topology> current() const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Topology> current_;
  bool read_ = false;
  std::string xml_path_;
  std::set<std::string> devices_;
};

// One line per NIC for the log: its place and its nearest GPUs.
std::vector<std::string> DescribeTopology(const Topology& topology);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_TOPOLOGY_TOPOLOGY_KEEPER_H_
