// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/traffic.h"

#include <algorithm>

namespace rdmad {

size_t LatencyBucket(uint64_t ns) {
  uint64_t us_ceil = ns / 1000 + (ns % 1000 != 0 ? 1 : 0);  // bounds are inclusive
  return size_t(std::lower_bound(kLatencyBoundsUs.begin(), kLatencyBoundsUs.end(), us_ceil) -
                kLatencyBoundsUs.begin());
}

uint64_t LatencyHistogram::count() const {
  uint64_t n = 0;
  for (uint64_t b : buckets) n += b;
  return n;
}

void LatencyHistogram::Add(const LatencyHistogram& other) {
  for (size_t i = 0; i < buckets.size(); ++i) buckets[i] += other.buckets[i];
  sum_ns += other.sum_ns;
}

bool LatencyHistogram::NotBelow(const LatencyHistogram& other) const {
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i] < other.buckets[i]) return false;
  }
  return sum_ns >= other.sum_ns;
}

void TrafficTotals::Add(const TrafficTotals& o) {
  messages_sent += o.messages_sent;
  bytes_sent += o.bytes_sent;
  messages_received += o.messages_received;
  bytes_received += o.bytes_received;
  writes += o.writes;
  bytes_written += o.bytes_written;
  reads += o.reads;
  bytes_read += o.bytes_read;
  latency.Add(o.latency);
}

bool TrafficTotals::NotBelow(const TrafficTotals& o) const {
  return messages_sent >= o.messages_sent && bytes_sent >= o.bytes_sent &&
         messages_received >= o.messages_received && bytes_received >= o.bytes_received &&
         writes >= o.writes && bytes_written >= o.bytes_written && reads >= o.reads &&
         bytes_read >= o.bytes_read && latency.NotBelow(o.latency);
}

bool TrafficTotals::operator==(const TrafficTotals& o) const {
  return NotBelow(o) && o.NotBelow(*this);
}

}  // namespace rdmad
