// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/backoff.h"

#include <algorithm>

namespace rdmad {

Backoff::Backoff(Options options, Clock& clock)
    : options_(options), clock_(&clock), base_(options.initial) {
  options_.jitter = std::clamp(options_.jitter, 0.0, 1.0);
}

std::chrono::milliseconds Backoff::Next() {
  std::chrono::milliseconds base = std::min(base_, options_.max);
  base_ = std::min(base_ * 2, options_.max);
  double factor = 1.0 + options_.jitter * (2.0 * clock_->Random() - 1.0);
  auto delay = std::chrono::milliseconds(int64_t(double(base.count()) * factor));
  return std::max(delay, std::chrono::milliseconds(1));
}

}  // namespace rdmad
