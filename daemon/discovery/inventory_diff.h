// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What changed between two inventory snapshots, as the events rdmad sends
// on WatchEvents: devices added or removed, port state changes, GIDs added
// or removed. The monitor rescans and diffs rather than trusting each
// notification's details, so a lost or coalesced notification costs nothing.
//
// Thread safety: pure function.

#ifndef RDMAD_DAEMON_DISCOVERY_INVENTORY_DIFF_H_
#define RDMAD_DAEMON_DISCOVERY_INVENTORY_DIFF_H_

#include <string>
#include <vector>

#include "daemon/discovery/inventory.h"

namespace rdmad {

struct InventoryChange {
  enum class Kind { kDeviceAdded, kDeviceRemoved, kPortStateChanged, kGidAdded, kGidRemoved };
  Kind kind;
  std::string device;
  int port = 0;         // 0 for device-level changes
  std::string message;  // one line for logs and events
  std::string gid;      // GID changes: the GID as sysfs writes it
};

std::vector<InventoryChange> DiffInventory(const Inventory& before, const Inventory& after);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_DISCOVERY_INVENTORY_DIFF_H_
