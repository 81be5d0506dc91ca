// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PeerService implements the rdmad.v1.RdmadPeer gRPC service (what other
// daemons call) with the callback API. Every call passes the PeerGate
// first (UNAUTHENTICATED otherwise); handlers then only validate, call
// PeerInbound and fill the reply; a Session stream is a write reactor that
// PeerInbound's InboundStream drives. A peer's OpenChannel waits for the
// listener on a worker of a pool (a thread made per call cost every batch a
// thread's start and its stack's first pages): at most kMaxOpening at
// once, counted before the task is queued (RESOURCE_EXHAUSTED beyond).
//
// Thread safety: gRPC calls handlers concurrently; the mutable state is the
// atomic count of OpenChannel calls in flight and the (thread safe) pool.

#ifndef RDMAD_DAEMON_RPC_PEER_SERVICE_H_
#define RDMAD_DAEMON_RPC_PEER_SERVICE_H_

#include <atomic>

#include "daemon/clients/worker_pool.h"
#include "daemon/peers/peer_inbound.h"
#include "daemon/rpc/arena_messages.h"
#include "daemon/rpc/peer_gate.h"
#include "rdmad/v1/peer.grpc.pb.h"

namespace rdmad {

class PeerService final : public v1::RdmadPeer::CallbackService {
 public:
  static constexpr int kMaxOpening = 256;

  PeerService(PeerInbound* inbound, const PeerGate* gate) : inbound_(inbound), gate_(gate) {
    SetMessageAllocatorFor_OpenChannel(&open_messages_);
  }

  grpc::ServerUnaryReactor* Hello(grpc::CallbackServerContext* context,
                                  const v1::HelloRequest* request,
                                  v1::HelloResponse* response) override;

  grpc::ServerWriteReactor<v1::PeerEvent>* Session(grpc::CallbackServerContext* context,
                                                   const v1::SessionRequest* request) override;

  // Validates, then asks the broker on a thread of its own (the listener's
  // answer may take seconds) and finishes with the acceptor's endpoint.
  grpc::ServerUnaryReactor* OpenChannel(grpc::CallbackServerContext* context,
                                        const v1::OpenChannelRequest* request,
                                        v1::OpenChannelResponse* response) override;

  // Hands a peer's close to the broker (which never blocks).
  grpc::ServerUnaryReactor* CloseChannel(grpc::CallbackServerContext* context,
                                         const v1::CloseChannelRequest* request,
                                         v1::CloseChannelResponse* response) override;
  grpc::ServerUnaryReactor* ReclaimChannel(grpc::CallbackServerContext* context,
                                           const v1::ReclaimChannelRequest* request,
                                           v1::ReclaimChannelResponse* response) override;

 private:
  // The caller's identity (the gate's answer), marked this_process when
  // the call names this daemon's own instance and comes from its process.
  StatusOr<PeerIdentity> Admit(grpc::CallbackServerContext* context, std::string_view method,
                               const std::string& instance_named) const;

  PeerInbound* inbound_;
  const PeerGate* gate_;
  // A batch's endpoints, both ways: on an arena per call.
  ArenaMessages<v1::OpenChannelRequest, v1::OpenChannelResponse> open_messages_;
  std::atomic<int> opening_{0};  // OpenChannel calls waiting for the broker
  // Last: destroyed (its workers joined) first. Every worker is idle by
  // then: the server's Shutdown waits for each call's Finish.
  WorkerPool opens_{{.name = "peer OpenChannel calls",
                     .max_workers = size_t(kMaxOpening),
                     .max_queued = size_t(kMaxOpening)}};
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_PEER_SERVICE_H_
