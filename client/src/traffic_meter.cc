// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/traffic_meter.h"

#include <chrono>

namespace rdmad::internal {

TrafficTotals TrafficMeter::Snapshot() const {
  auto load = [](const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); };
  TrafficTotals t;
  t.messages_sent = load(send_.messages);
  t.bytes_sent = load(send_.bytes);
  t.messages_received = load(recv_.messages);
  t.bytes_received = load(recv_.bytes);
  t.writes = load(one_sided_.writes);
  t.bytes_written = load(one_sided_.bytes_written);
  t.reads = load(one_sided_.reads);
  t.bytes_read = load(one_sided_.bytes_read);
  for (size_t i = 0; i < kLatencyBuckets; ++i) t.latency.buckets[i] = load(one_sided_.latency[i]);
  t.latency.sum_ns = load(one_sided_.latency_sum_ns);
  return t;
}

bool TrafficMeter::MovedSince(const TrafficTotals& since) const {
  auto load = [](const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); };
  return load(send_.messages) != since.messages_sent || load(send_.bytes) != since.bytes_sent ||
         load(recv_.messages) != since.messages_received ||
         load(recv_.bytes) != since.bytes_received || load(one_sided_.writes) != since.writes ||
         load(one_sided_.bytes_written) != since.bytes_written ||
         load(one_sided_.reads) != since.reads || load(one_sided_.bytes_read) != since.bytes_read ||
         load(one_sided_.latency_sum_ns) != since.latency.sum_ns;
}

BatchTotals BatchTotals::Of(const std::vector<TransferOp>& ops) {
  BatchTotals t;
  for (const TransferOp& op : ops) {
    if (op.kind == TransferOp::Kind::kWrite) {
      ++t.writes;
      t.written += op.len;
    } else {
      ++t.reads;
      t.read += op.len;
    }
  }
  return t;
}

uint64_t MeterNowNs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

}  // namespace rdmad::internal
