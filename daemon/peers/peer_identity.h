// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PeerIdentity: what a peer daemon's TLS certificate says it is, its
// subject alternative names (DNS names and IP addresses), as the RPC edge
// reads them from the connection. With mutual TLS a daemon speaks only for
// the node its certificate names (docs/security.md): the node name it
// claims (in Hello, Session and OpenChannel, and through its instance id in
// CloseChannel and ReclaimChannel) must be one of them, so that one host's
// certificate, though signed by the same CA, cannot speak for another.
// Without TLS (loopback, or a shared peer key) there is no node name to
// check: the caller was admitted as one of this deployment's daemons.
//
// Thread safety: a plain value.

#ifndef RDMAD_DAEMON_PEERS_PEER_IDENTITY_H_
#define RDMAD_DAEMON_PEERS_PEER_IDENTITY_H_

#include <string>
#include <vector>

#include "rdmad/status.h"

namespace rdmad {

struct PeerIdentity {
  bool tls = false;                // the connection is authenticated by a certificate
  std::vector<std::string> names;  // its SAN entries
  // The call's socket is this daemon process's own (checked at the RPC
  // edge only where it matters: a call naming this daemon's instance).
  bool this_process = false;

  // OK without TLS or when claimed is one of the names (DNS names compare
  // without case); PERMISSION_DENIED naming both otherwise.
  Status Covers(const std::string& claimed) const;
  // "a, 192.0.2.1" (or "no subject alternative names").
  std::string Describe() const;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_PEER_IDENTITY_H_
