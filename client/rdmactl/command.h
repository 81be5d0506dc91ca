// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What every rdmactl verb shares: its context (globals, arguments, output
// streams), the signature the command table holds, and the helpers that
// connect to the daemon and report failures with rdmactl's exit codes.
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

#include "client/rdmactl/json.h"
#include "client/rdmactl/rdmactl.h"
#include "rdmad/client.h"

namespace rdmactl {

struct Context {
  Globals globals;
  std::vector<std::string> args;
  std::FILE* out;
  std::FILE* err;
};

using CommandFn = int (*)(Context& ctx);

// One row of the command table: {name, help, fn}. help starts with the
// verb's arguments, if it has any.
struct Command {
  const char* name;
  const char* help;
  CommandFn fn;
};

// The verbs (commands_*.cc and rdmactl.cc).
int CmdStatus(Context& ctx);
int CmdEvents(Context& ctx);
int CmdDevices(Context& ctx);
int CmdGids(Context& ctx);
int CmdCounters(Context& ctx);
int CmdRoute(Context& ctx);
int CmdPeers(Context& ctx);     // commands_peers.cc
int CmdChannels(Context& ctx);  // commands_channels.cc
int CmdClose(Context& ctx);     // commands_channels.cc
int CmdPools(Context& ctx);     // commands_pools.cc
int CmdCluster(Context& ctx);   // commands_cluster.cc
int CmdServices(Context& ctx);  // commands_cluster.cc
int CmdConnect(Context& ctx);   // commands_connect.cc
int CmdPing(Context& ctx);      // commands_connect.cc
int CmdBench(Context& ctx);     // commands_bench.cc

// Connects, or prints the one-line "not reachable" message and sets
// *exit_code (kExitUnreachable, or kExitFailure when access is denied).
std::unique_ptr<rdmad::Client> ConnectOrReport(Context& ctx, int* exit_code);

// Prints "rdmactl: CODE: message" to err; kExitUnreachable for UNAVAILABLE,
// else kExitFailure.
int ReportError(Context& ctx, const rdmad::Status& status);

// Prints "rdmactl VERB: message" and returns kExitUsage.
int UsageError(Context& ctx, std::string_view verb, const std::string& message);

// Checks the verb's positional argument count; on a mismatch prints
// "rdmactl VERB: usage: rdmactl VERB USAGE" and returns false.
bool ArgCountIs(Context& ctx, std::string_view verb, size_t min, size_t max,
                std::string_view usage);

// A whole decimal number in [0, max]; false otherwise.
bool ParseUint(std::string_view text, uint64_t max, uint64_t* value);

// The message of a client-library status without the leading "Method: "
// the library puts before the daemon's own message.
std::string DaemonMessage(const rdmad::Status& status, std::string_view method);

void PrintText(Context& ctx, const std::string& text);
void PrintJson(Context& ctx, const Json& json);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_COMMAND_H_
