// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The cluster's members as the local rdmad sees them in etcd
// (Client::ListMembers, `rdmactl cluster`, `rdmactl services`).

#ifndef RDMAD_CLUSTER_H_
#define RDMAD_CLUSTER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rdmad {

struct ClusterMemberPort {
  std::string device;
  uint32_t port = 0;
  std::string transport;  // "RoCE v2", "InfiniBand", ...
  std::string state;      // "ACTIVE", "DOWN", ...
  uint32_t active_mtu = 0;
};

struct ClusterMember {
  std::string name;
  std::string peer_address;  // HOST:PORT of its peer listener
  std::string version;
  uint32_t protocol = 0;
  std::vector<ClusterMemberPort> ports;
  std::vector<std::string> services;  // its applications listen on these
  bool self = false;                  // the local rdmad
};

struct ClusterView {
  std::vector<ClusterMember> members;  // the local rdmad first
  std::string endpoints;               // etcd, as configured
  bool reachable = false;              // etcd answered last time
  std::string last_error;              // why it was last unreachable
  double unreachable_seconds = 0;      // for how long (0 while reachable)
  int64_t revision = 0;                // etcd's revision of this view
  bool registered = false;             // the local rdmad's record is in etcd
};

}  // namespace rdmad

#endif  // RDMAD_CLUSTER_H_
