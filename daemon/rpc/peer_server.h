// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The peer listener: a gRPC server of its own on TCP
// daemon.peer_address:daemon.peer_port serving RdmadPeer (PeerService),
// with mutual TLS when daemon.tls_cert/tls_key/tls_ca are set (a peer must
// present a certificate that chains to tls_ca) and plaintext otherwise
// (ValidateConfig allows that only on loopback or with a peer key).
// Keepalive: clients ping every second without calls and without data, so
// the server accepts pings 500 ms apart (gRPC's default policy answers
// them with GOAWAY "too_many_pings") and pings idle clients itself.
//
// Thread safety: the factory is called once; PeerServer as in peer_link.h.

#ifndef RDMAD_DAEMON_RPC_PEER_SERVER_H_
#define RDMAD_DAEMON_RPC_PEER_SERVER_H_

#include "daemon/peers/peer_inbound.h"
#include "daemon/peers/peer_link.h"

namespace rdmad {

// The PeerTransportFactory the rdmad binary uses: the listener (serving
// inbound) and a connector with the same TLS material.
StatusOr<PeerTransport> MakeGrpcPeerTransport(const PeerTransportOptions& options,
                                              PeerInbound* inbound);

class GrpcPeerTransportFactory final : public PeerTransportFactory {
 public:
  StatusOr<PeerTransport> Make(const PeerTransportOptions& options,
                               PeerInbound* inbound) const override {
    return MakeGrpcPeerTransport(options, inbound);
  }
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_PEER_SERVER_H_
