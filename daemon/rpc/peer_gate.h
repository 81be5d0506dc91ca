// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PeerGate: who may call the peer port, decided for every call before a
// handler runs (docs/security.md, "Peer daemons"):
//   * mutual TLS: the caller's certificate, verified by gRPC against
//     daemon.tls_ca, is its identity (the names it may speak for);
//   * else a peer key (daemon.peer_key_file): the call's proof
//     (PeerKey::Verify, in the kPeerAuthMetadata metadata) for its method;
//   * else only processes of this daemon's uid on this host, found in
//     the kernel's socket table (local_socket.h); another uid or another
//     host is UNAUTHENTICATED.
// It also tells whether a call's socket is this very process's (this
// daemon calling itself), which a call naming this daemon's own instance
// must be.
//
// Thread safety: immutable after construction; Admit and FromThisProcess
// may be called from any thread.

#ifndef RDMAD_DAEMON_RPC_PEER_GATE_H_
#define RDMAD_DAEMON_RPC_PEER_GATE_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "daemon/peers/peer_identity.h"
#include "daemon/peers/peer_key.h"
#include "rdmad/status.h"

namespace rdmad {

class PeerGate {
 public:
  struct Options {
    bool tls = false;
    std::string listen_address;    // daemon.peer_address
    std::shared_ptr<PeerKey> key;  // daemon.peer_key_file, if any
    std::string node;              // this daemon's node name (signs answers)
  };
  explicit PeerGate(Options options) : options_(std::move(options)) {}

  // The port the server listens on, once known (0 before).
  void SetPort(int port) { port_ = port; }

  // The caller's identity for a call of method ("OpenChannel"), or
  // UNAUTHENTICATED saying what it lacks.
  StatusOr<PeerIdentity> Admit(grpc::CallbackServerContext* context, std::string_view method) const;
  // Whether the call's socket is one of this process's.
  bool FromThisProcess(grpc::CallbackServerContext* context) const;
  // With a peer key: signs this daemon's Hello answer to asking_instance
  // (in the answer's initial metadata), so that the caller knows which
  // node of the deployment answered (PeerKeyAuth). Nothing without a key.
  void SignHelloAnswer(grpc::CallbackServerContext* context,
                       std::string_view asking_instance) const;

 private:
  Options options_;
  std::atomic<int> port_{0};
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_PEER_GATE_H_
