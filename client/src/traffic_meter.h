// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// TrafficMeter: one channel's counters (common/traffic.h) as the library
// keeps them while the application moves data. Each count is one relaxed
// atomic add, taken after the call it counts succeeded; nothing locks and
// nothing allocates. The calls' side (HeldChannel) counts messages and
// Write/Read calls with their durations; the transport counts Submit's
// batches, whose completion only it sees (RDMA: from Submit until the
// batch is done; TCP runs a batch's ops inside Submit), one completion
// per batch. The
// sending and receiving counters sit on cache lines of their own, so a
// sending thread and a receiving one do not share one.
//
// Thread safety: every method may be called from any thread. Snapshot
// reads each counter on its own: one taken during a call may have its op
// and not yet its bytes; every counter only grows.

#ifndef RDMAD_CLIENT_SRC_TRAFFIC_METER_H_
#define RDMAD_CLIENT_SRC_TRAFFIC_METER_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "common/traffic.h"
#include "rdmad/channel.h"

namespace rdmad::internal {

// A batch's one-sided ops summed: their Write and Read counts and bytes.
struct BatchTotals {
  uint64_t writes = 0, written = 0, reads = 0, read = 0;
  static BatchTotals Of(const std::vector<TransferOp>& ops);
};

class TrafficMeter {
 public:
  void Sent(uint64_t bytes) {
    Bump(send_.messages, 1);
    Bump(send_.bytes, bytes);
  }
  void Received(uint64_t bytes) {
    Bump(recv_.messages, 1);
    Bump(recv_.bytes, bytes);
  }
  // ops one-sided operations of bytes in all, Write (write) or Read.
  void OneSided(bool write, uint64_t ops, uint64_t bytes) {
    Bump(write ? one_sided_.writes : one_sided_.reads, ops);
    Bump(write ? one_sided_.bytes_written : one_sided_.bytes_read, bytes);
  }
  // A batch's ops (their Write and Read counts and bytes).
  void Batch(const BatchTotals& totals) {
    if (totals.writes != 0) OneSided(true, totals.writes, totals.written);
    if (totals.reads != 0) OneSided(false, totals.reads, totals.read);
  }
  // One one-sided completion, ns after it was started.
  void Completed(uint64_t ns) {
    Bump(one_sided_.latency[LatencyBucket(ns)], 1);
    Bump(one_sided_.latency_sum_ns, ns);
  }
  TrafficTotals Snapshot() const;
  // Whether a count moved since `since` (an earlier Snapshot of this
  // meter), read from the message, byte and op counts and the latency sum
  // alone: a completion adds its time to the sum as well as to a bucket.
  // What a reporter asks of every channel each interval, most of them idle.
  bool MovedSince(const TrafficTotals& since) const;

 private:
  static void Bump(std::atomic<uint64_t>& counter, uint64_t n) {
    counter.fetch_add(n, std::memory_order_relaxed);
  }
  struct alignas(64) Messages {
    std::atomic<uint64_t> messages{0}, bytes{0};
  };
  struct alignas(64) OneSidedCounts {
    std::atomic<uint64_t> writes{0}, bytes_written{0}, reads{0}, bytes_read{0};
    std::array<std::atomic<uint64_t>, kLatencyBuckets> latency{};
    std::atomic<uint64_t> latency_sum_ns{0};
  };
  Messages send_;
  Messages recv_;
  OneSidedCounts one_sided_;
};

// Nanoseconds on the steady clock, for Completed's durations.
uint64_t MeterNowNs();

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_TRAFFIC_METER_H_
