// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace rdmactl {

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = size_t(std::ceil(p / 100.0 * double(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

LatencySummary LatencyStats::Summarize() const {
  LatencySummary s;
  s.count = samples_.size();
  if (samples_.empty()) return s;
  std::vector<double> sorted = samples_;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double v : sorted) sum += v;
  s.avg_us = sum / double(sorted.size());
  double squares = 0;
  for (double v : sorted) squares += (v - s.avg_us) * (v - s.avg_us);
  s.stddev_us = std::sqrt(squares / double(sorted.size()));
  s.min_us = sorted.front();
  s.max_us = sorted.back();
  s.p50_us = Percentile(sorted, 50);
  s.p90_us = Percentile(sorted, 90);
  s.p99_us = Percentile(sorted, 99);
  s.p999_us = Percentile(sorted, 99.9);
  return s;
}

std::string FormatMicros(double us) {
  char buf[32];
  if (us < 1) {
    std::snprintf(buf, sizeof(buf), "%.0f ns", us * 1000);
  } else if (us < 1000) {
    std::snprintf(buf, sizeof(buf), "%.1f µs", us);
  } else if (us < 1e6) {
    std::snprintf(buf, sizeof(buf), "%.3f ms", us / 1000);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f s", us / 1e6);
  }
  return buf;
}

}  // namespace rdmactl
