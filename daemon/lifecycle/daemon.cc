// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/lifecycle/daemon.h"

#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "daemon/discovery/sysfs_reader.h"
#include "daemon/discovery/verbs_probe.h"
#include "daemon/lifecycle/instance_lock.h"
#include "daemon/lifecycle/logging.h"
#include "daemon/lifecycle/unix_listener.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

// daemon.state_dir; else systemd's StateDirectory= (the first of
// $STATE_DIRECTORY); else the socket's directory.
std::string StateDirectory(const Config& cfg, const std::string& socket_path) {
  if (!cfg.daemon.state_dir.empty()) return cfg.daemon.state_dir;
  if (const char* systemd = std::getenv("STATE_DIRECTORY"); systemd != nullptr && *systemd) {
    std::string first = systemd;
    return first.substr(0, first.find(':'));
  }
  return socket_path.substr(0, socket_path.rfind('/'));
}

constexpr std::chrono::milliseconds kShutdownDeadline{3000};

sigset_t DaemonSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

std::string SocketPath(const DaemonOptions& options, const Config& config) {
  return options.socket_override.value_or(config.daemon.socket);
}

EventKind EventKindFor(InventoryChange::Kind kind) {
  switch (kind) {
    case InventoryChange::Kind::kDeviceAdded: return EventKind::kDeviceAdded;
    case InventoryChange::Kind::kDeviceRemoved: return EventKind::kDeviceRemoved;
    case InventoryChange::Kind::kPortStateChanged: return EventKind::kPortStateChanged;
    case InventoryChange::Kind::kGidAdded: return EventKind::kGidAdded;
    case InventoryChange::Kind::kGidRemoved: return EventKind::kGidRemoved;
  }
  return EventKind::kDeviceAdded;
}

void LogInventory(const Inventory& inventory) {
  if (inventory.devices.empty()) {
    spdlog::info("no RDMA devices; channels will use TCP");
    return;
  }
  for (const DeviceInfo& d : inventory.devices) {
    for (const PortInfo& p : d.ports) {
      spdlog::info(
          "device {} port {}: {} {}, {}, active MTU {} (max {}), netdev {} (MTU {}), {} GIDs",
          d.name, p.port, d.vendor, TransportName(p.transport), p.state_name, p.active_mtu,
          p.max_mtu, p.netdev.empty() ? "-" : p.netdev, p.netdev_mtu, p.gids.size());
    }
  }
}

}  // namespace

