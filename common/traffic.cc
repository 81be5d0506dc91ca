// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/traffic.h"

#include <array>
#include <bit>
#include <cstdint>

namespace rdmad {

namespace {

// For each bit width w, how many bounds lie below 2^(w-1), the smallest
// value that wide. The bounds at least double from one to the next, so at
// most one more lies below a value of that width.
constexpr std::array<uint8_t, 65> kBoundsBelowWidth = [] {
  std::array<uint8_t, 65> below{};
  for (size_t w = 1; w < below.size(); ++w) {
    uint64_t smallest = uint64_t(1) << (w - 1);
    for (uint64_t bound : kLatencyBoundsUs) below[w] += bound < smallest ? 1 : 0;
  }
  return below;
}();

}  // namespace

size_t LatencyBucket(uint64_t ns) {
  uint64_t us_ceil = ns / 1000 + (ns % 1000 != 0 ? 1 : 0);  // bounds are inclusive
  // The bounds below it (a search over all of them costs more, once per
  // transfer): those below its bit width's smallest value, then the one
  // or none between that and it.
  size_t bucket = kBoundsBelowWidth[std::bit_width(us_ceil)];
  while (bucket < kLatencyBoundsUs.size() && us_ceil > kLatencyBoundsUs[bucket]) ++bucket;
  return bucket;
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
