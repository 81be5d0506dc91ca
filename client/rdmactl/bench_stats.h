// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The arithmetic of `rdmactl bench`, in perftest's units: bandwidth in
// MB/s of 2^20 bytes (perftest's "MB/sec") and in Gb/s of 10^9 bits,
// message rate in millions of messages per second.
//
// A bandwidth run is a timeline: the cumulative bytes and messages known
// to have arrived at the far end, at the moment this side learnt it (an
// ack of the echo service's SINK, the completion of a Write or Read).
// Average = everything / the whole run. Peak = the best rate over any
// stretch of the timeline that lasts at least PeakWindow(run) seconds:
// 1/20 of the run, and at least 10 ms, so that one early completion cannot
// fake a peak (perftest takes its peak over any run of iterations; at
// this window the two agree within noise on steady links). Runs on
// parallel channels are merged into one timeline of their sums.
//
// Thread safety: pure functions over values.

#ifndef RDMAD_CLIENT_RDMACTL_BENCH_STATS_H_
#define RDMAD_CLIENT_RDMACTL_BENCH_STATS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rdmactl {

inline constexpr double kMegabyte = 1 << 20;   // perftest's MB
inline constexpr double kGigabit = 125000000;  // bytes per Gb

// Cumulative progress at t seconds after the run started.
struct Progress {
  double t = 0;
  uint64_t bytes = 0;
  uint64_t messages = 0;
};
using Timeline = std::vector<Progress>;  // ordered by t, counts non-decreasing

struct Throughput {
  uint64_t bytes = 0;
  uint64_t messages = 0;
  double seconds = 0;
  double avg_mbps = 0, peak_mbps = 0;  // MB/s (2^20)
  double avg_gbps = 0, peak_gbps = 0;  // Gb/s (10^9 bits)
  double msg_rate_mps = 0;             // million messages per second
};

// Builds a timeline from every completion without keeping them all: an
// event is kept when it is kGranularity after the last kept one (peaks are
// taken over 10 ms or more), and the last one always.
class TimelineRecorder {
 public:
  static constexpr double kGranularity = 50e-6;  // seconds
  void Add(double t, uint64_t bytes, uint64_t messages);
  // Room for n events up front: a run of known length then grows no
  // vector (a copy and fresh pages) while it is timed.
  void Reserve(size_t n) { timeline_.reserve(n); }
  // The timeline, ending with the last event added.
  Timeline Finish();

 private:
  Timeline timeline_;
  Progress last_;
  bool pending_ = false;  // last_ is not in timeline_
};

// How long a run lasts: iters iterations, or seconds when iters is 0.
struct BenchLimit {
  uint64_t iters = 0;
  double seconds = 0;
  bool Done(uint64_t done, double elapsed) const {
    return iters > 0 ? done >= iters : elapsed >= seconds;
  }
  // As Done, reading the clock (elapsed(): seconds so far) only for a run
  // of a duration: a run of N iterations then reads none per iteration.
  template <typename Elapsed>
  bool DoneBy(uint64_t done, Elapsed elapsed) const {
    return iters > 0 ? done >= iters : elapsed() >= seconds;
  }
};

// The timelines of channels that ran at once, as one: at each event of any
// of them, the sum of every channel's progress so far. Each input starts
// from zero at its own t = 0 (all started together).
Timeline MergeTimelines(const std::vector<Timeline>& timelines);

// The shortest stretch a peak is measured over, for a run of seconds.
double PeakWindow(double seconds);

// The best bytes/s over stretches [a, b] of the timeline with b.t - a.t >=
// window (a, b events, or the start at t = 0). 0 when no stretch is that
// long.
double PeakRate(const Timeline& timeline, double window);

// Average and peak of a timeline that ran for seconds (the last event's t
// when seconds is 0). A peak below the average (too few events to fill a
// window) is the average.
Throughput Summarize(const Timeline& timeline, double seconds = 0);

// CPU seconds over wall seconds, in percent of one core.
double CpuPercent(double cpu_seconds, double wall_seconds);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_BENCH_STATS_H_
