// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/bench_clock.h"

#include <thread>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace rdmactl {
namespace {

using Steady = std::chrono::steady_clock;

uint64_t SteadyNs() {
  return uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Steady::now().time_since_epoch())
          .count());
}

#if defined(__x86_64__)
uint64_t Tsc() { return __rdtsc(); }

// The TSC's ticks per microsecond over window. Each end is a steady-clock
// read stamped with the middle of the two TSC reads around it, the
// tightest of a few: a preemption between them would skew the scale.
double TscTicksPerUs(std::chrono::milliseconds window) {
  auto stamp = [](uint64_t* tsc) {
    uint64_t best_span = UINT64_MAX;
    Steady::time_point best;
    for (int i = 0; i < 5; ++i) {
      uint64_t before = Tsc();
      Steady::time_point t = Steady::now();
      uint64_t span = Tsc() - before;
      if (span < best_span) {
        best_span = span;
        best = t;
        *tsc = before + span / 2;
      }
    }
    return best;
  };
  uint64_t tsc0 = 0, tsc1 = 0;
  Steady::time_point t0 = stamp(&tsc0);
  std::this_thread::sleep_for(window);
  Steady::time_point t1 = stamp(&tsc1);
  double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  return tsc1 > tsc0 && us > 0 ? double(tsc1 - tsc0) / us : 0.0;
}
#endif

TickClock Calibrate(std::chrono::milliseconds window) {
#if defined(__x86_64__)
  if (double per_us = TscTicksPerUs(window); per_us > 0) return TickClock(per_us, &Tsc);
#else
  (void)window;
#endif
  return TickClock(1000.0, &SteadyNs);
}

}  // namespace

const TickClock& TickClock::Calibrated(std::chrono::milliseconds window) {
  static const TickClock clock = Calibrate(window);
  return clock;
}

}  // namespace rdmactl
