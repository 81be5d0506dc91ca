// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// TickClock: the clock `rdmactl bench` times round trips with. On x86-64
// it is the CPU's time-stamp counter, as perftest (get_cycles) and
// ucx_perftest time theirs, scaled to microseconds by a calibration
// against the steady clock; elsewhere it is the steady clock itself.
// Reading the steady clock costs a system call and a device access where
// the kernel's clocksource is not the TSC (a VM's HPET: 1.5 to 3 us each
// under emulation), and the latency loop reads it once per round trip:
// the anchors' round trips did not pay that, ours did.
//
// Thread safety: immutable after Calibrated(); Now() from any thread.

#ifndef RDMAD_CLIENT_RDMACTL_BENCH_CLOCK_H_
#define RDMAD_CLIENT_RDMACTL_BENCH_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace rdmactl {

class TickClock {
 public:
  // The process's clock, calibrated at its first use over window (the TSC
  // against the steady clock; the steady clock: none needed).
  static const TickClock& Calibrated(
      std::chrono::milliseconds window = std::chrono::milliseconds(20));

  // A clock of ticks_per_us ticks per microsecond read by now (tests).
  TickClock(double ticks_per_us, uint64_t (*now)()) : ticks_per_us_(ticks_per_us), now_(now) {}

  uint64_t Now() const { return now_(); }
  // Microseconds from tick from to tick to (0 if to is earlier: another
  // CPU's counter may be a little behind).
  double Micros(uint64_t from, uint64_t to) const {
    return to > from ? double(to - from) / ticks_per_us_ : 0.0;
  }
  double ticks_per_us() const { return ticks_per_us_; }

 private:
  double ticks_per_us_;
  uint64_t (*now_)();
};

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_BENCH_CLOCK_H_