void BlockDaemonSignals() {
  sigset_t set = DaemonSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

Daemon::Daemon(DaemonOptions options, Config config)
    : options_(std::move(options)),
      socket_path_(SocketPath(options_, config)),
      started_(std::chrono::steady_clock::now()),
      config_(std::make_shared<const Config>(std::move(config))),
      // A test's fixture tree has no verbs devices behind it.
      monitor_(options_.sysfs_root, static_cast<InventoryListener*>(this),
               /*use_verbs=*/options_.sysfs_root == "/sys"),
      peers_(monitor_) {}

Daemon::~Daemon() = default;

std::shared_ptr<const Config> Daemon::config() const {
  std::lock_guard lock(mu_);
  return config_;
}

DaemonStatus Daemon::GetStatus() const {
  DaemonStatus s;
  s.version = RDMAD_VERSION;
  s.pid = getpid();
  s.uptime_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  {
    std::lock_guard lock(mu_);
    s.config_file = config_->source;
    s.config_generation = config_generation_;
    s.config_loaded_unix_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(config_loaded_.time_since_epoch())
            .count();
    s.config_reload_error = reload_error_;
  }
  s.peer_count = uint32_t(peers_.session_count());
  s.socket_path = socket_path_;
  if (broker_) {
    s.service_count = uint32_t(broker_->services().service_count());
    s.channel_count = uint32_t(broker_->Channels().size());
  }
  for (const DeviceInfo& d : inventory()->devices) {
    ++s.device_count;
    for (const PortInfo& p : d.ports) {
      ++s.port_count;
      s.active_port_count += p.state == 4 ? 1 : 0;  // IBV_PORT_ACTIVE
    }
  }
  s.connections_accepted = listener_ ? listener_->accepted() : 0;
  s.event_subscribers = uint32_t(events_.subscriber_count());
  if (ClusterMembership* cluster = running_cluster_.load(); cluster != nullptr) {
    ClusterHealth h = cluster->health();
    s.cluster = h.reachable ? "reachable" : "unreachable";
    s.cluster_error = h.last_error;
    s.cluster_members = uint32_t(h.members);
  }
  return s;
}

Status Daemon::StartServing(const DaemonEdge& edge) {
  auto owns_directory = EnsureRuntimeDir(socket_path_);
  if (!owns_directory.ok()) return owns_directory.status();
  auto lock = InstanceLock::Acquire(socket_path_);
  if (!lock.ok()) return lock.status();
  lock_ = std::move(lock).value();

  const Config& cfg = *config();
  UnixListenerOptions listen;
  listen.path = socket_path_;
  listen.mode = cfg.daemon.socket_mode;
  listen.group = cfg.daemon.socket_group;
  listen.allowed_uids = cfg.daemon.allowed_uids;
  listen.owns_directory = *owns_directory;
  listen.max_connections_per_uid = cfg.limits.max_connections_per_uid;
  listen.refusals = &refusals_;
  auto listener = UnixListener::Bind(listen);
  if (!listener.ok()) return listener.status();
  listener_ = std::move(listener).value();

  std::string state_dir = StateDirectory(cfg, socket_path_);
  auto sealer = LeaseSealer::FromDirectory(state_dir);
  if (!sealer.ok()) return sealer.status();
  lease_sealer_ = std::make_shared<const LeaseSealer>(std::move(sealer).value());
  spdlog::info("channel leases sealed with the key in {}/lease.key", state_dir);

  RDMAD_RETURN_IF_ERROR(monitor_.Start());
  LogInventory(*inventory());
  // A topology that cannot be read is logged; channels do without rails.
  topology_.Update(cfg.rails.topology_xml, *inventory()).IgnoreError();

  auto server = edge.local->Make(this);
  if (!server.ok()) return server.status();
  server_ = std::move(server).value();
  StartBroker();
  RDMAD_RETURN_IF_ERROR(peers_.Start(cfg, edge.peer));
  // The local API once the broker and the peer sessions run: a request
  // that came in between (the socket is bound above) found no [[peers]]
  // yet and said NOT_FOUND "unknown peer" for a configured one. Clients
  // that connected meanwhile wait in the socket's backlog.
  listener_->Start(server_.get());
  spdlog::info("serving the local API on {} (mode {:04o}, group {})", socket_path_,
               cfg.daemon.socket_mode,
               cfg.daemon.socket_group.empty() ? "unchanged" : cfg.daemon.socket_group);
  RDMAD_RETURN_IF_ERROR(StartCluster(edge));
  return StartMetrics(edge);
}

Status Daemon::StartMetrics(const DaemonEdge& edge) {
  const Config::Metrics& m = config()->metrics;
  if (!m.enabled) return Status::Ok();
  if (edge.metrics == nullptr) {
    spdlog::warn("metrics.enabled, but this build serves no metrics");
    return Status::Ok();
  }
  auto server = edge.metrics->Make(this, m.address, m.port);
  if (!server.ok()) return server.status();
  metrics_ = std::move(server).value();
  spdlog::info("serving Prometheus metrics on http://{}:{}/metrics",
               m.address.find(':') != std::string::npos ? "[" + m.address + "]" : m.address,
               metrics_->port());
  return Status::Ok();
}

int Daemon::Run(const DaemonEdge& edge) {
  sigset_t set = DaemonSignals();
  int signal_fd = signalfd(-1, &set, SFD_CLOEXEC);
  if (signal_fd < 0) {
    spdlog::critical("signalfd: {}", std::strerror(errno));
    return 1;
  }
  Status started = StartServing(edge);
  if (!started.ok()) {
    spdlog::critical("cannot start: {}", started.message());
    notifier_.Status("failed: " + started.message());
    if (listener_) listener_->Stop();
    close(signal_fd);
    return 1;
  }
  echo_ = std::make_unique<BuiltinStarter>("echo service", edge.echo, socket_path_);
  UpdateEcho(*config());
  notifier_.Ready();
  notifier_.Status("serving on " + socket_path_);
  MainLoop(signal_fd);
  close(signal_fd);
  return 0;
}

// Memory freed by the RPC runtime's threads stays with malloc's per-thread
// arenas; a long-running daemon whose peers come and go would keep growing
// its RSS with it. The main loop gives it back to the system this often.
constexpr std::chrono::seconds kTrimPeriod{10};

void Daemon::MainLoop(int signal_fd) {
  auto period = notifier_.watchdog_period();
  if (period) spdlog::info("systemd watchdog: pinging every {} ms", period->count() / 1000);
  auto wake_every = std::chrono::duration_cast<std::chrono::milliseconds>(
      period ? std::min<std::chrono::microseconds>(*period, kTrimPeriod) : kTrimPeriod);
  int timeout_ms = int(std::max<int64_t>(1, wake_every.count()));
  auto next_ping = std::chrono::steady_clock::now();
  auto next_trim = std::chrono::steady_clock::now() + kTrimPeriod;
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    if (period && now >= next_ping) {
      notifier_.Watchdog();
      next_ping = now + *period;
    }
    if (now >= next_trim) {
      malloc_trim(0);
      next_trim = now + kTrimPeriod;
    }
    echo_->Poll(now);
    int wait_ms = timeout_ms;
    if (auto retry = echo_->next_try()) {  // wake for the echo service's next try
      auto until = std::chrono::duration_cast<std::chrono::milliseconds>(*retry - now).count();
      wait_ms = int(std::clamp<int64_t>(until, 1, timeout_ms));
    }
    pollfd pfd{signal_fd, POLLIN, 0};
    int n = poll(&pfd, 1, wait_ms);
    if (n < 0 && errno != EINTR) {
      spdlog::error("main loop: poll: {}", std::strerror(errno));
    }
    if (n <= 0) continue;
    signalfd_siginfo info{};
    if (read(signal_fd, &info, sizeof(info)) != sizeof(info)) continue;
    if (info.ssi_signo == SIGHUP) {
      Reload();
    } else {
      Stop(int(info.ssi_signo));
      return;
    }
  }
}

