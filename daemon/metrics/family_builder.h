// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The few helpers every family builder of metric_families.h uses: a
// family, one sample of it, one histogram sample.
//
// Thread safety: pure functions over values.

#ifndef RDMAD_DAEMON_METRICS_FAMILY_BUILDER_H_
#define RDMAD_DAEMON_METRICS_FAMILY_BUILDER_H_

#include <prometheus/metric_family.h>

#include <string>
#include <utility>
#include <vector>

#include "common/traffic.h"

namespace rdmad::metrics_internal {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

inline MetricFamily Family(std::string name, std::string help, MetricType type) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

// One counter or gauge sample (as the family's type says).
inline void Add(MetricFamily& f, std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  if (f.type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
}

// One histogram sample from a LatencyHistogram (its buckets made
// cumulative, its bounds in seconds).
void AddHistogram(MetricFamily& f, std::vector<ClientMetric::Label> labels,
                  const LatencyHistogram& h);

}  // namespace rdmad::metrics_internal

#endif  // RDMAD_DAEMON_METRICS_FAMILY_BUILDER_H_
