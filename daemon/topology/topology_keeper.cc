// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/topology/topology_keeper.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "daemon/topology/hwloc_reader.h"

namespace rdmad {

TopologyKeeper::TopologyKeeper() : current_(std::make_shared<const Topology>()) {}

Status TopologyKeeper::Update(const std::string& xml_path, const Inventory& inventory, bool force) {
  std::set<std::string> devices;
  for (const DeviceInfo& d : inventory.devices) devices.insert(d.name);
  {
    std::lock_guard lock(mu_);
    if (!force && read_ && xml_path == xml_path_ && devices == devices_) return Status::Ok();
  }
  StatusOr<Topology> read = ReadTopology(xml_path, inventory);
  std::lock_guard lock(mu_);
  read_ = true;
  xml_path_ = xml_path;
  devices_ = std::move(devices);
  if (!read.ok()) {
    auto kept = std::make_shared<Topology>(*current_);
    kept->error = read.status().message();
    spdlog::warn("topology: {}; rails keep the last topology read ({} RDMA devices, {} GPUs)",
                 kept->error, kept->nics.size(), kept->gpus.size());
    current_ = std::move(kept);
    return read.status();
  }
  current_ = std::make_shared<const Topology>(std::move(read).value());
  spdlog::info("topology ({}): {} RDMA device(s), {} GPU(s), {} NUMA node(s)", current_->source,
               current_->nics.size(), current_->gpus.size(), current_->numa_nodes);
  for (const std::string& line : DescribeTopology(*current_)) spdlog::info("topology: {}", line);
  return Status::Ok();
}

std::shared_ptr<const Topology> TopologyKeeper::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

std::vector<std::string> DescribeTopology(const Topology& topology) {
  std::vector<std::string> lines;
  for (const TopoNic& nic : topology.nics) {
    std::string out = nic.name + ": ";
    if (nic.place.address.empty()) {
      lines.push_back(out + "not on the PCIe tree hwloc sees");
      continue;
    }
    out += "PCI " + nic.place.address + ", NUMA node " +
           (nic.place.numa_node < 0 ? std::string("unknown") : std::to_string(nic.place.numa_node));
    PathType best = PathType::kSys;
    for (const TopoGpu& gpu : topology.gpus)
      best = std::min(best, PathBetween(nic.place, gpu.place));
    std::string nearest;
    for (const TopoGpu& gpu : topology.gpus) {
      if (PathBetween(nic.place, gpu.place) != best) continue;
      nearest += (nearest.empty() ? "" : ", ") + std::to_string(gpu.index);
    }
    if (!nearest.empty()) {
      out += ", nearest GPU(s) " + nearest + " (" + std::string(PathTypeName(best)) + ")";
    }
    lines.push_back(std::move(out));
  }
  return lines;
}

}  // namespace rdmad
