// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PeerHub is everything daemon-to-daemon that the Daemon owns: the peer
// listener (made by the transport factory the binary passes in, gRPC),
// the streams other daemons keep open to this one (PeerInbound), and this
// daemon's sessions to its peers (PeerSessions). It starts after the local
// API, follows [[peers]] on reload and stops within about 1.5 s.
//
// Thread safety: Start, Reload and Stop are called from the daemon's main
// thread; List, Peer and session_count from any thread.

#ifndef RDMAD_DAEMON_PEERS_PEER_HUB_H_
#define RDMAD_DAEMON_PEERS_PEER_HUB_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/discovery/device_monitor.h"
#include "daemon/discovery/inventory.h"
#include "daemon/peers/peer_inbound.h"
#include "daemon/peers/peer_link.h"
#include "daemon/peers/peer_sessions.h"
#include "rdmad/status.h"

namespace rdmad {

// PeerHub is also this daemon's Hello (LocalHelloSource) for its inbound
// side and its sessions.
class PeerHub final : private LocalHelloSource, private PeerAliveListener {
 public:
  // devices: what Hello says of this host's ports; must outlive the hub.
  explicit PeerHub(const DeviceMonitor& devices);
  ~PeerHub();  // Stop()

  // The sessions' user (not owned; it outlives the sessions); set before
  // Start.
  void SetSessionUser(SessionUser* user) { user_ = user; }

  // Starts listening (daemon.peer_address:peer_port, TLS per daemon.tls_*)
  // and opens a session per [[peers]] entry. A null factory disables peers
  // (logged). Errors (port in use, unreadable TLS files) stop the daemon.
  Status Start(const Config& config, const PeerTransportFactory* factory);

  // Follows [[peers]]; listener settings only take effect on restart.
  void Reload(const Config& previous, const Config& next);

  // The cluster's members as peers (PeerSessions::SetDiscoveredPeers).
  void SetDiscoveredPeers(const std::vector<PeerConfig>& peers);

  // Closes the sessions, the inbound streams, then the listener.
  void Stop();

  std::vector<PeerSnapshot> List() const;
  bool Knows(const std::string& name_or_address) const;  // PeerSessions::Knows
  StatusOr<std::shared_ptr<PeerSession>> Peer(const std::string& name_or_address,
                                              std::optional<uid_t> opener = std::nullopt);
  size_t session_count() const;
  const std::string& instance_id() const { return instance_id_; }
  // The serving side (the broker sets its OpenChannel handler here).
  PeerInbound& inbound() { return inbound_; }

 private:
  PeerHello LocalHello() const override;
  void OnPeerAlive(const PeerHello& remote, const std::string& peer_ip) override;

  const DeviceMonitor& devices_;
  const std::string instance_id_;
  std::string node_name_;  // set once by Start, before the server serves
  PeerInbound inbound_;
  std::unique_ptr<PeerServer> server_;
  std::unique_ptr<PeerSessions> sessions_;       // set once by Start
  std::atomic<PeerSessions*> running_{nullptr};  // sessions_, for readers
  SessionUser* user_ = nullptr;                  // set before Start
  bool stopped_ = false;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_PEER_HUB_H_
