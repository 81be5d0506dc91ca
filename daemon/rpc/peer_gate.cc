// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/peer_gate.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <bit>

#include "daemon/peers/local_socket.h"
#include "daemon/rpc/peer_convert.h"
#include "daemon/rpc/peer_link_grpc.h"

namespace rdmad {
namespace {

// Logged on the 1st, 2nd, 4th, 8th ... refusal: a caller cannot flood the log.
Status Refuse(const std::string& from, const std::string& why) {
  static std::atomic<uint64_t> refused{0};
  uint64_t n = ++refused;
  if (std::has_single_bit(n)) {
    spdlog::warn("peer port: refused a call from {}: {} ({} refused so far)", from, why, n);
  }
  return Status::Unauthenticated("rdmad peer port: " + why);
}

}  // namespace

StatusOr<PeerIdentity> PeerGate::Admit(grpc::CallbackServerContext* context,
                                       std::string_view method) const {
  PeerIdentity identity = IdentityOf(context->auth_context());
  if (options_.tls) {
    // gRPC verified the certificate chain before the call got here.
    if (!identity.tls) return Refuse(context->peer(), "no client certificate");
    return identity;
  }
  if (options_.key) {
    std::string_view proof;
    const auto& metadata = context->client_metadata();
    if (auto it = metadata.find(kPeerAuthMetadata); it != metadata.end()) {
      proof = std::string_view(it->second.data(), it->second.size());
    }
    auto node = options_.key->Verify(method, proof);
    if (!node.ok()) return Refuse(context->peer(), node.status().message());
    return identity;
  }
  std::string from = context->peer();
  auto peer = ParseTransportPeer(from);
  if (!peer.ok()) return Refuse(from, "not a TCP caller");
  auto owner = FindLocalTcpSocket(*peer, {options_.listen_address}, static_cast<uint16_t>(port_));
  if (!owner.ok()) {
    return Refuse(from, "without TLS or a peer key it serves only this host's processes of uid " +
                            std::to_string(geteuid()) + ", and " + peer->ip + ":" +
                            std::to_string(peer->port) + " is not one (" +
                            owner.status().message() +
                            "); set daemon.tls_* or daemon.peer_key_file on every daemon");
  }
  if (owner->uid != geteuid()) {
    return Refuse(from, "without TLS or a peer key it serves only processes of uid " +
                            std::to_string(geteuid()) + ", not uid " + std::to_string(owner->uid));
  }
  return identity;
}

bool PeerGate::FromThisProcess(grpc::CallbackServerContext* context) const {
  auto peer = ParseTransportPeer(context->peer());
  if (!peer.ok()) return false;
  auto owner = FindLocalTcpSocket(*peer, {options_.listen_address}, static_cast<uint16_t>(port_));
  return owner.ok() && ThisProcessHasSocket(owner->inode);
}

void PeerGate::SignHelloAnswer(grpc::CallbackServerContext* context,
                               std::string_view asking_instance) const {
  if (!options_.key) return;
  context->AddInitialMetadata(
      kPeerAuthMetadata, options_.key->Sign(HelloAnswerMethod(asking_instance), options_.node));
}

}  // namespace rdmad
