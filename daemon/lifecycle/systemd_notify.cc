// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/lifecycle/systemd_notify.h"

#include <systemd/sd-daemon.h>
#include <time.h>

#include <cstdlib>
#include <string>

#include "spdlog/spdlog.h"

namespace rdmad {

SystemdNotifier::SystemdNotifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  enabled_ = socket != nullptr && *socket != '\0';
  uint64_t usec = 0;
  if (sd_watchdog_enabled(/*unset_environment=*/0, &usec) > 0 && usec > 0) {
    watchdog_period_ = std::chrono::microseconds(usec / 2);
  }
}

void SystemdNotifier::Send(std::string_view state) {
  if (!enabled_) return;
  std::string text(state);
  int rc = sd_notify(/*unset_environment=*/0, text.c_str());
  if (rc < 0) spdlog::debug("sd_notify({}) failed: {}", text, rc);
}

void SystemdNotifier::Ready() { Send("READY=1"); }

void SystemdNotifier::Status(std::string_view text) {
  Send(std::string("STATUS=") + std::string(text));
}

void SystemdNotifier::Reloading() {
  // MONOTONIC_USEC lets Type=notify-reload (systemd >= 253) match the reload.
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t usec = uint64_t(ts.tv_sec) * 1000000 + uint64_t(ts.tv_nsec) / 1000;
  Send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void SystemdNotifier::Stopping() { Send("STOPPING=1"); }

void SystemdNotifier::Watchdog() { Send("WATCHDOG=1"); }

}  // namespace rdmad
