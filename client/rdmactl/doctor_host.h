// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What rdmactl doctor reads from this host for its checks
// (doctor_checks.h): kernel modules and the NICs' RDMA providers
// (/sys/module, /sys/class/net/*/device/driver), /dev/infiniband as the
// caller may open it, the locked-memory limit, the socket's group and the
// caller's groups, the config file's age, each netdev's addresses
// (getifaddrs) and RoCE ECN where the driver shows it.
//
// Thread safety: reads the host; call from one thread.

#ifndef RDMAD_CLIENT_RDMACTL_DOCTOR_HOST_H_
#define RDMAD_CLIENT_RDMACTL_DOCTOR_HOST_H_

#include <string>

#include "client/rdmactl/doctor_checks.h"

namespace rdmactl {

// Everything but socket_reached and socket_error, which the caller knows
// from its connection; config_file: the daemon's ("" when unknown).
HostFacts ReadHostFacts(const std::string& socket_path, const std::string& config_file);

// The NIC driver's RDMA provider module (mlx5_core: mlx5_ib); "" when the
// driver has none known, or is the provider itself.
std::string RdmaProviderOf(const std::string& nic_driver);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_DOCTOR_HOST_H_
