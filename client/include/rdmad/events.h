// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The kinds of events rdmad publishes (WatchEvents; rdmactl events). One
// definition: the daemon's event bus and the client library use it.

#ifndef RDMAD_EVENTS_H_
#define RDMAD_EVENTS_H_

#include <string_view>

#include "rdmad/export.h"

namespace rdmad {

enum class EventKind {
  kUnspecified = 0,
  kConfigReloaded = 1,
  kConfigReloadFailed = 2,
  kDaemonStopping = 3,
  kDeviceAdded = 4,
  kDeviceRemoved = 5,
  kPortStateChanged = 6,
  kGidAdded = 7,
  kGidRemoved = 8,
  kRailChanged = 9,  // a channel's rail went out or came back
};
// The last kind: a value past it is none the library knows.
inline constexpr EventKind kLastEventKind = EventKind::kRailChanged;

// "config-reloaded", "device-added", "port-state-changed", ...
RDMAD_EXPORT std::string_view EventKindName(EventKind kind);

}  // namespace rdmad

#endif  // RDMAD_EVENTS_H_