void Daemon::OnInventory(std::shared_ptr<const Inventory> current,
                         const std::vector<InventoryChange>& changes) {
  const Inventory& inventory = *current;
  for (const InventoryChange& c : changes) {
    events_.Publish(EventKindFor(c.kind), c.message, c.device, c.port);
  }
  if (Broker* broker = path_broker_.load(); broker != nullptr) {
    FailLostPaths(*broker, inventory, changes);
  }
  if (inventory.devices.empty()) spdlog::info("no RDMA devices; channels will use TCP");
  topology_.Update(config()->rails.topology_xml, inventory).IgnoreError();
  UpdateClusterRecord();
}

// Starts or stops the echo service to match echo.enabled. A service that
// cannot start (say another application holds rdmad.echo) is logged; the
// daemon serves on without it. One that found the daemon's own socket too
// slow to answer (a loaded host) is tried again from the main loop.
void Daemon::UpdateEcho(const Config& config) {
  echo_->Update(config.echo.enabled, "echo.enabled = false", std::chrono::steady_clock::now());
}

StatusOr<std::map<std::string, uint64_t>> Daemon::PortCounters(const std::string& device,
                                                               int port) const {
  auto inv = inventory();
  const DeviceInfo* d = inv->Find(device);
  if (d == nullptr) return Status::NotFound("no RDMA device named \"" + device + "\"");
  bool has_port = std::any_of(d->ports.begin(), d->ports.end(),
                              [port](const PortInfo& p) { return p.port == port; });
  if (!has_port) {
    return Status::NotFound(device + " has no port " + std::to_string(port));
  }
  return ReadPortCounters(options_.sysfs_root, device, port);
}

