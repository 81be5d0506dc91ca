// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/peer_hub.h"

#include <unistd.h>

#include "daemon/config/config_checks.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

constexpr std::chrono::milliseconds kListenerShutdown{1000};

bool HasTls(const Config::Daemon& d) { return !d.tls_cert.empty(); }

void LogSecurity(const Config::Daemon& d, const std::string& target) {
  if (HasTls(d)) {
    spdlog::info("peers: listening on {} with mutual TLS (cert {}, CA {})", target, d.tls_cert,
                 d.tls_ca);
  } else if (!d.peer_key_file.empty()) {
    spdlog::info("peers: listening on {} without TLS; every call proves the peer key in {}", target,
                 d.peer_key_file);
  } else {
    spdlog::info(
        "peers: listening on {} without TLS or a peer key: only this host's processes of uid "
        "{} may call",
        target, geteuid());
  }
}

}  // namespace

PeerHub::PeerHub(const DeviceMonitor& devices)
    : devices_(devices), instance_id_(NewInstanceId()), inbound_(*this) {}

PeerHub::~PeerHub() { Stop(); }

PeerHello PeerHub::LocalHello() const {
  return BuildLocalHello(*devices_.current(), instance_id_, node_name_);
}

Status PeerHub::Start(const Config& config, const PeerTransportFactory* factory) {
  if (factory == nullptr) {
    spdlog::info("peers: no transport in this build; peer sessions are off");
    return Status::Ok();
  }
  const Config::Daemon& d = config.daemon;
  node_name_ = NodeName(d.node_name);
  PeerTransportOptions options;
  options.listen_address = d.peer_address;
  options.listen_port = d.peer_port;
  options.tls_cert = d.tls_cert;
  options.tls_key = d.tls_key;
  options.tls_ca = d.tls_ca;
  options.peer_key_file = d.peer_key_file;
  options.node_name = node_name_;
  auto transport = factory->Make(options, &inbound_);
  if (!transport.ok()) return transport.status();
  server_ = std::move(transport->server);
  LogSecurity(d, ListenTarget(d.peer_address, server_->port()));
  inbound_.Start();
  PeerSessionOptions session_options;
  session_options.breaker.failures = d.peer_breaker_failures;
  session_options.breaker.open_for = std::chrono::seconds(d.peer_breaker_open_s);
  // A peer that is still starting is dialled every few hundred ms at first:
  // its failures must span a while before the circuit opens.
  session_options.breaker.min_span = std::chrono::seconds(10);
  sessions_ =
      std::make_unique<PeerSessions>(std::move(transport->connector),
                                     static_cast<const LocalHelloSource&>(*this), session_options);
  sessions_->SetUser(user_);
  sessions_->SetIdleClose(std::chrono::seconds(d.peer_idle_close_s));
  sessions_->SetOnDemandQuota(config.limits.max_peer_sessions_per_uid);
  sessions_->SetConfiguredPeers(config.peers);
  sessions_->Start();
  running_ = sessions_.get();
  // A peer that says Hello is alive: our session to it stops waiting.
  inbound_.SetAliveListener(this);
  spdlog::info("peers: node {}, protocol {}, instance {}, {} configured", node_name_,
               FormatProtocol(LocalProtocolVersion()), instance_id_, config.peers.size());
  return Status::Ok();
}

// A peer that says Hello is alive: our session to it stops waiting.
void PeerHub::OnPeerAlive(const PeerHello& remote, const std::string& peer_ip) {
  if (PeerSessions* sessions = running_.load(); sessions != nullptr) {
    sessions->PeerAlive(remote.host_name, peer_ip,
                        "its Hello to this daemon, instance " + remote.instance_id);
  }
}

void PeerHub::SetDiscoveredPeers(const std::vector<PeerConfig>& peers) {
  if (PeerSessions* sessions = running_.load(); sessions != nullptr) {
    sessions->SetDiscoveredPeers(peers);
  }
}

void PeerHub::Reload(const Config& previous, const Config& next) {
  const Config::Daemon& a = previous.daemon;
  const Config::Daemon& b = next.daemon;
  if (a.peer_address != b.peer_address || a.peer_port != b.peer_port ||
      a.peer_key_file != b.peer_key_file || a.tls_cert != b.tls_cert || a.tls_key != b.tls_key ||
      a.tls_ca != b.tls_ca || a.node_name != b.node_name) {
    spdlog::warn(
        "daemon.peer_address, peer_port, peer_key_file, node_name and tls_* changed; the "
        "peer listener, its authentication and the node name keep their old settings until "
        "rdmad restarts");
  }
  if (a.peer_breaker_failures != b.peer_breaker_failures ||
      a.peer_breaker_open_s != b.peer_breaker_open_s) {
    spdlog::warn(
        "daemon.peer_breaker_failures and peer_breaker_open_s changed; peer sessions "
        "keep their old circuit breaker settings until rdmad restarts");
  }
  if (sessions_) {
    sessions_->SetIdleClose(std::chrono::seconds(b.peer_idle_close_s));
    sessions_->SetOnDemandQuota(next.limits.max_peer_sessions_per_uid);
    sessions_->SetConfiguredPeers(next.peers);
  }
}

void PeerHub::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (sessions_) sessions_->Stop();  // ours: cancel streams and calls
  inbound_.Close();                  // theirs: finish every stream
  if (server_) server_->Shutdown(kListenerShutdown);
}

std::vector<PeerSnapshot> PeerHub::List() const {
  PeerSessions* sessions = running_;
  return sessions ? sessions->List() : std::vector<PeerSnapshot>{};
}

bool PeerHub::Knows(const std::string& name_or_address) const {
  PeerSessions* sessions = running_;
  return sessions && sessions->Knows(name_or_address);
}

StatusOr<std::shared_ptr<PeerSession>> PeerHub::Peer(const std::string& name_or_address,
                                                     std::optional<uid_t> opener) {
  PeerSessions* sessions = running_;
  if (!sessions) return Status::FailedPrecondition("peer sessions are not running");
  return sessions->Peer(name_or_address, opener);
}

size_t PeerHub::session_count() const {
  PeerSessions* sessions = running_;
  return sessions ? sessions->size() : 0;
}

}  // namespace rdmad
