// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Daemon runs rdmad's lifecycle: it takes the instance lock, binds the local
// socket, starts the API server and then the peer listener and sessions
// (PeerHub) and the echo service (echo.enabled), tells systemd it is ready,
// and then waits in its main loop for signals (SIGHUP reloads, SIGTERM/SIGINT
// stop) while petting the watchdog. The RPC edge sees it only through
// DaemonCore.
//
// Thread safety: Run() is called once from the main thread, with SIGTERM,
// SIGINT and SIGHUP blocked in every thread (BlockDaemonSignals before any
// thread starts). The DaemonCore methods may be called from any thread.

#ifndef RDMAD_DAEMON_LIFECYCLE_DAEMON_H_
#define RDMAD_DAEMON_LIFECYCLE_DAEMON_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "daemon/broker/broker.h"
#include "daemon/broker/builtin_service.h"
#include "daemon/clients/client_limiter.h"
#include "daemon/cluster/cluster_membership.h"
#include "daemon/config/config.h"
#include "daemon/discovery/device_monitor.h"
#include "daemon/discovery/inventory.h"
#include "daemon/events/event_bus.h"
#include "daemon/lifecycle/builtin_starter.h"
#include "daemon/lifecycle/systemd_notify.h"
#include "daemon/lifecycle/unix_listener.h"
#include "daemon/peers/peer_hub.h"
#include "daemon/policy/path_policy.h"
#include "daemon/pool/pool_registry.h"
#include "daemon/topology/rail_plan.h"
#include "daemon/topology/topology_keeper.h"
#include "rdmad/daemon_status.h"
#include "rdmad/status.h"

