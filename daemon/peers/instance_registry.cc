// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/instance_registry.h"

#include <strings.h>

#include <algorithm>
#include <cctype>

namespace rdmad {
namespace {

std::string Lower(const std::string& s) {
  std::string out = s;
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

Status InstanceRegistry::Claim(const std::string& instance_id, const std::string& node) {
  std::lock_guard lock(mu_);
  auto it = node_of_.find(instance_id);
  if (it != node_of_.end()) {
    if (strcasecmp(it->second.c_str(), node.c_str()) == 0) return Status::Ok();
    return Status::PermissionDenied("rdmad instance " + instance_id.substr(0, 32) +
                                    " belongs to node " + it->second + ", not " +
                                    node.substr(0, 255));
  }
  std::string key = Lower(node);
  auto mine = by_node_.find(key);
  if (mine == by_node_.end()) {
    if (by_node_.size() >= kMaxNodes) {
      return Status::ResourceExhausted("this daemon knows " + std::to_string(kMaxNodes) +
                                       " peer nodes already; refusing node " + node.substr(0, 255));
    }
    mine = by_node_.emplace(key, std::deque<std::string>{}).first;
  }
  mine->second.push_back(instance_id);
  if (mine->second.size() > kPerNode) {
    node_of_.erase(mine->second.front());
    mine->second.pop_front();
  }
  node_of_.emplace(instance_id, node);
  return Status::Ok();
}

std::optional<std::string> InstanceRegistry::NodeOf(const std::string& instance_id) const {
  std::lock_guard lock(mu_);
  auto it = node_of_.find(instance_id);
  if (it == node_of_.end()) return std::nullopt;
  return it->second;
}

size_t InstanceRegistry::node_count() const {
  std::lock_guard lock(mu_);
  return by_node_.size();
}

}  // namespace rdmad
