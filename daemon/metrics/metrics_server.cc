// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/metrics/metrics_server.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <spdlog/spdlog.h>

#include <exception>

#include "daemon/metrics/metric_families.h"

namespace rdmad {
namespace {

// Every scrape: the daemon's series, from its snapshots.
class DaemonCollector final : public prometheus::Collectable {
 public:
  explicit DaemonCollector(DaemonCore* core) : core_(core) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    Families out;
    try {
      AddBuildInfo(RDMAD_VERSION, &out);
      if (StatusOr<ProcessStats> process = ReadProcessStats(); process.ok()) {
        AddProcessFamilies(*process, &out);
      }
      AddPeerFamilies(core_->ListPeers(), &out);
      if (Broker* broker = core_->broker()) {
        AddChannelFamilies(broker->Channels(), &out);
        AddHandshakeFamilies(broker->handshake_counts(), &out);
        AddTrafficFamilies(broker->Traffic(), &out);
      }
      if (QuotaRefusals* refusals = core_->quota_refusals()) {
        AddQuotaFamilies(refusals->Snapshot(), &out);
      }
      AddLocalClientFamilies(core_->LocalClients(), &out);
      if (PoolRegistry* pool = core_->pool()) AddPoolFamilies(pool->List(), &out);
      AddPortFamilies(
          *core_->inventory(),
          [this](const std::string& device, int port) { return core_->PortCounters(device, port); },
          &out);
    } catch (const std::exception& e) {  // never past the library's thread
      spdlog::warn("metrics: a scrape failed: {}", e.what());
    }
    return out;
  }

 private:
  DaemonCore* const core_;
};

class PrometheusMetricsServer final : public MetricsServer {
 public:
  PrometheusMetricsServer(std::unique_ptr<prometheus::Exposer> exposer,
                          std::shared_ptr<DaemonCollector> collector)
      : exposer_(std::move(exposer)), collector_(std::move(collector)) {
    exposer_->RegisterCollectable(collector_);
  }
  ~PrometheusMetricsServer() override {
    exposer_->RemoveCollectable(collector_);
    exposer_.reset();  // stops its threads before the collector goes
  }
  int port() const override {
    std::vector<int> ports = exposer_->GetListeningPorts();
    return ports.empty() ? 0 : ports.front();
  }

 private:
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<DaemonCollector> collector_;
};

}  // namespace

StatusOr<std::unique_ptr<MetricsServer>> PrometheusMetricsFactory::Make(DaemonCore* core,
                                                                        const std::string& address,
                                                                        int port) const {
  std::string host = address.find(':') != std::string::npos ? "[" + address + "]" : address;
  std::string bind = host + ":" + std::to_string(port);
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(bind, /*num_threads=*/1);
  } catch (const std::exception& e) {
    return Status::Unavailable("metrics: cannot listen on " + bind + ": " + e.what());
  }
  return std::unique_ptr<MetricsServer>(
      new PrometheusMetricsServer(std::move(exposer), std::make_shared<DaemonCollector>(core)));
}

}  // namespace rdmad
