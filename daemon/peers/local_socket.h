// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Who is on the other end of a TCP connection to the peer port, when that
// end is on this host: the kernel's socket table (sock_diag netlink, as
// ss(8) reads it) gives the connecting socket's owner uid and inode, and
// /proc/self/fd whether it is this very process's. Without TLS or a peer
// key, the peer port serves only this uid's processes on this host
// (docs/security.md), and a peer call is this daemon's own only when its
// socket is this process's.
//
// Thread safety: plain functions; each opens its own netlink socket.

#ifndef RDMAD_DAEMON_PEERS_LOCAL_SOCKET_H_
#define RDMAD_DAEMON_PEERS_LOCAL_SOCKET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "rdmad/status.h"

namespace rdmad {

// The transport's peer as gRPC names it: "ipv4:127.0.0.1:5000",
// "ipv6:[::1]:5000" (the brackets possibly as %5B and %5D).
struct TransportPeer {
  std::string ip;  // numeric; an IPv4-mapped IPv6 address as IPv4
  uint16_t port = 0;
};
StatusOr<TransportPeer> ParseTransportPeer(const std::string& from);

struct SocketOwner {
  uint32_t uid = 0;
  uint64_t inode = 0;
};

// The socket of this host (this network namespace) connected from peer to
// server_port on one of server_ips: its owner; NOT_FOUND when there is
// none (the peer is another host, or another namespace). The first
// server_ip that matches wins; a local connection's source is usually its
// destination, so peer.ip is tried as well.
StatusOr<SocketOwner> FindLocalTcpSocket(const TransportPeer& peer,
                                         const std::vector<std::string>& server_ips,
                                         uint16_t server_port);

// Whether one of this process's file descriptors is the socket inode.
bool ThisProcessHasSocket(uint64_t inode);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_LOCAL_SOCKET_H_
