// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/backoff.h"

#include <algorithm>
#include <memory>
#include <random>

namespace rdmad {

Backoff::Backoff(Options options, std::function<double()> random)
    : options_(options), random_(std::move(random)), base_(options.initial) {
  options_.jitter = std::clamp(options_.jitter, 0.0, 1.0);
  if (!random_) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    random_ = [engine] { return std::uniform_real_distribution<double>(0, 1)(*engine); };
  }
}

std::chrono::milliseconds Backoff::Next() {
  std::chrono::milliseconds base = std::min(base_, options_.max);
  base_ = std::min(base_ * 2, options_.max);
  double factor = 1.0 + options_.jitter * (2.0 * random_() - 1.0);
  auto delay = std::chrono::milliseconds(int64_t(double(base.count()) * factor));
  return std::max(delay, std::chrono::milliseconds(1));
}

}  // namespace rdmad
