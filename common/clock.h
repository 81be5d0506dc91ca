// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Clock: where the daemon reads the time and draws the jitter it spreads
// retries with. Clock::System() is the real one (steady_clock for delays
// and graces, system_clock for what is shown as a date, a seeded engine for
// jitter); tests pass a ManualClock so that every delay is exact.
//
// Thread safety: System() may be used from any thread. ManualClock's reads
// and its setters may run on different threads.

#ifndef RDMAD_COMMON_CLOCK_H_
#define RDMAD_COMMON_CLOCK_H_

#include <chrono>
#include <mutex>

namespace rdmad {

using SteadyTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual SteadyTime Now() const = 0;
  virtual WallTime WallNow() const = 0;
  // Uniform in [0, 1).
  virtual double Random() = 0;

  // The process's clock; never destroyed.
  static Clock& System();
};

// A clock that moves only when told. Starts an hour after the steady
// epoch (so that "an hour ago" is representable) and at wall, with Random()
// 0.5: no jitter.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(WallTime wall = WallTime(std::chrono::seconds(1800000000))) : wall_(wall) {}

  SteadyTime Now() const override {
    std::lock_guard lock(mu_);
    return now_;
  }
  WallTime WallNow() const override {
    std::lock_guard lock(mu_);
    return wall_;
  }
  double Random() override {
    std::lock_guard lock(mu_);
    return random_;
  }

  // Moves both times forward.
  void Advance(std::chrono::steady_clock::duration d) {
    std::lock_guard lock(mu_);
    now_ += d;
    wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
  }
  void SetRandom(double r) {
    std::lock_guard lock(mu_);
    random_ = r;
  }

 private:
  mutable std::mutex mu_;
  SteadyTime now_ = SteadyTime() + std::chrono::hours(1);
  WallTime wall_;
  double random_ = 0.5;
};

}  // namespace rdmad

#endif  // RDMAD_COMMON_CLOCK_H_
