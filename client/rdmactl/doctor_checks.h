// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl doctor's checks (docs/operations.md, "rdmactl doctor"): each
// takes what was found on this host, from the daemon and, given a peer,
// on the path to it, and says ok, warn or fail, what it saw, and for
// anything short of ok the fix in one line. The facts are gathered apart
// (doctor_host.h, commands_doctor.cc) so that every verdict is tested on
// made-up facts here.
//
// Thread safety: pure functions over values.

#ifndef RDMAD_CLIENT_RDMACTL_DOCTOR_CHECKS_H_
#define RDMAD_CLIENT_RDMACTL_DOCTOR_CHECKS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client/rdmactl/json.h"
#include "rdmad/client.h"

namespace rdmactl {

enum class CheckLevel { kOk, kWarn, kFail };

struct CheckResult {
  std::string name;  // "modules", "devices", ... (stable: scripts match on it)
  CheckLevel level = CheckLevel::kOk;
  std::string detail;  // what was seen
  std::string fix;     // one line; "" when ok
};

// What this host says, as the caller sees it.
struct HostFacts {
  // Kernel modules present (loaded or built in): /sys/module/NAME.
  std::map<std::string, bool> modules;
  // The RDMA provider modules the host's NICs call for but lack
  // (mlx5_core without mlx5_ib, ...).
  std::vector<std::string> missing_providers;
  // /dev/infiniband: whether it exists, and each character device with
  // the caller's read-write access ("" when granted, else why not).
  bool dev_dir = false;
  std::map<std::string, std::string> dev_nodes;
  // RLIMIT_MEMLOCK (soft), nullopt when unlimited.
  std::optional<uint64_t> memlock;
  // The local API's socket: whether the caller reached it, and if not why,
  // with its group and whether the caller is in it.
  bool socket_reached = false;
  std::string socket_error;
  std::string socket_path, socket_group;
  bool in_socket_group = false;
  bool socket_hidden = false;  // a directory above it is closed to the caller
  // The config file's modification time (Unix ms; 0 when unreadable).
  int64_t config_mtime_unix_ms = 0;
  // Addresses of each netdev (IPv4 and IPv6, link-local IPv6 left out).
  std::map<std::string, std::vector<std::string>> netdev_addresses;
  // RoCE ECN per netdev where the driver shows it
  // (/sys/class/net/NETDEV/ecn/roce_np/enable/*): any priority enabled.
  std::map<std::string, bool> roce_ecn;
};

// A channel's receive ring and staging chunks at full size, as the library
// sizes them (client/src/rdma/resources.cc) for these QP attributes.
uint64_t PinnedPerChannel(uint32_t send_depth, uint32_t recv_depth, uint32_t slot_size);
// The same for the config's defaults (qp.send_depth 127, qp.recv_depth 31,
// qp.slot_size 4096: docs/configuration.md).
uint64_t DefaultPinnedPerChannel();

// What the daemon says (when reached).
struct DaemonFacts {
  rdmad::DaemonStatus status;
  std::vector<rdmad::Device> devices;
  // A channel's pinned receive ring and staging (from the QP attributes of
  // a planned path, or the defaults).
  uint64_t bytes_per_channel = 0;
};

// What the peer's checks found (doctor PEER).
struct PeerFacts {
  std::string peer;                     // as given
  std::optional<rdmad::PeerInfo> info;  // none: rdmad does not know it
  rdmad::StatusOr<rdmad::Path> path = rdmad::Status::Unavailable("not planned");
  // The test channel to the peer's echo service: how it was set up, and
  // the small RDMA Write (or its TCP stand-in) read back.
  rdmad::Status channel = rdmad::Status::Unavailable("not tried");
  std::string transport, transport_reason;
  rdmad::Status write = rdmad::Status::Unavailable("not tried");
  double write_us = 0;
};

std::vector<CheckResult> CheckHost(const HostFacts& host, const DaemonFacts* daemon,
                                   size_t channels_wanted);
std::vector<CheckResult> CheckPeer(const PeerFacts& peer);

// 0 when every check is ok, 1 with a warning, 2 with a failure.
int DoctorExitCode(const std::vector<CheckResult>& checks);
std::string_view CheckLevelName(CheckLevel level);  // "ok", "warn", "fail"
std::string RenderChecks(const std::vector<CheckResult>& checks);
Json ChecksJson(const std::vector<CheckResult>& checks);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_DOCTOR_CHECKS_H_
