// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/policy/device_filter.h"

#include <vector>

namespace rdmad {
namespace {

// `"=mlx5_0:1"`: the entry as the user wrote it, quoted.
std::string Quoted(const DeviceSpec& spec) { return "\"" + FormatDeviceSpec(spec) + "\""; }

// The first entry of specs matching device/port, or nullptr.
const DeviceSpec* FirstMatch(const std::vector<DeviceSpec>& specs, std::string_view device,
                             int port) {
  for (const DeviceSpec& spec : specs) {
    if (DeviceSpecMatches(spec, device, port)) return &spec;
  }
  return nullptr;
}

// `["mlx5_0:1", "=bnxt_re0"]`.
std::string QuotedList(const std::vector<DeviceSpec>& specs) {
  std::string text = "[";
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i > 0) text += ", ";
    text += Quoted(specs[i]);
  }
  return text + "]";
}

}  // namespace

bool DeviceSpecMatches(const DeviceSpec& spec, std::string_view device, int port) {
  bool name_matches = spec.exact
                          ? device == spec.name
                          : device.substr(0, spec.name.size()) == std::string_view(spec.name);
  if (!name_matches) return false;
  return spec.port == 0 || port == 0 || spec.port == port;
}

FilterDecision DecideDevice(const Config::Devices& filter, std::string_view device, int port) {
  for (const DeviceSpec& spec : filter.exclude) {
    // A port-restricted exclude entry does not exclude the whole device.
    if (port == 0 && spec.port != 0) continue;
    if (DeviceSpecMatches(spec, device, port)) {
      return {false, "excluded by devices.exclude " + Quoted(spec)};
    }
  }
  if (filter.include.empty()) {
    return {true, "selected: devices.include is empty (every device)"};
  }
  if (const DeviceSpec* spec = FirstMatch(filter.include, device, port)) {
    return {true, "selected by devices.include " + Quoted(*spec)};
  }
  return {false, "not matched by devices.include " + QuotedList(filter.include)};
}

bool DeviceSelected(const Config::Devices& filter, std::string_view device, int port) {
  return DecideDevice(filter, device, port).selected;
}

std::string DescribeFilterDecision(const Config::Devices& filter, std::string_view device,
                                   int port) {
  return DecideDevice(filter, device, port).reason;
}

}  // namespace rdmad
