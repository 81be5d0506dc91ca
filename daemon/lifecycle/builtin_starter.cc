// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/lifecycle/builtin_starter.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace rdmad {
namespace {

constexpr std::chrono::seconds kMaxBackoff{30};

// The daemon's own socket did not answer in time: worth another try.
bool Transient(StatusCode code) {
  return code == StatusCode::kUnavailable || code == StatusCode::kDeadlineExceeded;
}

}  // namespace

void BuiltinStarter::Update(bool enabled, const std::string& reason, Clock::time_point now) {
  if (make_ == nullptr) return;
  bool first = !std::exchange(updated_, true);
  enabled_ = enabled;
  if (!enabled) {
    if (service_ || next_try_ || first) spdlog::info("{} off: {}", name_, reason);
    Stop();
    return;
  }
  if (service_) return;
  backoff_ = std::chrono::seconds(1);
  TryStart(now);
}

void BuiltinStarter::Poll(Clock::time_point now) {
  if (!next_try_ || now < *next_try_) return;
  TryStart(now);
}

void BuiltinStarter::TryStart(Clock::time_point now) {
  next_try_.reset();
  auto made = make_->Make(socket_path_);
  if (made.ok()) {
    service_ = std::move(made).value();
    return;
  }
  if (!Transient(made.status().code())) {
    spdlog::warn("{} not started: {}", name_, made.status().message());
    return;
  }
  spdlog::warn("{} not started: {}; trying again in {} s", name_, made.status().message(),
               backoff_.count());
  next_try_ = now + backoff_;
  backoff_ = std::min(backoff_ * 2, kMaxBackoff);
}

void BuiltinStarter::Stop() {
  next_try_.reset();
  if (service_) service_->Stop();
  service_.reset();
}

}  // namespace rdmad