StatusOr<PathDecision> Daemon::ResolvePath(const PathRequest& request) const {
  auto path = rdmad::ResolvePath(*inventory(), *config(), request, &KernelSourceAddresses());
  if (!path.ok()) {
    spdlog::info("path to {}: {}", request.peer_ip, path.status().message());
    return path;
  }
  for (const std::string& reason : path->reasons) {
    spdlog::info("path to {}: {}", request.peer_ip, reason);
  }
  return path;
}

void Daemon::Reload() {
  notifier_.Reloading();
  spdlog::info("SIGHUP: reloading {}", options_.config_path);
  auto loaded = LoadConfig(options_.config_path, *options_.env);
  Status valid = loaded.ok() ? ValidateConfig(*loaded) : loaded.status();
  if (!valid.ok()) {
    spdlog::error("reload failed, keeping the running configuration:\n{}", valid.message());
    {
      std::lock_guard lock(mu_);
      reload_error_ = valid.message();
    }
    events_.Publish(EventKind::kConfigReloadFailed, valid.message());
    notifier_.Status("reload failed; running with the previous configuration");
    notifier_.Ready();
    return;
  }
  const Config& next = *loaded;
  if (SocketPath(options_, next) != socket_path_) {
    spdlog::warn("daemon.socket changed to {}; it takes effect on restart", next.daemon.socket);
  }
  Status level = SetLogLevel(next.daemon.log_level);
  if (!level.ok()) spdlog::warn("{}", level.message());
  uint64_t generation;
  std::shared_ptr<const Config> previous;
  {
    std::lock_guard lock(mu_);
    previous = std::exchange(config_, std::make_shared<const Config>(std::move(loaded).value()));
    generation = ++config_generation_;
    config_loaded_ = std::chrono::system_clock::now();
    reload_error_.clear();
  }
  peers_.Reload(*previous, *config());
  if (previous->cluster != config()->cluster) {
    spdlog::warn("cluster.* changed; the cluster membership takes it on restart");
  }
  if (previous->metrics != config()->metrics) {
    spdlog::warn("metrics.* changed; the metrics endpoint takes it on restart");
  }
  ApplyChannelSettings(*config());
  UpdateEcho(*config());
  topology_.Update(config()->rails.topology_xml, *inventory()).IgnoreError();
  spdlog::info("configuration reloaded (generation {})", generation);
  events_.Publish(EventKind::kConfigReloaded, "configuration reloaded from " +
                                                  options_.config_path + " (generation " +
                                                  std::to_string(generation) + ")");
  notifier_.Status("serving on " + socket_path_);
  notifier_.Ready();
}

void Daemon::Stop(int signo) {
  spdlog::info("{}: stopping", strsignal(signo));
  notifier_.Stopping();
  notifier_.Status("stopping");
  events_.Publish(EventKind::kDaemonStopping,
                  std::string("rdmad is stopping (SIG") + sigabbrev_np(signo) + ")");
  events_.Close();
  metrics_.reset();          // no scrape reads what stops below
  if (echo_) echo_->Stop();  // first: it is a client of the server below
  listener_->Stop();
  if (broker_) broker_->Shutdown();                 // holders and peers told while sessions are up
  if (cluster_) cluster_->Stop(/*withdraw=*/true);  // leave the cluster at once
  peers_.Stop();
  server_->Shutdown(kShutdownDeadline);
  monitor_.Stop();
  spdlog::info("stopped");
}

}  // namespace rdmad
