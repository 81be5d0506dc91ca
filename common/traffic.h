// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What an application's channel moved (docs/operations.md, "Metrics"):
// the client library counts it (client/src/traffic_meter.h), reports it to
// rdmad (rdmad.v1.ReportTraffic) and rdmad serves it per peer and service.
// One definition for both sides: the counters, the latency histogram's
// bounds and how totals add up.
//
// A LatencyHistogram keeps a count per bucket (not cumulative): bucket i
// holds durations up to kLatencyBoundsUs[i] microseconds and above the one
// before; the last bucket, everything slower than the last bound.
//
// Thread safety: values.

#ifndef RDMAD_COMMON_TRAFFIC_H_
#define RDMAD_COMMON_TRAFFIC_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace rdmad {

inline constexpr std::array<uint64_t, 19> kLatencyBoundsUs = {
    1,    2,    5,     10,    20,    50,     100,    200,    500,    1000,
    2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000};
inline constexpr size_t kLatencyBuckets = kLatencyBoundsUs.size() + 1;

// The bucket a duration of ns nanoseconds falls in.
size_t LatencyBucket(uint64_t ns);

struct LatencyHistogram {
  std::array<uint64_t, kLatencyBuckets> buckets{};
  uint64_t sum_ns = 0;

  void Observe(uint64_t ns) {
    ++buckets[LatencyBucket(ns)];
    sum_ns += ns;
  }
  uint64_t count() const;
  void Add(const LatencyHistogram& other);
  // Every bucket and the sum at least other's: a later account of the same
  // histogram.
  bool NotBelow(const LatencyHistogram& other) const;
};

// A channel's totals since it was set up, as one side's library counts
// them. Messages: Send/TrySend and Recv/RecvInto; one-sided: Write and Read
// calls and the ops of Submit's batches (this side's, into or from the
// peer's memory); latency: each one-sided completion (a Write or Read
// call, a Submit batch from Submit to its completion).
struct TrafficTotals {
  uint64_t messages_sent = 0, bytes_sent = 0;
  uint64_t messages_received = 0, bytes_received = 0;
  uint64_t writes = 0, bytes_written = 0;
  uint64_t reads = 0, bytes_read = 0;
  LatencyHistogram latency;

  void Add(const TrafficTotals& other);
  // Every counter at least other's: a later account of the same channel.
  bool NotBelow(const TrafficTotals& other) const;
  bool operator==(const TrafficTotals& other) const;
};

}  // namespace rdmad

#endif  // RDMAD_COMMON_TRAFFIC_H_
