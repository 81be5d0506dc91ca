// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// DeviceMonitor keeps the inventory current. It listens, on one thread, to
// kernel uevents (RDMA devices appearing and going: `rdma link add/delete`,
// driver load), rtnetlink (links up/down, addresses added/removed, which
// move GIDs) and each open device's async events (PORT_ACTIVE, PORT_ERR,
// GID_CHANGE, DEVICE_FATAL; every one acknowledged). Any of them schedules a
// rescan; the rescan's result is diffed against the previous snapshot and
// handed to the listener with the changes. The sockets are opened before the
// first scan, so nothing is lost between the two. A device whose uverbs
// node goes (the first step of `rdma link delete`) or that reports
// DEVICE_FATAL counts as removed from then on, although sysfs still lists it
// until every user has closed it. It works without udevd
// (kernel uevents, not udev's), which matters in minimal VMs and containers.
//
// Thread safety: Start/Stop from one thread; the listener runs on the
// monitor thread; current() from any thread.

#ifndef RDMAD_DAEMON_DISCOVERY_DEVICE_MONITOR_H_
#define RDMAD_DAEMON_DISCOVERY_DEVICE_MONITOR_H_

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon/discovery/inventory.h"
#include "daemon/discovery/inventory_diff.h"
#include "daemon/discovery/probe_wait.h"
#include "daemon/discovery/sysfs_reader.h"
#include "rdmad/status.h"

struct ibv_context;

namespace rdmad {

// Hears each new inventory that differs from the one before, with the
// changes; on the monitor's thread.
class InventoryListener {
 public:
  virtual ~InventoryListener() = default;
  virtual void OnInventory(std::shared_ptr<const Inventory> inventory,
                           const std::vector<InventoryChange>& changes) = 0;
};

class DeviceMonitor : private GidTableSource {
 public:
  // Each rescan reads the devices under sysfs_root (ReadSysfsInventory).
  // With use_verbs, it takes GID tables from ibv_query_gid_table and
  // completes the devices with verbs facts (ProbeVerbsWith), through the
  // contexts the monitor holds open for async events: a rescan opens
  // nothing it already has and reads no GID files (rxe has 1024 per port).
  // listener: not owned; outlives the monitor.
  DeviceMonitor(std::string sysfs_root, InventoryListener* listener, bool use_verbs = false);
  ~DeviceMonitor();

  // Opens the notification sockets, scans once (synchronously, so the
  // daemon starts with a full inventory) and starts the thread.
  Status Start();
  void Stop();

  std::shared_ptr<const Inventory> current() const;

 private:
  void Loop(bool rescan_soon);
  // Returns whether a device waits for verbs to probe it (ProbeWait; held
  // back after the first scan); the loop then rescans again soon.
  bool Rescan();
  // GidTableSource: from the device's open context, if any.
  std::optional<std::vector<GidEntry>> GidTable(const std::string& device, const PortInfo& port,
                                                NodeType node_type) const override;
  // Opens a context (for async events, GID tables and probes) on every
  // device verbs lists that has none yet.
  void OpenListedContexts();
  // Closes the contexts of devices no longer in inventory.
  void CloseGoneContexts(const Inventory& inventory);
  // Completes the devices with verbs facts; leaves out the ones ProbeWait
  // holds back.
  void Probe(Inventory* inventory);
  // Waits up to timeout; returns whether something calls for a rescan.
  bool PollOnce(std::chrono::milliseconds timeout, bool* stop);
  bool DrainUevents();
  // Closes our context on the device whose uverbs node (uverbsN) went away.
  void CloseVerbsDevice(const std::string& uverbs_name);
  bool DrainRtnetlink();
  // Acks every queued event; false after DEVICE_FATAL.
  bool DrainAsyncEvents(const std::string& device, ibv_context* ctx);

  const std::string sysfs_root_;
  InventoryListener* const listener_;
  bool use_verbs_;
  int uevent_fd_ = -1;
  int rtnl_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::map<std::string, ibv_context*> contexts_;  // monitor thread only
  // Devices being unregistered (their uverbs node went, or DEVICE_FATAL):
  // left out of the inventory while sysfs still lists them, so that their
  // channels fail and their users let go (rxe and siw wait for every user
  // before `rdma link delete` finishes). Monitor thread only.
  std::set<std::string> unregistering_;
  ProbeWait probe_wait_;  // monitor thread only
  bool started_ = false;  // after the first scan; set before the thread starts
  mutable std::mutex mu_;
  std::shared_ptr<const Inventory> inventory_;  // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_DISCOVERY_DEVICE_MONITOR_H_