namespace rdmad {

// The daemon as the RPC edge sees it.
class DaemonCore {
 public:
  virtual ~DaemonCore() = default;
  virtual DaemonStatus GetStatus() const = 0;
  virtual EventBus& events() = 0;
  // The current device inventory (never null).
  virtual std::shared_ptr<const Inventory> inventory() const = 0;
  virtual StatusOr<std::map<std::string, uint64_t>> PortCounters(const std::string& device,
                                                                 int port) const = 0;
  // Plans the path to a peer with the running config and inventory.
  virtual StatusOr<PathDecision> ResolvePath(const PathRequest& request) const = 0;
  // The peer sessions: configured ones in config order, then on-demand ones.
  virtual std::vector<PeerSnapshot> ListPeers() const = 0;
  // The session to a [[peers]] name or an address (opened on demand): the
  // broker's way to a peer. INVALID_ARGUMENT for neither.
  virtual StatusOr<std::shared_ptr<PeerSession>> Peer(const std::string& name_or_address) = 0;
  // The channel broker; null where there is none (test fakes).
  virtual Broker* broker() { return nullptr; }
  // The pool targets the client libraries follow; null where there are none.
  virtual PoolRegistry* pool() { return nullptr; }
  // The local API's per-client limits (limits.*); none where unset (fakes).
  virtual ClientLimits client_limits() const { return {}; }
  // Where the quotas count their refusals; null where nothing counts (fakes).
  virtual QuotaRefusals* quota_refusals() { return nullptr; }
  // The local API's clients connected now.
  virtual LocalClientCount LocalClients() { return {}; }
  // The group whose members are admins besides root (daemon.admin_group);
  // none when unset or unknown.
  virtual std::optional<gid_t> admin_group() const { return std::nullopt; }
  // The cluster's members (cluster.endpoints); FAILED_PRECONDITION when
  // membership is off.
  virtual StatusOr<ClusterView> ClusterMembers() const {
    return Status::FailedPrecondition("cluster membership is off (cluster.endpoints is empty)");
  }
  // The host's topology as last read (rails.topology_xml or sysfs); null
  // where there is none (test fakes).
  virtual std::shared_ptr<const Topology> topology() const { return nullptr; }
  // Plans the rails of process pid (0: explained, not recorded) over the
  // devices rails may use now (daemon_rails.cc).
  virtual StatusOr<RailPlan> PlanRails(const RailRequest& request, pid_t pid, uid_t uid) {
    return Status::Unavailable("this daemon plans no rails");
  }
  virtual RailState Rails() { return {}; }
};

// The local API server as the daemon sees it (implemented with gRPC): it
// serves each connection the listener accepts (ConnectionSink).
class ApiServer : public ConnectionSink {
 public:
  // Waits for open calls to finish up to deadline, then cancels the rest.
  virtual void Shutdown(std::chrono::milliseconds deadline) = 0;
};

// Makes the local API server: rpc/ implements it (GrpcApiServerFactory).
class ApiServerFactory {
 public:
  virtual ~ApiServerFactory() = default;
  virtual StatusOr<std::unique_ptr<ApiServer>> Make(DaemonCore* core) const = 0;
};

// The metrics endpoint (metrics.enabled): an HTTP listener serving the
// daemon's series at /metrics, read from core at each scrape. metrics/
// implements it (prometheus-cpp). Stops listening when destroyed.
class MetricsServer {
 public:
  virtual ~MetricsServer() = default;
  virtual int port() const = 0;  // the port it listens on
};
class MetricsServerFactory {
 public:
  virtual ~MetricsServerFactory() = default;
  // UNAVAILABLE naming the address when it cannot listen there.
  virtual StatusOr<std::unique_ptr<MetricsServer>> Make(DaemonCore* core,
                                                        const std::string& address,
                                                        int port) const = 0;
};

// The edge the binary builds and passes in, so that the core stays
// gRPC-free: the local API server, the peer transport (the peer listener
// and the connector for sessions; null: no peer sessions), the built-in
// echo service (started when echo.enabled; null: none), the cluster's
// store (null: no cluster membership) and the metrics endpoint (null:
// none). Not owned; each outlives Run.
struct DaemonEdge {
  const ApiServerFactory* local = nullptr;
  const PeerTransportFactory* peer = nullptr;
  const BuiltinServiceFactory* echo = nullptr;
  const MembershipStoreFactory* cluster = nullptr;
  const MetricsServerFactory* metrics = nullptr;
};

struct DaemonOptions {
  std::string config_path;
  std::optional<std::string> socket_override;  // --socket
  const EnvLookup* env = &ProcessEnv();        // not owned
  std::string sysfs_root = "/sys";
};

// The daemon: owns every part and wires them. It is the broker's network
// (broker_network.h) over the peer hub and the path policy.
class Daemon : public DaemonCore,
               private BrokerNetwork,
               private InventoryListener,
               private ServicesObserver,
               private MembersObserver {
 public:
  Daemon(DaemonOptions options, Config config);
  ~Daemon() override;

  // Serves until SIGTERM/SIGINT; returns the process exit code.
  int Run(const DaemonEdge& edge);

  DaemonStatus GetStatus() const override;
  EventBus& events() override { return events_; }
  std::shared_ptr<const Inventory> inventory() const override { return monitor_.current(); }
  StatusOr<std::map<std::string, uint64_t>> PortCounters(const std::string& device,
                                                         int port) const override;
  StatusOr<PathDecision> ResolvePath(const PathRequest& request) const override;
  std::vector<PeerSnapshot> ListPeers() const override { return peers_.List(); }
  StatusOr<std::shared_ptr<PeerSession>> Peer(const std::string& name_or_address) override {
    return peers_.Peer(name_or_address);
  }
  Broker* broker() override { return broker_.get(); }
  PoolRegistry* pool() override { return &pool_; }
  QuotaRefusals* quota_refusals() override { return &refusals_; }
  LocalClientCount LocalClients() override {
    return listener_ ? listener_->Clients() : LocalClientCount{};
  }
  ClientLimits client_limits() const override;            // daemon_broker.cc
  std::optional<gid_t> admin_group() const override;      // daemon_broker.cc
  StatusOr<ClusterView> ClusterMembers() const override;  // daemon_cluster.cc
  // The devices rails may use in topology now (daemon_rails.cc).
  std::vector<std::string> UsableRailDevices(const Topology& topology) const;
  std::shared_ptr<const Topology> topology() const override { return topology_.current(); }
  StatusOr<RailPlan> PlanRails(const RailRequest& request, pid_t pid, uid_t uid) override;
  RailState Rails() override;

 private:
  Status StartServing(const DaemonEdge& edge);
  Status StartMetrics(const DaemonEdge& edge);
  void MainLoop(int signal_fd);
  void Reload();
  void Stop(int signo);
  // InventoryListener: events, lost paths, the member record.
  void OnInventory(std::shared_ptr<const Inventory> inventory,
                   const std::vector<InventoryChange>& changes) override;
  std::shared_ptr<const Config> config() const;
  void UpdateEcho(const Config& config);
  void ApplyChannelSettings(const Config& config);  // limits and pool targets
  BrokerOptions MakeBrokerOptions();                // daemon_broker.cc
  void StartBroker();
  // BrokerNetwork (daemon_broker.cc).
  StatusOr<BrokerPeer> FindPeer(const std::string& name_or_address,
                                std::optional<uid_t> opener) override;
  ChannelRails RailsFor(const PathDecision& primary, pid_t pid) override;  // daemon_rails.cc
  StatusOr<BrokerPeer> AwaitPeer(const std::string& name_or_address,
                                 std::chrono::milliseconds timeout) override;
  StatusOr<std::shared_ptr<PeerLink>> LinkToInstance(const std::string& instance_id) override;
  Status SendEvent(const std::string& instance_id, const PeerEvent& event) override;
  // Cluster membership (daemon_cluster.cc): starts it when cluster.endpoints
  // is set; this daemon's record; puts it again after a change.
  Status StartCluster(const DaemonEdge& edge);
  MemberRecord SelfRecord() const;
  void UpdateClusterRecord();
  // ServicesObserver: the member record lists the services.
  void OnServicesChanged() override { UpdateClusterRecord(); }
  // MembersObserver: the other members are discovered peers.
  void OnMembers(const std::vector<MemberRecord>& members) override;

  DaemonOptions options_;
  std::string socket_path_;
  SystemdNotifier notifier_;
  EventBus events_;
  const std::chrono::steady_clock::time_point started_;
  QuotaRefusals refusals_;  // before every part that counts in it
  mutable std::mutex mu_;
  std::shared_ptr<const Config> config_;  // guarded by mu_
  uint64_t config_generation_ = 1;        // guarded by mu_
  // When config_ was read, and why the last reload was refused ("" when it
  // took); guarded by mu_.
  std::chrono::system_clock::time_point config_loaded_ = std::chrono::system_clock::now();
  std::string reload_error_;
  std::unique_ptr<class InstanceLock> lock_;
  std::unique_ptr<UnixListener> listener_;
  DeviceMonitor monitor_;
  TopologyKeeper topology_;  // read again when the devices or rails.topology_xml change
  RailPlanner rails_;
  std::unique_ptr<ApiServer> server_;
  PeerHub peers_;
  // Made in StartServing when cluster.endpoints is set; outlives broker_,
  // whose service registrations tell it of changes.
  std::unique_ptr<ClusterMembership> cluster_;
  // cluster_ once it runs, for the device monitor's and the registry's threads.
  std::atomic<ClusterMembership*> running_cluster_{nullptr};
  std::shared_ptr<const LeaseSealer> lease_sealer_;  // its key from the state dir
  std::unique_ptr<Broker> broker_;                   // made in StartServing
  // broker_ once it is made, for the device monitor's thread.
  std::atomic<Broker*> path_broker_{nullptr};
  PoolRegistry pool_;
  std::atomic<int64_t> admin_gid_{-1};    // daemon.admin_group resolved; -1: none
  std::unique_ptr<BuiltinStarter> echo_;  // main thread only; made in Run
  // Last, so that it goes first: its scrapes read every part above.
  std::unique_ptr<MetricsServer> metrics_;
};

// Blocks the signals the daemon handles in the calling thread (and so in
// every thread it later starts).
void BlockDaemonSignals();

}  // namespace rdmad

#endif  // RDMAD_DAEMON_LIFECYCLE_DAEMON_H_
