// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The values two rdmad daemons exchange (proto/rdmad/v1/peer.proto, without
// protobuf): the protocol version, what a daemon says in Hello, the events
// of a session stream, and the rules both ends apply to them: a different
// major version is not spoken, and a peer's values are checked before use
// (a peer's garbage is an error, never a crash).
//
// Thread safety: values and stateless functions, safe from any thread.

#ifndef RDMAD_DAEMON_PEERS_PEER_PROTOCOL_H_
#define RDMAD_DAEMON_PEERS_PEER_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/discovery/inventory.h"
#include "rdmad/status.h"

namespace rdmad {

inline constexpr int kDefaultPeerPort = 7581;

struct ProtocolVersion {
  uint32_t major = 0;
  uint32_t minor = 0;
  friend bool operator==(const ProtocolVersion&, const ProtocolVersion&) = default;
};

// "2.0".
std::string FormatProtocol(ProtocolVersion version);

// The protocol this daemon speaks: 2.0. The major version can be replaced by
// the test-only variable RDMAD_TEST_PROTOCOL_MAJOR (read here, once, and
// nowhere else) so that the integration tests can run a "future" daemon.
ProtocolVersion LocalProtocolVersion();

struct PeerPort {
  std::string device;
  int port = 0;
  int active_mtu = 0;
  std::string transport;  // TransportName()
  friend bool operator==(const PeerPort&, const PeerPort&) = default;
};

// What a daemon says about itself in Hello.
struct PeerHello {
  ProtocolVersion protocol;
  std::string host_name;
  std::string daemon_version;
  std::string instance_id;              // 32 hex digits, new per start
  std::vector<std::string> transports;  // of the active ports, each once
  std::vector<PeerPort> ports;          // the active ports
  friend bool operator==(const PeerHello&, const PeerHello&) = default;
};

// Where this daemon's own Hello comes from, asked each time one is sent or
// answered: PeerHub builds it from the inventory and its identity; tests
// and fuzzers give a fixed one. Called from the peers' threads; must not
// block.
class LocalHelloSource {
 public:
  virtual ~LocalHelloSource() = default;
  virtual PeerHello LocalHello() const = 0;
};

// A Hello that does not change (tests, fuzzers).
class FixedHello final : public LocalHelloSource {
 public:
  explicit FixedHello(PeerHello hello) : hello_(std::move(hello)) {}
  PeerHello LocalHello() const override { return hello_; }

 private:
  const PeerHello hello_;
};

// An event of a session stream (PeerEvent in peer.proto).
struct PeerEvent {
  // kUnknown: an event of a newer minor version; it shows the peer is
  // alive and is otherwise ignored.
  enum class Kind { kHeartbeat, kChannelClosed, kUnknown };
  Kind kind = Kind::kHeartbeat;
  uint64_t sequence = 0;
  int64_t unix_time_ms = 0;  // heartbeat: the sender's clock
  uint64_t channel_id = 0;   // channel-closed
  std::string reason;        // channel-closed
};

// What the caller of Session asks for (SessionRequest).
struct SessionOpen {
  ProtocolVersion protocol;
  std::string host_name;
  std::string instance_id;
  int heartbeat_interval_ms = 1000;
};

// Limits on what a peer may send.
inline constexpr size_t kMaxHostName = 255;
inline constexpr size_t kMaxShortText = 64;  // versions, devices, transports
inline constexpr size_t kMaxPeerPorts = 1024;
inline constexpr int kMinHeartbeatMs = 100;
inline constexpr int kMaxHeartbeatMs = 60000;

// INVALID_ARGUMENT naming the field (e.g. "self.host_name: ...") when a
// peer's Hello is malformed: no protocol version, an empty or oversized host
// name, a bad instance id, a port outside 1..255, an MTU that is not an IB
// MTU, too many ports. field is the prefix used in the message.
Status ValidateHello(const PeerHello& hello, std::string_view field);

// INVALID_ARGUMENT for a malformed SessionRequest.
Status ValidateSessionOpen(const SessionOpen& open);

// OK when local and remote share the major version; otherwise
// FAILED_PRECONDITION "peer NAME speaks rdmad protocol 2.0, this daemon 1.0".
Status CheckProtocol(ProtocolVersion local, ProtocolVersion remote, std::string_view peer);

// This daemon's Hello: LocalProtocolVersion(), its node name, RDMAD_VERSION,
// instance_id, and the inventory's active ports.
PeerHello BuildLocalHello(const Inventory& inventory, const std::string& instance_id,
                          const std::string& node_name);

// 32 random hex digits.
std::string NewInstanceId();

// The host name (gethostname), "localhost" if it cannot be read.
std::string LocalHostName();
// The name this daemon gives itself (daemon.node_name): configured, else
// the host name.
std::string NodeName(const std::string& configured);

// "HOST:PORT" for a [[peers]] address: the port defaults to 7581 and a bare
// IPv6 literal gets brackets ("::1" -> "[::1]:7581"). INVALID_ARGUMENT for
// anything CheckPeerAddress rejects.
StatusOr<std::string> NormalizePeerAddress(std::string_view address);

// The host part of "HOST:PORT" or "[V6]:PORT" ("[::1]:7581" -> "::1");
// a bare host or IPv6 literal as it is.
std::string HostOfAddress(std::string_view address);

// "HOST:PORT" for a listen address and port ("[::1]:7581" for IPv6).
std::string ListenTarget(std::string_view host, int port);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_PEER_PROTOCOL_H_
