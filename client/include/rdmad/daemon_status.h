// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What rdmad says of itself (GetStatus; rdmactl status). One definition:
// the daemon fills it, the client library hands it to applications.

#ifndef RDMAD_DAEMON_STATUS_H_
#define RDMAD_DAEMON_STATUS_H_

#include <cstdint>
#include <string>

namespace rdmad {

struct DaemonStatus {
  std::string version;
  int pid = 0;
  double uptime_seconds = 0;
  std::string config_file;
  uint64_t config_generation = 0;
  std::string socket_path;
  uint32_t device_count = 0;
  uint32_t port_count = 0;
  uint32_t active_port_count = 0;
  uint32_t peer_count = 0;
  uint32_t service_count = 0;
  uint32_t channel_count = 0;
  uint64_t connections_accepted = 0;
  uint32_t event_subscribers = 0;
  // Cluster membership: "" when off, else "reachable" or "unreachable"
  // (etcd), why it was last unreachable, and the other members seen.
  std::string cluster;
  std::string cluster_error;
  uint32_t cluster_members = 0;
  // When the running config was read (Unix ms), and why the last reload
  // was refused ("" when the last one took, or there was none).
  int64_t config_loaded_unix_ms = 0;
  std::string config_reload_error;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_STATUS_H_
