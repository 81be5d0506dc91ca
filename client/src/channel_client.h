// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The client library's channel setup over the local API: the initiator's
// PlanChannel + Connect (channel_client.cc), one channel or a batch of
// them, and a Listener over the Listen stream (listener.cc: a reader
// thread queues IncomingChannel events for Accept/Reject). Both roles open
// each channel's HoldChannel lifeline as soon as the daemons have
// exchanged the endpoints, and release it if the data path then fails.
//
// Thread safety: see rdmad/client.h (Listener).

#ifndef RDMAD_CLIENT_SRC_CHANNEL_CLIENT_H_
#define RDMAD_CLIENT_SRC_CHANNEL_CLIENT_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "client/src/traffic_reporter.h"
#include "rdmad/client.h"
#include "rdmad/v1/rdmad.grpc.pb.h"

namespace rdmad::internal {

// The daemon's local API as the library's calls reach it.
struct DaemonRpc {
  std::shared_ptr<grpc::Channel> channel;
  // The one stub on channel that the client's calls share (a stub is
  // thread-safe; making one registers every method of the service again,
  // which hundreds of channels opened at once would pay per channel).
  std::shared_ptr<v1::Rdmad::Stub> stub;
  // How long a channel whose lifeline broke waits for the next rdmad
  // (ClientOptions::reattach_timeout).
  std::chrono::milliseconds reattach_timeout{10000};
  // Where the channels' traffic goes (null: not reported).
  std::shared_ptr<TrafficReporter> reporter;
};

StatusOr<std::unique_ptr<Listener>> ListenOn(DaemonRpc rpc, const std::string& service);

// Every channel returned is held (held_channel.h): its lifeline to rdmad
// stays open while it lives.
StatusOr<std::unique_ptr<Channel>> ConnectTo(const DaemonRpc& rpc, const std::string& peer,
                                             const std::string& service,
                                             const ConnectOptions& options);
// count (1..kMaxChannelBatch) channels with one PlanChannel and one
// Connect, all or nothing: when one cannot finish, the others are closed.
StatusOr<std::vector<std::unique_ptr<Channel>>> ConnectBatch(const DaemonRpc& rpc,
                                                             const std::string& peer,
                                                             const std::string& service,
                                                             size_t count,
                                                             const ConnectOptions& options);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_CHANNEL_CLIENT_H_
