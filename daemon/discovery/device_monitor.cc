// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/discovery/device_monitor.h"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "daemon/discovery/verbs_probe.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Address and link changes reach the GID table a little later (ib_core
// updates it from a workqueue), so a change is rescanned twice.
constexpr milliseconds kFirstRescan{100};
constexpr milliseconds kSecondRescan{600};
constexpr milliseconds kSafetyRescan{10000};
// A device sysfs lists but verbs cannot probe yet is held back this long,
// rescanned every kProbeRetry (see ProbeWait).
constexpr milliseconds kProbeGrace{2000};
constexpr milliseconds kProbeRetry{50};

int OpenNetlink(int protocol, uint32_t groups) {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, protocol);
  if (fd < 0) return -1;
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = groups;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  int size = 1 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  return fd;
}

bool SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// Reads everything queued on a non-blocking socket; returns the messages.
std::vector<std::string> DrainSocket(int fd) {
  std::vector<std::string> out;
  char buf[16384];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      out.emplace_back(buf, size_t(n));
    } else if (n < 0 && errno == ENOBUFS) {
      out.emplace_back("overrun");  // lost messages: a rescan covers them
    } else {
      return out;
    }
  }
}

// A kernel uevent: "ACTION@DEVPATH\0KEY=VALUE\0...".
struct Uevent {
  std::string action;
  std::string devpath;
  std::map<std::string, std::string> vars;
};

Uevent ParseUevent(const std::string& msg) {
  Uevent event;
  size_t end = msg.find('\0');
  std::string head = msg.substr(0, end);
  size_t at = head.find('@');
  if (at != std::string::npos) {
    event.action = head.substr(0, at);
    event.devpath = head.substr(at + 1);
  }
  while (end != std::string::npos && end + 1 < msg.size()) {
    size_t start = end + 1;
    end = msg.find('\0', start);
    std::string kv = msg.substr(start, end == std::string::npos ? end : end - start);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) event.vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return event;
}

}  // namespace

DeviceMonitor::DeviceMonitor(std::string sysfs_root, InventoryListener* listener, bool use_verbs)
    : sysfs_root_(std::move(sysfs_root)),
      listener_(listener),
      use_verbs_(use_verbs),
      probe_wait_(kProbeGrace),
      inventory_(std::make_shared<const Inventory>()) {}

DeviceMonitor::~DeviceMonitor() {
  Stop();
  for (int fd : {uevent_fd_, rtnl_fd_, wake_fd_}) {
    if (fd >= 0) close(fd);
  }
}

Status DeviceMonitor::Start() {
  uevent_fd_ = OpenNetlink(NETLINK_KOBJECT_UEVENT, 1 /* kernel uevents */);
  if (uevent_fd_ < 0) spdlog::warn("device monitor: no uevent socket ({})", std::strerror(errno));
  rtnl_fd_ = OpenNetlink(NETLINK_ROUTE, RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR);
  if (rtnl_fd_ < 0) spdlog::warn("device monitor: no rtnetlink socket ({})", std::strerror(errno));
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return Status::FromErrno(errno, "eventfd");
  bool waiting = Rescan();  // subscribed first, then enumerated
  started_ = true;
  thread_ = std::thread([this, waiting] { Loop(waiting); });
  return Status::Ok();
}

void DeviceMonitor::Stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof(one)) < 0) spdlog::error("device monitor: wake failed");
  thread_.join();
  for (auto& [name, ctx] : contexts_) ibv_close_device(ctx);
  contexts_.clear();
}

std::shared_ptr<const Inventory> DeviceMonitor::current() const {
  std::lock_guard lock(mu_);
  return inventory_;
}

std::optional<std::vector<GidEntry>> DeviceMonitor::GidTable(const std::string& device,
                                                             const PortInfo& port,
                                                             NodeType node_type) const {
  auto it = contexts_.find(device);
  if (it == contexts_.end()) return std::nullopt;
  return QueryGidTable(it->second, port, node_type);
}

