// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// SystemdNotifier speaks the sd_notify protocol: READY, STATUS, WATCHDOG,
// RELOADING, STOPPING. Every call is a no-op when the daemon was not started
// by systemd (NOTIFY_SOCKET unset), so callers never need to check.
//
// Thread safety: all methods may be called from any thread.

#ifndef RDMAD_DAEMON_LIFECYCLE_SYSTEMD_NOTIFY_H_
#define RDMAD_DAEMON_LIFECYCLE_SYSTEMD_NOTIFY_H_

#include <chrono>
#include <optional>
#include <string_view>

namespace rdmad {

class SystemdNotifier {
 public:
  // Reads NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID from the environment.
  SystemdNotifier();

  bool enabled() const { return enabled_; }

  void Ready();
  void Status(std::string_view text);
  void Reloading();
  void Stopping();
  void Watchdog();

  // How often Watchdog() must be called: half of WATCHDOG_USEC, or nullopt
  // when systemd does not watch this process.
  std::optional<std::chrono::microseconds> watchdog_period() const { return watchdog_period_; }

 private:
  void Send(std::string_view state);

  bool enabled_ = false;
  std::optional<std::chrono::microseconds> watchdog_period_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_LIFECYCLE_SYSTEMD_NOTIFY_H_
