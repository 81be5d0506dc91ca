// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl route PEER-IP [--peer-mtu N]: the path rdmad plans to a peer.

#include "client/rdmactl/command.h"
#include "client/rdmactl/format.h"
#include "client/rdmactl/json.h"

namespace rdmactl {
namespace {

constexpr char kRouteUsage[] = "PEER-IP [--peer-mtu N]";

struct RouteArgs {
  std::string peer;
  uint32_t peer_mtu = 0;
};

// The peer address is not checked here: the daemon owns what an address
// is, and answers INVALID_ARGUMENT.
bool ParseRouteArgs(Context& ctx, RouteArgs* out) {
  for (size_t i = 0; i < ctx.args.size(); ++i) {
    const std::string& a = ctx.args[i];
    if (a == "--peer-mtu" || a.rfind("--peer-mtu=", 0) == 0) {
      std::string value =
          a == "--peer-mtu" ? (i + 1 < ctx.args.size() ? ctx.args[++i] : "") : a.substr(11);
      uint64_t mtu = 0;
      if (!ParseUint(value, UINT32_MAX, &mtu)) {
        UsageError(ctx, "route", "--peer-mtu needs a number of bytes (256..4096)");
        return false;
      }
      out->peer_mtu = uint32_t(mtu);
    } else if (out->peer.empty() && (a.empty() || a[0] != '-')) {
      out->peer = a;
    } else {
      UsageError(ctx, "route", "unexpected \"" + a + "\"; usage: rdmactl route " + kRouteUsage);
      return false;
    }
  }
  if (out->peer.empty()) {
    UsageError(ctx, "route", std::string("usage: rdmactl route ") + kRouteUsage);
    return false;
  }
  return true;
}

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

}  // namespace

int CmdRoute(Context& ctx) {
  RouteArgs args;
  if (!ParseRouteArgs(ctx, &args)) return kExitUsage;
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto path = client->ResolvePath(args.peer, args.peer_mtu);
  if (!path.ok()) {
    if (path.status().code() == rdmad::StatusCode::kFailedPrecondition) {
      return ReportTcp(ctx, args.peer, path.status());
    }
    return ReportError(ctx, path.status());
  }
  if (ctx.globals.json) {
    PrintJson(ctx, PathJson(args.peer, *path));
  } else {
    PrintText(ctx, FormatPath(args.peer, *path));
  }
  return kExitOk;
}

}  // namespace rdmactl