bool DeviceMonitor::Rescan() {
  if (use_verbs_) OpenListedContexts();  // first, so a new device's GIDs come from verbs too
  auto scanned = ReadSysfsInventory(sysfs_root_, use_verbs_ ? this : nullptr);
  if (!scanned.ok()) {
    spdlog::warn("device rescan failed: {}", scanned.status().message());
    return false;
  }
  // A device being unregistered counts as removed while sysfs still lists
  // it; once sysfs does not, a device of that name is a new one.
  auto& devices = scanned.value().devices;
  for (auto it = unregistering_.begin(); it != unregistering_.end();) {
    bool listed = std::any_of(devices.begin(), devices.end(),
                              [&](const DeviceInfo& d) { return d.name == *it; });
    it = listed ? std::next(it) : unregistering_.erase(it);
  }
  std::erase_if(devices, [this](const DeviceInfo& d) { return unregistering_.count(d.name) > 0; });
  CloseGoneContexts(*scanned);
  Probe(&scanned.value());
  auto next = std::make_shared<const Inventory>(std::move(scanned).value());
  std::shared_ptr<const Inventory> before;
  {
    std::lock_guard lock(mu_);
    before = inventory_;
    inventory_ = next;
  }
  auto changes = DiffInventory(*before, *next);
  for (const InventoryChange& c : changes) spdlog::info("device change: {}", c.message);
  // Facts no change names (a device's verbs facts, once it could be probed)
  // reach the listener too.
  if (!changes.empty() || before->devices != next->devices) listener_->OnInventory(next, changes);
  return probe_wait_.holding(Steady::now());
}

void DeviceMonitor::Probe(Inventory* inventory) {
  if (!use_verbs_) return;
  std::set<std::string> listed;
  auto now = Steady::now();
  std::erase_if(inventory->devices, [&](DeviceInfo& device) {
    listed.insert(device.name);
    auto it = contexts_.find(device.name);
    Status probed = it == contexts_.end()
                        ? Status::NotFound("libibverbs does not list " + device.name)
                        : ProbeVerbsWith(it->second, &device);
    if (probed.ok()) {
      probe_wait_.Probed(device.name);
      return false;
    }
    bool warn = false;
    switch (probe_wait_.Failed(device.name, now, &warn)) {
      case ProbeWait::Verdict::kHoldBack:
        // The first scan lists everything, so the daemon starts with every
        // device it can see; quick rescans still complete the facts.
        spdlog::debug("device {}: {} until verbs can probe it ({})", device.name,
                      started_ ? "not listed" : "sysfs facts only", probed.message());
        return started_;
      case ProbeWait::Verdict::kListUnprobed:
        if (warn) {
          spdlog::warn("device {}: verbs probe failed for {} ms ({}); listed with sysfs facts only",
                       device.name, kProbeGrace.count(), probed.message());
        }
        return false;
    }
    return false;
  });
  probe_wait_.Keep(listed);
}

void DeviceMonitor::OpenListedContexts() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) return;
  for (int i = 0; i < n; ++i) {
    std::string name = ibv_get_device_name(list[i]);
    if (contexts_.count(name)) continue;
    ibv_context* ctx = ibv_open_device(list[i]);
    if (ctx == nullptr || !SetNonBlocking(ctx->async_fd)) {
      spdlog::warn("device monitor: cannot watch {}'s async events", name);
      if (ctx) ibv_close_device(ctx);
      continue;
    }
    contexts_[name] = ctx;
  }
  ibv_free_device_list(list);
}

void DeviceMonitor::CloseGoneContexts(const Inventory& inventory) {
  for (auto it = contexts_.begin(); it != contexts_.end();) {
    if (inventory.Find(it->first)) {
      ++it;
      continue;
    }
    ibv_close_device(it->second);
    it = contexts_.erase(it);
  }
}

bool DeviceMonitor::DrainAsyncEvents(const std::string& device, ibv_context* ctx) {
  bool fatal = false;
  ibv_async_event event{};
  while (ibv_get_async_event(ctx, &event) == 0) {
    spdlog::info("{}: async event {} (port {})", device, ibv_event_type_str(event.event_type),
                 event.element.port_num);
    fatal |= event.event_type == IBV_EVENT_DEVICE_FATAL;
    ibv_ack_async_event(&event);
  }
  return !fatal;
}

