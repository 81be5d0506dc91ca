// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The applications' traffic (TrafficView) as Prometheus families.

#include <limits>
#include <string>

#include "daemon/metrics/family_builder.h"
#include "daemon/metrics/metric_families.h"

namespace rdmad {
namespace metrics_internal {

void AddHistogram(MetricFamily& f, std::vector<ClientMetric::Label> labels,
                  const LatencyHistogram& h) {
  ClientMetric m;
  m.label = std::move(labels);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kLatencyBoundsUs.size(); ++i) {
    cumulative += h.buckets[i];
    m.histogram.bucket.push_back({cumulative, double(kLatencyBoundsUs[i]) / 1e6});
  }
  cumulative += h.buckets.back();
  m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
  m.histogram.sample_count = cumulative;
  m.histogram.sample_sum = double(h.sum_ns) / 1e9;
  f.metric.push_back(std::move(m));
}

}  // namespace metrics_internal

using metrics_internal::Add;
using metrics_internal::AddHistogram;
using metrics_internal::Family;
using prometheus::MetricFamily;
using prometheus::MetricType;

void AddTrafficFamilies(const TrafficView& view, Families* out) {
  MetricFamily bytes = Family("rdmad_channel_bytes_total",
                              "Bytes the applications' channels moved, as their libraries "
                              "reported, by peer, service and op: messages sent and received, "
                              "this side's one-sided writes and reads (ended channels included).",
                              MetricType::Counter);
  MetricFamily ops = Family("rdmad_channel_operations_total",
                            "Messages and one-sided operations of the applications' channels, "
                            "by peer, service and op.",
                            MetricType::Counter);
  MetricFamily latency = Family("rdmad_transfer_duration_seconds",
                                "One-sided completions of the applications' channels: a Write "
                                "or Read call, a Submit batch until done.",
                                MetricType::Histogram);
  for (const auto& [key, t] : view.totals) {
    const auto& [peer, service] = key;
    auto add = [&, &peer = peer, &service = service](const char* op, uint64_t n, uint64_t b) {
      Add(bytes, {{"op", op}, {"peer", peer}, {"service", service}}, double(b));
      Add(ops, {{"op", op}, {"peer", peer}, {"service", service}}, double(n));
    };
    add("send", t.messages_sent, t.bytes_sent);
    add("recv", t.messages_received, t.bytes_received);
    add("write", t.writes, t.bytes_written);
    add("read", t.reads, t.bytes_read);
    AddHistogram(latency, {{"peer", peer}, {"service", service}}, t.latency);
  }
  MetricFamily opens = Family("rdmad_channel_open_duration_seconds",
                              "How long the applications' Connects took to hand out a channel: "
                              "a cold connect, or a warm one from the pool.",
                              MetricType::Histogram);
  for (const auto& [key, h] : view.connects) {
    const auto& [peer, service, pooled] = key;
    AddHistogram(opens,
                 {{"peer", peer}, {"service", service}, {"source", pooled ? "pool" : "cold"}}, h);
  }
  out->push_back(std::move(bytes));
  out->push_back(std::move(ops));
  out->push_back(std::move(latency));
  out->push_back(std::move(opens));
}

}  // namespace rdmad
