// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The rdmad command line: flag parsing and the top-level flow that main()
// calls. Kept out of main.cc so it is testable and main stays thin.

#ifndef RDMAD_DAEMON_LIFECYCLE_DAEMON_MAIN_H_
#define RDMAD_DAEMON_LIFECYCLE_DAEMON_MAIN_H_

#include <optional>
#include <string>
#include <vector>

#include "daemon/lifecycle/daemon.h"
#include "rdmad/status.h"

namespace rdmad {

struct DaemonFlags {
  std::string config_path = RDMAD_DEFAULT_CONFIG;
  bool config_given = false;
  std::optional<std::string> socket;
  std::optional<std::string> check_config;
  std::optional<std::string> sysfs_root;  // --sysfs-root, for tests
  bool version = false;
  bool help = false;
};

// Parses rdmad's flags (args excludes argv[0]).
StatusOr<DaemonFlags> ParseDaemonFlags(const std::vector<std::string>& args);

std::string DaemonUsage();

// Exit codes: 0 ok, 1 failure (bad config, cannot start), 2 usage error.
int DaemonMain(int argc, char** argv, const DaemonEdge& edge);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_LIFECYCLE_DAEMON_MAIN_H_
