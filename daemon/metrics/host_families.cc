// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The daemon's local side as Prometheus families: quota refusals, local
// clients, pool targets and levels.

#include <map>
#include <string>
#include <tuple>

#include "daemon/metrics/family_builder.h"
#include "daemon/metrics/metric_families.h"

namespace rdmad {

using metrics_internal::Add;
using metrics_internal::Family;
using prometheus::MetricFamily;
using prometheus::MetricType;

void AddQuotaFamilies(const std::map<std::string, uint64_t, std::less<>>& refusals, Families* out) {
  MetricFamily f = Family("rdmad_quota_refusals_total",
                          "Requests a quota refused, by the config key that sets it "
                          "(limits.max_channels_per_uid, ...).",
                          MetricType::Counter);
  for (const auto& [quota, n] : refusals) Add(f, {{"quota", quota}}, double(n));
  out->push_back(std::move(f));
}

void AddLocalClientFamilies(const LocalClientCount& clients, Families* out) {
  MetricFamily connections =
      Family("rdmad_local_connections", "Connections to the local API's socket open now.",
             MetricType::Gauge);
  Add(connections, {}, double(clients.connections));
  MetricFamily processes =
      Family("rdmad_local_clients", "Processes with a connection to the local API's socket now.",
             MetricType::Gauge);
  Add(processes, {}, double(clients.processes));
  out->push_back(std::move(connections));
  out->push_back(std::move(processes));
}

void AddPoolFamilies(const std::vector<PoolRow>& rows, Families* out) {
  struct Levels {
    double target = 0, warm = 0, in_use = 0;
  };
  std::map<std::pair<std::string, std::string>, Levels> by_target;
  for (const PoolRow& r : rows) {
    Levels& l = by_target[{r.peer, r.service}];
    l.target += r.target;
    l.warm += r.warm;
    l.in_use += r.in_use;
  }
  MetricFamily target = Family("rdmad_pool_target_channels",
                               "Channels the following clients are to keep established per "
                               "peer and service, summed over them ([[pool]] and Prewarm).",
                               MetricType::Gauge);
  MetricFamily warm = Family("rdmad_pool_warm_channels",
                             "Established channels waiting in the clients' pools, as they "
                             "reported.",
                             MetricType::Gauge);
  MetricFamily in_use =
      Family("rdmad_pool_in_use_channels",
             "Pooled channels handed out by Connect, as the clients reported.", MetricType::Gauge);
  for (const auto& [key, l] : by_target) {
    const auto& [peer, service] = key;
    Add(target, {{"peer", peer}, {"service", service}}, l.target);
    Add(warm, {{"peer", peer}, {"service", service}}, l.warm);
    Add(in_use, {{"peer", peer}, {"service", service}}, l.in_use);
  }
  out->push_back(std::move(target));
  out->push_back(std::move(warm));
  out->push_back(std::move(in_use));
}

}  // namespace rdmad
