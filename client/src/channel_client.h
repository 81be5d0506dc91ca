// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The client library's channel setup over the local API: the initiator's
// PlanChannel + Connect, and a Listener over the Listen stream (a reader
// thread queues IncomingChannel events for Accept/Reject). Both roles open
// the channel's HoldChannel lifeline as soon as the daemons have exchanged
// the endpoints, and release it if the data path then fails.
//
// Thread safety: see rdmad/client.h (Listener).

#ifndef RDMAD_CLIENT_SRC_CHANNEL_CLIENT_H_
#define RDMAD_CLIENT_SRC_CHANNEL_CLIENT_H_

#include <memory>
#include <string>

#include "rdmad/client.h"
#include "rdmad/v1/rdmad.grpc.pb.h"

namespace rdmad::internal {

StatusOr<std::unique_ptr<Listener>> ListenOn(std::shared_ptr<grpc::Channel> channel,
                                             const std::string& service);

// Every channel returned is held (held_channel.h): its lifeline to rdmad
// stays open while it lives.
StatusOr<std::unique_ptr<Channel>> ConnectTo(std::shared_ptr<grpc::Channel> rpc,
                                             const std::string& peer, const std::string& service,
                                             const ConnectOptions& options);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_CHANNEL_CLIENT_H_
