// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/clock.h"

#include <random>

namespace rdmad {
namespace {

class SystemClock final : public Clock {
 public:
  SteadyTime Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
  double Random() override {
    std::lock_guard lock(mu_);
    return std::uniform_real_distribution<double>(0, 1)(engine_);
  }

 private:
  std::mutex mu_;
  std::mt19937_64 engine_{std::random_device{}()};
};

}  // namespace

Clock& Clock::System() {
  static auto* clock = new SystemClock();
  return *clock;
}

}  // namespace rdmad
