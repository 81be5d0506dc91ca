// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The device filter (config devices.include / devices.exclude) with
// NCCL_IB_HCA semantics: an empty include list selects every device; an entry
// "mlx5" matches every device whose name starts with "mlx5", "=mlx5_0" only
// that device, and ":N" restricts the entry to port N. Exclude entries match
// the same way and always win over include.
//
// Thread safety: pure functions, safe from any thread.

#ifndef RDMAD_DAEMON_POLICY_DEVICE_FILTER_H_
#define RDMAD_DAEMON_POLICY_DEVICE_FILTER_H_

#include <string>
#include <string_view>

#include "daemon/config/config.h"

namespace rdmad {

// Whether one filter entry matches device/port. port 0 asks about the device
// as a whole: an entry restricted to a port then still matches (the device
// has a matching port).
bool DeviceSpecMatches(const DeviceSpec& spec, std::string_view device, int port);

// The filter's verdict on one device port, with a one-line reason such as
// `excluded by devices.exclude "mlx5_1"` or
// `selected by devices.include "=mlx5_0:1"`.
struct FilterDecision {
  bool selected = false;
  std::string reason;
};

// Decides device/port. port 0 asks about the device as a whole: an exclude
// entry restricted to one port does not exclude the whole device.
FilterDecision DecideDevice(const Config::Devices& filter, std::string_view device, int port);

// DecideDevice(...).selected.
bool DeviceSelected(const Config::Devices& filter, std::string_view device, int port);

// DecideDevice(...).reason.
std::string DescribeFilterDecision(const Config::Devices& filter, std::string_view device,
                                   int port);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_POLICY_DEVICE_FILTER_H_