bool DeviceMonitor::DrainUevents() {
  bool relevant = false;
  for (const std::string& msg : DrainSocket(uevent_fd_)) {
    if (msg == "overrun") {
      relevant = true;
      continue;
    }
    Uevent event = ParseUevent(msg);
    const std::string& subsystem = event.vars["SUBSYSTEM"];
    bool rdma = subsystem == "infiniband" || subsystem == "infiniband_verbs";
    if (rdma) spdlog::debug("uevent: {} {}", event.action, event.devpath);
    std::string name = event.devpath.substr(event.devpath.rfind('/') + 1);
    if (event.action == "remove" && subsystem == "infiniband_verbs") CloseVerbsDevice(name);
    // The device itself goes last, once unregistered: a device of that name
    // seen from now on is a new one, even if no rescan saw the name missing
    // (`rdma link delete` and `add` in quick succession).
    if (subsystem == "infiniband" && (event.action == "remove" || event.action == "add")) {
      unregistering_.erase(name);
    }
    relevant |= rdma || subsystem == "net";
  }
  return relevant;
}

void DeviceMonitor::CloseVerbsDevice(const std::string& uverbs_name) {
  // The uverbs char device goes first when a device is unregistered. A
  // driver that cannot disassociate user contexts (rxe, siw) then waits for
  // every open context to close: ours must not hold `rdma link delete` up.
  for (auto it = contexts_.begin(); it != contexts_.end(); ++it) {
    if (uverbs_name != it->second->device->dev_name) continue;
    spdlog::info("{}: {} removed: the device is being unregistered; closing it", it->first,
                 uverbs_name);
    unregistering_.insert(it->first);
    ibv_close_device(it->second);
    contexts_.erase(it);
    return;
  }
}

bool DeviceMonitor::DrainRtnetlink() { return !DrainSocket(rtnl_fd_).empty(); }

bool DeviceMonitor::PollOnce(std::chrono::milliseconds timeout, bool* stop) {
  std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}, {uevent_fd_, POLLIN, 0}, {rtnl_fd_, POLLIN, 0}};
  std::vector<std::string> watched;
  for (const auto& [name, ctx] : contexts_) {
    fds.push_back({ctx->async_fd, POLLIN, 0});
    watched.push_back(name);
  }
  int n = poll(fds.data(), fds.size(), int(std::max<int64_t>(0, timeout.count())));
  if (n < 0 && errno != EINTR) spdlog::error("device monitor: poll: {}", std::strerror(errno));
  if (n <= 0) return false;
  *stop = fds[0].revents != 0;
  bool triggered = false;
  if (fds[1].revents) triggered |= DrainUevents();
  if (fds[2].revents) triggered |= DrainRtnetlink();
  for (size_t i = 0; i < watched.size(); ++i) {
    if (!fds[3 + i].revents) continue;
    triggered = true;
    ibv_context* ctx = contexts_[watched[i]];
    // Close on DEVICE_FATAL at once: `rdma link delete` waits for us.
    if (!DrainAsyncEvents(watched[i], ctx) || (fds[3 + i].revents & (POLLHUP | POLLERR))) {
      spdlog::info("{}: closing the device (fatal or removed)", watched[i]);
      unregistering_.insert(watched[i]);
      ibv_close_device(ctx);
      contexts_.erase(watched[i]);
    }
  }
  return triggered;
}

void DeviceMonitor::Loop(bool rescan_soon) {
  auto next_scan = rescan_soon ? Steady::now() + kProbeRetry : Steady::time_point::max();
  auto second_scan = Steady::time_point::max();
  auto safety_scan = Steady::now() + kSafetyRescan;
  for (;;) {
    auto wake_at = std::min({next_scan, second_scan, safety_scan});
    bool stop = false;
    bool triggered =
        PollOnce(std::chrono::duration_cast<milliseconds>(wake_at - Steady::now()), &stop);
    if (stop) return;
    auto now = Steady::now();
    if (triggered) {
      next_scan = std::min(next_scan, now + kFirstRescan);
      second_scan = now + kSecondRescan;
    }
    if (now < next_scan && now < second_scan && now < safety_scan) continue;
    if (now >= second_scan) second_scan = Steady::time_point::max();
    next_scan = Steady::time_point::max();
    safety_scan = now + kSafetyRescan;
    if (Rescan()) next_scan = Steady::now() + kProbeRetry;
  }
}

}  // namespace rdmad
