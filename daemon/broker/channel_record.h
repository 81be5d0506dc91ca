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

#include "daemon/broker/channel_machine.h"
#include "daemon/clients/caller.h"
#include "daemon/peers/channel_endpoint.h"

namespace rdmad {

struct ChannelRecord {
  uint64_t channel_id = 0;
  std::string peer;
  std::string service;
  bool initiator = true;                            // this daemon's application connected
  EndpointKind transport = EndpointKind::kUnknown;  // until the endpoints are known
  std::string reason;                               // transport reason, or why it failed/closed
  ChannelState state = ChannelState::kPlanned;
  std::chrono::system_clock::time_point created;
  std::string peer_instance;  // the peer daemon's instance id ("" before Connect)
  // This side's RDMA path as planned ("" and 0 for a TCP plan).
  std::string device;
  int port = 0;
  std::string gid;
  // The local client it belongs to (docs/security.md): the initiator's
  // application, or the acceptor's listener.
  uid_t owner_uid = kNoUid;
  pid_t owner_pid = 0;
  // A channel to this daemon itself has one entry for both sides: the
  // listener's uid owns its side too.
  uid_t self_acceptor_uid = kNoUid;
};

// What a daemon needs to take a channel back after it restarted (the
// ChannelLease message, opaque to the application that keeps it).
struct ChannelLease {
  uint64_t channel_id = 0;
  std::string peer;
  std::string peer_key;
  std::string service;
  bool initiator = true;
  EndpointKind transport = EndpointKind::kUnknown;
  std::string reason;
  std::string device;
  int port = 0;
  std::string gid;
  std::string peer_instance;
  std::string self_instance;  // the daemon's instance id when it was given
  std::chrono::system_clock::time_point created;
  uid_t owner_uid = kNoUid;  // only this uid may take the channel back
};

// "channel 0x.. (to PEER service S)" for the log.
std::string DescribeChannel(const ChannelRecord& r);

// A daemon's instance id: 32 lower-case hex digits.
bool IsInstanceId(const std::string& id);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_CHANNEL_RECORD_H_
