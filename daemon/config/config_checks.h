// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Value accessors and the per-setting checks the settings table refers to.
// Each check returns "" when the value is acceptable, else a reason that
// reads after "is": "invalid: the port must be 1..255".
//
// Thread safety: stateless functions, safe from any thread.

#ifndef RDMAD_DAEMON_CONFIG_CONFIG_CHECKS_H_
#define RDMAD_DAEMON_CONFIG_CONFIG_CHECKS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/config/settings.h"

namespace rdmad {

// Accessors that never throw: a value of another alternative reads as
// false / 0 / empty (the table's kinds guarantee the right alternative).
bool AsBool(const SettingValue& value);
int64_t AsInt(const SettingValue& value);
std::string AsString(const SettingValue& value);
std::vector<std::string> AsStringList(const SettingValue& value);
std::vector<int64_t> AsIntList(const SettingValue& value);

// Parses device specs that already passed CheckDeviceSpec.
std::vector<DeviceSpec> AsDeviceSpecs(const SettingValue& value);

// Parses "mlx5", "=mlx5_0", "mlx5_0:1" into out. Returns "" or a reason
// such as "invalid: the port must be 1..255".
std::string ParseDeviceSpecText(std::string_view text, DeviceSpec* out);

// Checks used by the settings table.
std::string CheckSocketPath(const SettingValue& value);
std::string CheckAbsolutePathOrEmpty(const SettingValue& value);
std::string CheckGroupName(const SettingValue& value);
std::string CheckSocketMode(const SettingValue& value);
std::string CheckListenHost(const SettingValue& value);
// A node name: "" or a host name.
std::string CheckNodeName(const SettingValue& value);
std::string CheckFilePath(const SettingValue& value);
std::string CheckKeyPrefix(const SettingValue& value);
std::string CheckDeviceSpec(const SettingValue& value);
std::string CheckCidr(const SettingValue& value);
std::string CheckNetdevGlob(const SettingValue& value);
std::string CheckPeerName(const SettingValue& value);
std::string CheckPeerAddress(const SettingValue& value);
std::string CheckServiceName(const SettingValue& value);

// True for "localhost" and literal loopback addresses (127.0.0.0/8, ::1).
bool IsLoopbackHost(std::string_view host);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CONFIG_CONFIG_CHECKS_H_
