// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ChannelHandshake: how a channel comes to be, one or a batch at a time.
// The initiator's daemon plans it (a channel id and the path policy's
// answer for the peer's address, or TCP and why) and relays the
// initiator's endpoints to the peer daemon in one OpenChannel (Connect);
// the acceptor's daemon offers them to the service's listener in one offer
// (OnOpenChannel) with its own plan back to the initiator's address. Every
// endpoint relayed is validated first (INVALID_ARGUMENT naming the field).
// A batch is all or nothing on both sides: when one of its channels fails
// or ends during the handshake, every other one ends too. The Broker's
// methods of the same names document the answers.
//
// Thread safety: every method may be called from any thread. Connect and
// OnOpenChannel block until the peer or the listener answers (bounded by
// BrokerOptions' timeouts); the table's lock is never held meanwhile.

#ifndef RDMAD_DAEMON_BROKER_CHANNEL_HANDSHAKE_H_
#define RDMAD_DAEMON_BROKER_CHANNEL_HANDSHAKE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/broker/broker_options.h"
#include "daemon/broker/channel_table.h"
#include "daemon/broker/channel_teller.h"
#include "daemon/broker/service_registry.h"
#include "daemon/clients/caller.h"
#include "daemon/peers/channel_endpoint.h"
#include "daemon/peers/peer_inbound.h"
#include "rdmad/status.h"

namespace rdmad {

class ChannelHandshake {
 public:
  // All not owned; they outlive the handshake.
  ChannelHandshake(const BrokerOptions* options, ChannelTable* table, ServiceRegistry* services,
                   const ChannelTeller* teller)
      : options_(*options), table_(*table), services_(*services), teller_(*teller) {}

  StatusOr<PlannedChannel> PlanChannel(const Caller& caller, const std::string& peer,
                                       const std::string& service, bool force_tcp, size_t count);
  StatusOr<ChannelEndpoints> Connect(const Caller& caller,
                                     const std::vector<ChannelOpening>& channels);
  StatusOr<ChannelEndpoints> OnOpenChannel(const OpenChannelCall& call, const std::string& peer_ip);

 private:
  using Entry = ChannelTable::Entry;

  // RDMA if a path resolves and no TCP reason is given (nor forced by the
  // config); TCP with the reason otherwise.
  // pid: the process whose rail plan orders the further rails (0: none).
  ChannelPlan Plan(const std::string& peer_ip, const std::string& tcp_reason, pid_t pid = 0) const;
  // Where the acceptor's TCP fallback listens for the initiator at peer_ip.
  std::string TcpBindHost(const std::string& peer_ip) const;
  // Fails the channel (a handshake that could not start), as the teller tells.
  void Fail(uint64_t channel_id, const std::string& reason);
  // The table locked. Connect's first step: the channels, all the caller's
  // and planned with one peer and service, move to opening; their call.
  StatusOr<OpenChannelCall> OpenLocked(const Caller& caller,
                                       const std::vector<ChannelOpening>& channels,
                                       std::string* peer_key);
  // Connect's tail: the answer checked against what happened meanwhile;
  // mine: this side's endpoints (for the rails' record).
  StatusOr<ChannelEndpoints> Conclude(const std::vector<uint64_t>& ids,
                                      const std::vector<ChannelOpening>& mine,
                                      const std::string& peer_key,
                                      StatusOr<ChannelEndpoints> reply);
  // The table locked. OnOpenChannel's tail: the channels as the listener
  // answered, beside the initiator's endpoints.
  std::vector<ChannelEnding> AnsweredLocked(const std::vector<uint64_t>& ids,
                                            const std::vector<ChannelOpening>& initiators,
                                            StatusOr<ChannelEndpoints>* answer);

  const BrokerOptions& options_;
  ChannelTable& table_;
  ServiceRegistry& services_;
  const ChannelTeller& teller_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_CHANNEL_HANDSHAKE_H_
