// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Core peer values to and from the wire messages of peer.proto, and a peer
// snapshot to the local API's Peer message. FromProto never fails: a
// peer's oversized numbers are clamped so that ValidateHello /
// ValidateSessionOpen reject them by name.
//
// Thread safety: stateless functions.

#ifndef RDMAD_DAEMON_RPC_PEER_CONVERT_H_
#define RDMAD_DAEMON_RPC_PEER_CONVERT_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <vector>

#include "daemon/broker/broker.h"
#include "daemon/peers/peer_identity.h"
#include "daemon/peers/peer_protocol.h"
#include "daemon/peers/peer_session.h"
#include "rdmad/v1/peer.pb.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmad {

void ToProto(const PeerHello& hello, v1::HelloInfo* out);
PeerHello FromProto(const v1::HelloInfo& in);

void ToProto(const SessionOpen& open, v1::SessionRequest* out);
SessionOpen FromProto(const v1::SessionRequest& in);

void ToProto(const PeerEvent& event, v1::PeerEvent* out);
PeerEvent FromProto(const v1::PeerEvent& in);

// What the connection's certificate says the peer is (its SAN entries);
// not TLS for a plaintext connection or without an auth context.
PeerIdentity IdentityOf(const std::shared_ptr<const grpc::AuthContext>& auth);

// For ListPeers on the local API.
void ToProto(const PeerSnapshot& peer, v1::Peer* out);
// The established channels in the broker's table that are with peer (the
// same daemon instance, or the session's name): ListPeers' channels.
int EstablishedChannelsWith(const PeerSnapshot& peer, const std::vector<ChannelRecord>& channels);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_PEER_CONVERT_H_
