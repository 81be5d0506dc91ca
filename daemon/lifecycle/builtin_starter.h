// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// BuiltinStarter keeps a built-in service (the echo service) running when
// it is enabled: Update starts it, or stops it when disabled. A start that
// failed because the daemon's own socket did not answer in time (a loaded
// host: UNAVAILABLE, DEADLINE_EXCEEDED) is tried again at next_try(), 1 s
// later, then 2, 4, up to 30 s apart, until it starts or the service is
// disabled; any other failure (ALREADY_EXISTS: another application holds
// the name) is logged once and left until the next Update with a change
// (a config reload).
//
// Thread safety: one thread (the daemon's main thread).

#ifndef RDMAD_DAEMON_LIFECYCLE_BUILTIN_STARTER_H_
#define RDMAD_DAEMON_LIFECYCLE_BUILTIN_STARTER_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "daemon/broker/builtin_service.h"

namespace rdmad {

class BuiltinStarter {
 public:
  using Clock = std::chrono::steady_clock;

  // name: for the log ("echo service"); make: null for none.
  BuiltinStarter(std::string name, const BuiltinServiceFactory* make, std::string socket_path)
      : name_(std::move(name)), make_(make), socket_path_(std::move(socket_path)) {}
  ~BuiltinStarter() { Stop(); }

  // Starts the service (enabled, not running) or stops it (disabled).
  // reason: why it is off, for the log.
  void Update(bool enabled, const std::string& reason, Clock::time_point now);
  // A retry is due: tries to start again.
  void Poll(Clock::time_point now);
  // When Poll should run next (none: nothing to retry).
  std::optional<Clock::time_point> next_try() const { return next_try_; }
  bool running() const { return service_ != nullptr; }
  void Stop();

 private:
  void TryStart(Clock::time_point now);

  const std::string name_;
  const BuiltinServiceFactory* const make_;  // not owned; null: none
  const std::string socket_path_;
  std::unique_ptr<BuiltinService> service_;
  bool enabled_ = false;
  bool updated_ = false;  // Update ran once (the first says "off" too)
  std::optional<Clock::time_point> next_try_;
  std::chrono::seconds backoff_{1};
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_LIFECYCLE_BUILTIN_STARTER_H_
