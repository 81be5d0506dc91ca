// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What both roles of a channel's handshake share (channel_client.cc: the
// initiator; listener.cc: the acceptor): the local API's status, the log
// line of an RDMA channel, and the tie between a channel whose data path
// came up (or failed to) and its lifeline.
//
// Thread safety: stateless functions.

#ifndef RDMAD_CLIENT_SRC_HANDSHAKE_H_
#define RDMAD_CLIENT_SRC_HANDSHAKE_H_

#include <grpcpp/grpcpp.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client/src/channel_client.h"
#include "client/src/held_channel.h"
#include "common/endpoint.h"
#include "rdmad/channel.h"
#include "rdmad/status.h"

namespace rdmad::internal {

using HandshakeClock = std::chrono::steady_clock;

Status StatusFromGrpc(const grpc::Status& status);
double MsSince(HandshakeClock::time_point start);
class CompletionGroup;

// The shared CQ of a batch of `count` channels planned over RDMA
// (completion_group.h); none for a lone channel, a plan without an RDMA
// path, or when the group cannot be made (logged: each channel then makes
// its own CQ).
std::shared_ptr<CompletionGroup> BatchGroup(const v1::ChannelPlan& plan, size_t count);

// A TCP acceptor's token: 32 random bytes.
std::array<uint8_t, 32> RandomToken();

// "channel 0x.. WHAT over RDMA: local ...; peer ...; path MTU N", at info
// (at debug for a batch's channels after its first: BatchLogged says how
// the batch came up).
void LogRdma(const char* what, uint64_t id, const RdmaEndpoint& local, const RdmaEndpoint& peer,
             bool first_of_batch = true);
// "N channels WHAT: R over RDMA, T over TCP" (info) for a batch of more
// than one, whose channels after the first logged at debug.
void BatchLogged(const char* what, const std::vector<std::unique_ptr<Channel>>& channels);

// Ties a channel whose data path came up (or failed to) to the lifeline
// opened when the daemons exchanged the endpoints. On a failure the daemon
// is told (the peer then hears that this side, role, could not finish).
StatusOr<std::unique_ptr<Channel>> Held(StatusOr<std::unique_ptr<Channel>> channel,
                                        std::unique_ptr<HoldStream> hold, const char* role);

// The end of a batch's handshake, once the daemon answered: opens each
// channel's lifeline (ids[i] with leases[i]), then finishes the channels
// in order with finish(i, lifeline). All or nothing: on the first failure
// the later lifelines are released and the channels made so far closed.
using FinishOne =
    std::function<StatusOr<std::unique_ptr<Channel>>(size_t, std::unique_ptr<HoldStream>)>;
StatusOr<std::vector<std::unique_ptr<Channel>>> HoldAndFinish(
    const DaemonRpc& rpc, const std::vector<uint64_t>& ids, const std::vector<std::string>& leases,
    const FinishOne& finish);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_HANDSHAKE_H_
