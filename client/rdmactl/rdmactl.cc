// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The command table, argument parsing and dispatch. The verbs are in
// commands_*.cc, their output in format*.cc and json.cc.

#include "client/rdmactl/rdmactl.h"

#include "client/rdmactl/command.h"

namespace rdmactl {
namespace {

int CmdVersion(Context& ctx);
int CmdHelp(Context& ctx);

constexpr Command kCommands[] = {
    {"status", "show the daemon's state: version, uptime, config, devices, counts", CmdStatus},
    {"devices", "[DEV] list RDMA devices and their ports; DEV: one device in detail", CmdDevices},
    {"gids", "[DEV] list the GID tables: index, GID, type, netdev, IP", CmdGids},
    {"route", "PEER-IP [--peer-mtu N] show the path rdmad plans to a peer, and why", CmdRoute},
    {"counters", "DEV PORT show a port's counters", CmdCounters},
    {"peers", "list the peer daemons: state, RTT, remote version, last error", CmdPeers},
    {"channels",
     "list the channels: peer, service, transport, state, owner (your own; all for root)",
     CmdChannels},
    {"close", "CHANNEL-ID close a channel (your own; any for root and daemon.admin_group)",
     CmdClose},
    {"pools", "list the pools: each following client's targets, warm and in-use channels",
     CmdPools},
    {"cluster", "list the cluster's members in etcd: peer address, ports, services", CmdCluster},
    {"services", "[NAME]: which cluster members host which services (or NAME)", CmdServices},
    {"connect", "PEER [--tcp] open a channel to PEER's echo service; show how it was set up",
     CmdConnect},
    {"ping",
     "PEER [-c N] [-s SIZE] [-i MS] [-W MS] [-q] [--tcp] timed round trips to PEER's "
     "echo service",
     CmdPing},
    {"bench",
     "PEER [--test lat|bw|write|read|kv|idle|connect] [--size N | --sizes LIST] "
     "[--iters N | --duration S] [--channels N] [--depth N] [--blocks N] [--tcp] "
     "perftest-style benchmarks against PEER's echo service",
     CmdBench},
    {"events", "[--count N] follow daemon events (config, devices, ports, GIDs)", CmdEvents},
    {"version", "print rdmactl's version", CmdVersion},
    {"help", "list the commands", CmdHelp},
};

int CmdVersion(Context& ctx) {
  if (ctx.globals.json) {
    PrintJson(ctx, Json{{"rdmactl", RDMAD_VERSION}});
  } else {
    std::fprintf(ctx.out, "rdmactl %s\n", RDMAD_VERSION);
  }
  return kExitOk;
}

int CmdHelp(Context& ctx) {
  std::fprintf(ctx.out,
               "Usage: rdmactl [--socket PATH] [--json] COMMAND [ARGS]\n\n"
               "Commands:\n");
  for (const Command& c : kCommands) std::fprintf(ctx.out, "  %-10s %s\n", c.name, c.help);
  std::fprintf(ctx.out,
               "\nGlobal options (before or after the command):\n"
               "  --socket PATH  rdmad's socket (default $RDMAD_SOCKET or "
               "/run/rdmad/rdmad.sock)\n"
               "  --json         machine-readable output\n"
               "\nExit codes: 0 ok, 1 failure (route: no RDMA path; ping: a reply lost), "
               "2 rdmad not reachable, 64 usage\n");
  return kExitOk;
}

// Pulls the global options out of argv wherever they stand.
bool ParseInvocation(const std::vector<std::string>& argv, Invocation* inv, std::FILE* err) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--json") {
      inv->globals.json = true;
    } else if (a == "--socket" || a.rfind("--socket=", 0) == 0) {
      if (a == "--socket" && i + 1 >= argv.size()) {
        std::fprintf(err, "rdmactl: --socket needs a path\n");
        return false;
      }
      inv->globals.socket = a == "--socket" ? argv[++i] : a.substr(9);
    } else if (a == "--help" || a == "-h") {
      inv->verb = "help";
    } else if (inv->verb.empty()) {
      inv->verb = a;
    } else {
      inv->args.push_back(a);
    }
  }
  if (inv->verb.empty()) inv->verb = "help";
  return true;
}

}  // namespace

int Run(const std::vector<std::string>& argv, std::FILE* out, std::FILE* err) {
  Invocation inv;
  if (!ParseInvocation(argv, &inv, err)) return kExitUsage;
  Context ctx{inv.globals, inv.args, out, err};
  for (const Command& c : kCommands) {
    if (inv.verb == c.name) return c.fn(ctx);
  }
  std::fprintf(err, "rdmactl: unknown command \"%s\"; try 'rdmactl help'\n", inv.verb.c_str());
  return kExitUsage;
}

}  // namespace rdmactl
