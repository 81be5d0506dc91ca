// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What every rdmactl verb shares: its context (globals, output streams,
// its exit code), the command table's row (CLI11 parses every verb's
// arguments), and the helpers that connect to the daemon and report
// failures with rdmactl's exit codes.
//
// Thread safety: none; rdmactl runs one verb on one thread.

#ifndef RDMAD_CLIENT_RDMACTL_COMMAND_H_
#define RDMAD_CLIENT_RDMACTL_COMMAND_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "client/rdmactl/json.h"
#include "client/rdmactl/rdmactl.h"
#include "rdmad/client.h"

namespace rdmactl {

struct Context {
  Globals globals;
  std::FILE* out;
  std::FILE* err;
  int exit_code = kExitOk;  // what the verb that ran returned
};

// Declares a verb on its subcommand: its arguments and options (CLI11
// parses and checks them) and the callback that runs it once parsed,
// setting ctx.exit_code.
using DeclareFn = void (*)(CLI::App& verb, Context& ctx);

// One row of the command table: {name, help, declare}. help is the one
// line `rdmactl help` shows; `rdmactl VERB --help` adds the arguments.
struct Command {
  const char* name;
  const char* help;
  DeclareFn declare;
};

// The table, in the order `rdmactl help` lists it (rdmactl.cc).
const std::vector<Command>& Commands();

// The verbs' declarations (commands_*.cc and rdmactl.cc).
void DeclareStatus(CLI::App& verb, Context& ctx);
void DeclareEvents(CLI::App& verb, Context& ctx);
void DeclareDevices(CLI::App& verb, Context& ctx);   // commands_devices.cc
void DeclareGids(CLI::App& verb, Context& ctx);      // commands_devices.cc
void DeclareCounters(CLI::App& verb, Context& ctx);  // commands_devices.cc
void DeclareRoute(CLI::App& verb, Context& ctx);     // commands_route.cc
void DeclarePeers(CLI::App& verb, Context& ctx);     // commands_peers.cc
void DeclareChannels(CLI::App& verb, Context& ctx);  // commands_channels.cc
void DeclareClose(CLI::App& verb, Context& ctx);     // commands_channels.cc
void DeclareTop(CLI::App& verb, Context& ctx);       // commands_top.cc
void DeclareDoctor(CLI::App& verb, Context& ctx);    // commands_doctor.cc
void DeclarePools(CLI::App& verb, Context& ctx);     // commands_pools.cc
void DeclareCluster(CLI::App& verb, Context& ctx);   // commands_cluster.cc
void DeclareServices(CLI::App& verb, Context& ctx);  // commands_cluster.cc
void DeclareConnect(CLI::App& verb, Context& ctx);   // commands_connect.cc
void DeclarePing(CLI::App& verb, Context& ctx);      // commands_connect.cc
void DeclareBench(CLI::App& verb, Context& ctx);     // commands_bench.cc
void DeclarePeerKey(CLI::App& verb, Context& ctx);   // commands_keys.cc
void DeclareTopo(CLI::App& verb, Context& ctx);      // commands_topology.cc
void DeclareEnv(CLI::App& verb, Context& ctx);       // commands_topology.cc

// The IP to plan a path to for PEER: an IP as it is; a peer's or cluster
// member's name (rdmactl peers) as the host of its address, resolved when
// that is a host name; else the name resolved as a host name
// (commands_route.cc).
rdmad::StatusOr<std::string> PeerIp(rdmad::Client& client, const std::string& peer);

// Runs fn() as the verb's callback: ctx.exit_code = fn().
template <typename Fn>
void RunsWith(CLI::App& verb, Context& ctx, Fn fn) {
  verb.final_callback([&ctx, fn] { ctx.exit_code = fn(); });
}

// Connects, or reports why not (PrintError) and sets *exit_code
// (kExitUnreachable, or kExitFailure when access is denied).
std::unique_ptr<rdmad::Client> ConnectOrReport(Context& ctx, int* exit_code);
// The client library's options from the global flags (--socket,
// --connect-timeout).
rdmad::ClientOptions ClientOptionsFor(const Globals& globals);

// Reports a failure and returns exit: with --json as
// {"error": {"command", "code", "message"}, "exit_code"} on stdout (so a
// script reads one document either way), else "rdmactl[ VERB]: message"
// on stderr. code: a status code's name, or "USAGE".
int PrintError(Context& ctx, std::string_view verb, std::string_view code,
               const std::string& message, int exit);

// PrintError for a client-library status ("rdmactl: CODE: message");
// kExitUnreachable for UNAVAILABLE, else kExitFailure.
int ReportError(Context& ctx, const rdmad::Status& status);

// PrintError for a verb's failure: kExitFailure.
int Fail(Context& ctx, std::string_view verb, const std::string& message);

// PrintError for a usage error: kExitUsage.
int UsageError(Context& ctx, std::string_view verb, const std::string& message);

// The message of a client-library status without the leading "Method: "
// the library puts before the daemon's own message.
std::string DaemonMessage(const rdmad::Status& status, std::string_view method);

void PrintText(Context& ctx, const std::string& text);
void PrintJson(Context& ctx, const Json& json);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_COMMAND_H_
