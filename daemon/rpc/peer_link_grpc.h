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

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "daemon/peers/peer_link.h"

namespace rdmad {

// The metadata that carries a call's peer key proof (PeerKey::Sign).
inline constexpr char kPeerAuthMetadata[] = "rdmad-peer-auth";

// The proof for a call of method ("Hello", "Session", "OpenChannel", ...);
// null: no peer key (nothing is sent).
using PeerCallSigner = std::function<std::string(std::string_view method)>;

// Links that use creds (grpc::SslCredentials for mutual TLS, else
// insecure), every call signed by sign when set.
std::shared_ptr<PeerConnector> MakeGrpcPeerConnector(
    std::shared_ptr<grpc::ChannelCredentials> creds, PeerCallSigner sign = nullptr);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_PEER_LINK_GRPC_H_
