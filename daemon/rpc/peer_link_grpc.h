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
#include <string>
#include <string_view>

#include "daemon/peers/peer_key.h"
#include "daemon/peers/peer_link.h"

namespace rdmad {

// The metadata that carries a call's peer key proof (PeerKey::Sign).
inline constexpr char kPeerAuthMetadata[] = "rdmad-peer-auth";

// What a Hello answer's proof is signed for: the answer to the instance
// that asked (the server signs it as its node; a replayed or forged answer
// fails PeerKey::Verify).
std::string HelloAnswerMethod(std::string_view asking_instance);

// Without TLS, the deployment's peer key and this node's name: every call
// is signed (PeerKey::Sign, in kPeerAuthMetadata), and a Hello answer counts
// only when it carries a proof of the node its host name says.
struct PeerKeyAuth {
  std::shared_ptr<PeerKey> key;  // null: no peer key
  std::string node;
};

// Links that use creds (grpc::SslCredentials for mutual TLS, else
// insecure) and auth when it has a key.
std::shared_ptr<PeerConnector> MakeGrpcPeerConnector(
    std::shared_ptr<grpc::ChannelCredentials> creds, PeerKeyAuth auth = {});

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_PEER_LINK_GRPC_H_
