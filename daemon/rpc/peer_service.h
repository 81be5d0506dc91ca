// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PeerService implements the rdmad.v1.RdmadPeer gRPC service (what other
// daemons call) with the callback API. Handlers only validate, call
// PeerInbound and fill the reply; a Session stream is a write reactor that
// PeerInbound's InboundStream drives.
//
// Thread safety: gRPC calls handlers concurrently; the service holds no
// mutable state of its own.

#ifndef RDMAD_DAEMON_RPC_PEER_SERVICE_H_
#define RDMAD_DAEMON_RPC_PEER_SERVICE_H_

#include "daemon/peers/peer_inbound.h"
#include "rdmad/v1/peer.grpc.pb.h"

namespace rdmad {

class PeerService final : public v1::RdmadPeer::CallbackService {
 public:
  explicit PeerService(PeerInbound* inbound) : inbound_(inbound) {}

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
  PeerInbound* inbound_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_PEER_SERVICE_H_
