// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl route PEER [--peer-mtu N]: the path rdmad plans to a peer, named
// or by IP.

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include "client/rdmactl/command.h"
#include "client/rdmactl/format.h"
#include "client/rdmactl/json.h"

namespace rdmactl {
namespace {

bool IsIp(const std::string& text) {
  unsigned char buf[16];
  return inet_pton(AF_INET, text.c_str(), buf) == 1 || inet_pton(AF_INET6, text.c_str(), buf) == 1;
}

}  // namespace

rdmad::StatusOr<std::string> PeerIp(rdmad::Client& client, const std::string& peer) {
  if (IsIp(peer)) return peer;
  std::string host = peer;
  auto peers = client.ListPeers();
  if (peers.ok()) {
    for (const rdmad::PeerInfo& p : *peers) {
      if (p.name != peer) continue;
      host = p.address.substr(0, p.address.rfind(':'));
      if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
      if (IsIp(host)) return host;
    }
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0 || found == nullptr) {
    return rdmad::Status::NotFound("no peer named \"" + peer + "\" (rdmactl peers), and " + host +
                                   " does not resolve: " + gai_strerror(rc));
  }
  char ip[INET6_ADDRSTRLEN] = {};
  const void* addr =
      found->ai_family == AF_INET
          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr)
          : &reinterpret_cast<sockaddr_in6*>(found->ai_addr)->sin6_addr;
  inet_ntop(found->ai_family, addr, ip, sizeof(ip));
  freeaddrinfo(found);
  return std::string(ip);
}

namespace {

// No RDMA path: the channels to the peer fall back to TCP.
int ReportTcp(Context& ctx, const std::string& peer, const rdmad::Status& status) {
  std::string reason = DaemonMessage(status, "ResolvePath");
  if (ctx.globals.json) {
    PrintJson(ctx, TcpFallbackJson(peer, reason));
  } else {
    std::fprintf(ctx.out, "no RDMA path to %s: %s\nchannels to %s will use TCP\n", peer.c_str(),
                 reason.c_str(), peer.c_str());
  }
  return kExitFailure;
}

int Route(Context& ctx, const std::string& peer, uint32_t peer_mtu) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto ip = PeerIp(*client, peer);
  if (!ip.ok()) return ReportError(ctx, ip.status());
  const std::string shown = *ip == peer ? peer : peer + " (" + *ip + ")";
  auto path = client->ResolvePath(*ip, peer_mtu);
  if (!path.ok()) {
    if (path.status().code() == rdmad::StatusCode::kFailedPrecondition) {
      return ReportTcp(ctx, shown, path.status());
    }
    return ReportError(ctx, path.status());
  }
  if (ctx.globals.json) {
    PrintJson(ctx, PathJson(*ip, *path));
  } else {
    PrintText(ctx, FormatPath(shown, *path));
  }
  return kExitOk;
}

}  // namespace

void DeclareRoute(CLI::App& verb, Context& ctx) {
  struct Args {
    std::string peer;
    uint32_t peer_mtu = 0;
  };
  auto a = std::make_shared<Args>();
  verb.add_option("PEER", a->peer, "a peer's or cluster member's name, or an IP")->required();
  verb.add_option("--peer-mtu", a->peer_mtu, "the peer port's active MTU, if known (bytes)")
      ->check(CLI::Range(256, 4096));
  RunsWith(verb, ctx, [&ctx, a] { return Route(ctx, a->peer, a->peer_mtu); });
}

}  // namespace rdmactl
