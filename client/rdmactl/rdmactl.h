// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl: the command-line front end to rdmad. Subcommands come from one
// table of {name, help, fn}; every verb takes the global --socket PATH and
// --json. It talks to the daemon only through the client library.

#ifndef RDMAD_CLIENT_RDMACTL_RDMACTL_H_
#define RDMAD_CLIENT_RDMACTL_RDMACTL_H_

#include <cstdio>
#include <string>
#include <vector>

namespace rdmactl {

// Exit codes.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUnreachable = 2;  // the daemon is not reachable
constexpr int kExitUsage = 64;

struct Globals {
  std::string socket;  // "" : the client library's default
  bool json = false;
  uint32_t connect_timeout_ms = 0;  // 0: the client library's default
};

// A parsed invocation: globals, verb and the verb's own arguments.
struct Invocation {
  Globals globals;
  std::string verb;
  std::vector<std::string> args;
};

// Runs rdmactl with argv (without argv[0]); output to out, errors to err.
int Run(const std::vector<std::string>& argv, std::FILE* out, std::FILE* err);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_RDMACTL_H_
