// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Broker: the daemon's side of channels (docs/channels.md). It plans a
// channel for the initiating application (PlanChannel: a channel id and the
// path policy's answer for the peer's address, or TCP and why), relays the
// initiator's endpoint to the peer daemon (Connect -> PeerLink::OpenChannel)
// and, on the accepting daemon, hands an OpenChannel to the service's
// listener (OnOpenChannel -> ServiceRegistry::Offer) with this side's own
// plan back to the initiator's address. Every endpoint it relays is
// validated first (INVALID_ARGUMENT naming the field). It keeps a table of
// channels for `rdmactl channels`.
//
// Thread safety: every method may be called from any thread. Connect and
// OnOpenChannel block until the peer or the listener answers (bounded by
// BrokerOptions' timeouts); call them off the RPC runtime's event threads.

#ifndef RDMAD_DAEMON_CORE_BROKER_H_
#define RDMAD_DAEMON_CORE_BROKER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/core/channel_endpoint.h"
#include "daemon/core/path_policy.h"
#include "daemon/core/peer_link.h"
#include "daemon/core/service_registry.h"
#include "rdmad/status.h"

namespace rdmad {

// A peer as the broker needs it: its name, the address dialled, and the
// link (or UNAVAILABLE with the session's last error).
struct BrokerPeer {
  std::string name;
  std::string address;  // HOST:PORT
  StatusOr<std::shared_ptr<PeerLink>> link = Status::Unavailable("no link");
};

struct BrokerOptions {
  std::string host_name;
  std::string instance_id;
  bool force_tcp = false;  // the config forces TCP for every channel
  std::chrono::milliseconds accept_deadline{10000};  // the listener's answer
  std::chrono::milliseconds open_timeout{12000};     // the peer's answer
  // Plans a path (DaemonCore::ResolvePath).
  std::function<StatusOr<PathDecision>(const PathRequest&)> resolve;
  // The peer for a [[peers]] name or address; NOT_FOUND for neither.
  std::function<StatusOr<BrokerPeer>(const std::string&)> find_peer;
};

struct PlannedChannel {
  uint64_t channel_id = 0;
  ChannelPlan plan;
  std::string peer_address;  // the peer's IP the plan was made for
};

enum class ChannelState { kPlanned, kOpening, kEstablished, kFailed, kClosed };
std::string_view ChannelStateName(ChannelState state);

struct ChannelRecord {
  uint64_t channel_id = 0;
  std::string peer;
  std::string service;
  bool initiator = true;    // this daemon's application connected
  std::string transport;    // "RDMA", "TCP", "" before the endpoints are known
  std::string reason;       // transport reason, or why it failed/closed
  ChannelState state = ChannelState::kPlanned;
  std::chrono::system_clock::time_point created;
};

// The host part of "HOST:PORT" / "[V6]:PORT".
std::string HostOfAddress(const std::string& address);

class Broker {
 public:
  explicit Broker(BrokerOptions options);

  ServiceRegistry& services() { return services_; }

  // The initiator's first call. NOT_FOUND unknown peer; INVALID_ARGUMENT
  // for a malformed service name.
  StatusOr<PlannedChannel> PlanChannel(const std::string& peer, const std::string& service,
                                       bool force_tcp);
  // The initiator's second call: relays endpoint to the peer and returns
  // the acceptor's. NOT_FOUND for an unknown channel id.
  StatusOr<ChannelEndpoint> Connect(uint64_t channel_id, const ChannelEndpoint& endpoint);
  // A peer's OpenChannel; peer_ip is the address the call came from.
  StatusOr<ChannelEndpoint> OnOpenChannel(const OpenChannelCall& call, const std::string& peer_ip);

  std::vector<ChannelRecord> Channels() const;

 private:
  // RDMA if a path resolves and no TCP reason is given (nor forced by the
  // config); TCP with the reason otherwise.
  ChannelPlan Plan(const std::string& peer_ip, const std::string& tcp_reason) const;
  void Update(uint64_t channel_id, ChannelState state, const std::string& transport,
              const std::string& reason);

  const BrokerOptions options_;
  ServiceRegistry services_;
  mutable std::mutex mu_;
  struct Planned {
    ChannelRecord record;
    std::string peer_key;  // what find_peer was given
  };
  std::map<uint64_t, Planned> channels_;  // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CORE_BROKER_H_
