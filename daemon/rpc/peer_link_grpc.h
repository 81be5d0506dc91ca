// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The client half of peer sessions with gRPC: a PeerConnector whose links
// are gRPC channels to other daemons' RdmadPeer service. Every link is a
// fresh channel with its own subchannel (no sharing, no proxy) and these
// keepalive settings, which detect a frozen peer in about 3 s on gRPC 1.51:
// a ping every 1 s, 2 s to answer, allowed without calls and without data.
// (The server side must accept that rate: see peer_server.cc.)
//
// Thread safety: as PeerConnector / PeerLink (peer_link.h).

#ifndef RDMAD_DAEMON_RPC_PEER_LINK_GRPC_H_
#define RDMAD_DAEMON_RPC_PEER_LINK_GRPC_H_

#include <grpcpp/security/credentials.h>

#include <memory>

#include "daemon/peers/peer_link.h"

namespace rdmad {

// Links that use creds (grpc::SslCredentials for mutual TLS, else insecure).
std::shared_ptr<PeerConnector> MakeGrpcPeerConnector(
    std::shared_ptr<grpc::ChannelCredentials> creds);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_PEER_LINK_GRPC_H_
