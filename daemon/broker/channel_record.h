// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A channel as the broker's table shows it (ChannelRecord: `rdmactl
// channels`, the local API's ListChannels) and as the lease an
// application keeps says it (ChannelLease: what a restarted daemon needs
// to take the channel back).
//
// Thread safety: values.

#ifndef RDMAD_DAEMON_BROKER_CHANNEL_RECORD_H_
#define RDMAD_DAEMON_BROKER_CHANNEL_RECORD_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/traffic.h"
#include "daemon/broker/channel_machine.h"
#include "daemon/clients/caller.h"
#include "daemon/peers/channel_endpoint.h"
#include "rdmad/status.h"

namespace rdmad {

// What a channel's record and its lease share: the channel as this daemon
// set it up with its peer. Listed once; a record and a lease copy it whole.
struct ChannelFacts {
  uint64_t channel_id = 0;
  std::string peer;
  std::string service;
  bool initiator = true;                            // this daemon's application connected
  EndpointKind transport = EndpointKind::kUnknown;  // until the endpoints are known
  std::chrono::system_clock::time_point created;
  std::string peer_instance;  // the peer daemon's instance id ("" before Connect)
  // This side's RDMA path as planned ("" and 0 for a TCP plan).
  std::string device;
  int port = 0;
  std::string gid;
};

// One rail of an RDMA channel (docs/topology.md, "Rails in a channel"):
// its devices from the endpoints, and what the library last reported.
struct ChannelRailRecord {
  std::string device;
  std::string peer_device;
  uint64_t bytes_written = 0;
  uint64_t bytes_read = 0;
  bool up = true;
  std::string reason;  // why it is out
};

// The rails of an RDMA channel from both ends' endpoints, this side's
// device first: the first rail, then each acceptor rail with the initiator
// rail it pairs with. None unless both are RDMA.
std::vector<ChannelRailRecord> RailsOf(const ChannelEndpoint& initiator,
                                       const ChannelEndpoint& acceptor, bool initiator_side);

struct ChannelRecord : ChannelFacts {
  std::string reason;  // transport reason, or why it failed/closed
  ChannelState state = ChannelState::kPlanned;
  // The local client it belongs to (docs/security.md): the initiator's
  // application, or the acceptor's listener.
  uid_t owner_uid = kNoUid;
  pid_t owner_pid = 0;
  // A channel to this daemon itself has one entry for both sides: the
  // listener's uid owns its side too.
  uid_t self_acceptor_uid = kNoUid;
  std::vector<ChannelRailRecord> rails;  // RDMA, once established
  // What the application reported it moved (rdmad.v1.ReportTraffic); of a
  // channel to this daemon itself, the initiating process's.
  TrafficTotals traffic;
};

// Whether caller is the accepting process of a channel to this daemon
// itself: the record is the initiating process's, and so are the accounts
// (rails, traffic) it keeps.
inline bool IsSelfAcceptorSide(const ChannelRecord& r, const Caller& caller) {
  return r.initiator && r.self_acceptor_uid != kNoUid && caller.pid != r.owner_pid;
}

// What a daemon needs to take a channel back after it restarted (the
// ChannelLease message, opaque to the application that keeps it).
struct ChannelLease : ChannelFacts {
  std::string peer_key;       // what BrokerNetwork::FindPeer was given
  std::string reason;         // the transport reason
  std::string self_instance;  // the daemon's instance id when it was given
  uid_t owner_uid = kNoUid;   // only this uid may take the channel back
};

// A peer daemon's call about a channel it does not share (asked: "close",
// "take back"): logged, for an operator to see a peer that tries another's
// channels, and NOT_FOUND naming instance (the one the call claims) and host.
Status RefuseUnshared(const std::string& asker, std::string_view asked, uint64_t channel_id,
                      const std::string& instance, const std::string& host);

// "channel 0x.. (to PEER service S)" for the log.
std::string DescribeChannel(const ChannelRecord& r);

// A daemon's instance id: 32 lower-case hex digits.
bool IsInstanceId(const std::string& id);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_CHANNEL_RECORD_H_
