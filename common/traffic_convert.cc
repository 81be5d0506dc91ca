// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/traffic_convert.h"

#include <string>

namespace rdmad::internal {

void ToProto(const TrafficTotals& t, v1::ChannelTraffic* out) {
  out->set_messages_sent(t.messages_sent);
  out->set_bytes_sent(t.bytes_sent);
  out->set_messages_received(t.messages_received);
  out->set_bytes_received(t.bytes_received);
  out->set_writes(t.writes);
  out->set_bytes_written(t.bytes_written);
  out->set_reads(t.reads);
  out->set_bytes_read(t.bytes_read);
  out->clear_latency_buckets();
  if (t.latency.count() != 0) {
    for (uint64_t b : t.latency.buckets) out->add_latency_buckets(b);
  }
  out->set_latency_sum_ns(t.latency.sum_ns);
}

StatusOr<TrafficTotals> FromProto(const v1::ChannelTraffic& in) {
  if (in.latency_buckets_size() != 0 && size_t(in.latency_buckets_size()) != kLatencyBuckets) {
    return Status::InvalidArgument("latency_buckets: " + std::to_string(kLatencyBuckets) +
                                   " buckets or none, not " +
                                   std::to_string(in.latency_buckets_size()));
  }
  TrafficTotals t;
  t.messages_sent = in.messages_sent();
  t.bytes_sent = in.bytes_sent();
  t.messages_received = in.messages_received();
  t.bytes_received = in.bytes_received();
  t.writes = in.writes();
  t.bytes_written = in.bytes_written();
  t.reads = in.reads();
  t.bytes_read = in.bytes_read();
  for (int i = 0; i < in.latency_buckets_size(); ++i) t.latency.buckets[i] = in.latency_buckets(i);
  t.latency.sum_ns = in.latency_sum_ns();
  return t;
}

}  // namespace rdmad::internal
