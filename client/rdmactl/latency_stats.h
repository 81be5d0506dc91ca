// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Latency samples and their summary, for rdmactl ping (and bench):
// min, mean, percentiles and max over every sample, in microseconds.
// Percentiles are nearest-rank: the p-th percentile of n sorted samples is
// the ceil(p/100 * n)-th, always one of the samples, so min <= p50 <= p99
// <= max holds for any data.
//
// Thread safety: a value type; no internal locking.

#ifndef RDMAD_CLIENT_RDMACTL_LATENCY_STATS_H_
#define RDMAD_CLIENT_RDMACTL_LATENCY_STATS_H_

#include <cstddef>
#include <string>
#include <vector>

namespace rdmactl {

struct LatencySummary {
  size_t count = 0;
  double min_us = 0, avg_us = 0, p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
  double stddev_us = 0;  // population standard deviation
};

class LatencyStats {
 public:
  void Add(double us) { samples_.push_back(us); }
  size_t count() const { return samples_.size(); }
  // In the order they were added.
  const std::vector<double>& samples() const { return samples_; }
  // All zeros without samples.
  LatencySummary Summarize() const;

 private:
  std::vector<double> samples_;
};

// The nearest-rank p-th percentile (0 < p <= 100) of sorted samples; 0 for
// none.
double Percentile(const std::vector<double>& sorted, double p);

// A duration for people: "850 ns" below 1 µs, "12.3 µs" below 1 ms,
// "1.234 ms" below 1 s, else "2.50 s".
std::string FormatMicros(double us);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_LATENCY_STATS_H_
