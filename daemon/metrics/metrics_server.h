// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The metrics endpoint (metrics.enabled; docs/operations.md, "Metrics"):
// prometheus-cpp's HTTP exposer serving /metrics in the text exposition
// format, each scrape reading the daemon's snapshots through DaemonCore
// (metric_families.h). The library's civetweb threads serve it; nothing
// of the daemon waits for a scrape.
//
// Thread safety: Make may be called from any thread; the server's scrapes
// run on its own threads and call only DaemonCore's thread-safe methods.

#ifndef RDMAD_DAEMON_METRICS_METRICS_SERVER_H_
#define RDMAD_DAEMON_METRICS_METRICS_SERVER_H_

#include <memory>
#include <string>

#include "daemon/lifecycle/daemon.h"

namespace rdmad {

class PrometheusMetricsFactory final : public MetricsServerFactory {
 public:
  StatusOr<std::unique_ptr<MetricsServer>> Make(DaemonCore* core, const std::string& address,
                                                int port) const override;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_METRICS_METRICS_SERVER_H_
