// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// InstanceRegistry: which node each peer daemon instance belongs to, as
// this daemon learnt it. An instance id (random, new at every start of a
// daemon) belongs to the node that first claimed it in a Hello or Session
// that passed authentication; another node claiming it later is refused,
// so that no peer can speak (close channels, end a session, take channels
// back) for another's instance. A node keeps its kPerNode most recent
// instances (older ones are of daemons long restarted); at most kMaxNodes
// nodes are known at once, and a further node is refused rather than
// pushing the known ones out.
//
// Thread safety: every method may be called from any thread.

#ifndef RDMAD_DAEMON_PEERS_INSTANCE_REGISTRY_H_
#define RDMAD_DAEMON_PEERS_INSTANCE_REGISTRY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "rdmad/status.h"

namespace rdmad {

class InstanceRegistry {
 public:
  static constexpr size_t kPerNode = 8;
  static constexpr size_t kMaxNodes = 4096;

  // OK when instance_id is node's (already, or from now on);
  // PERMISSION_DENIED naming both nodes when it is another's;
  // RESOURCE_EXHAUSTED when node is new and kMaxNodes are known.
  // Node names compare without case.
  Status Claim(const std::string& instance_id, const std::string& node);

  // The node instance_id belongs to, if known.
  std::optional<std::string> NodeOf(const std::string& instance_id) const;

  size_t node_count() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> node_of_;              // instance -> node as first claimed
  std::map<std::string, std::deque<std::string>> by_node_;  // lower-case node -> its instances
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_INSTANCE_REGISTRY_H_
