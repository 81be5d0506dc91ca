// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// `rdmactl pools`: the human table and the --json form of rdmad's pool
// table. JSON keys are rdmad::PoolSummary's member names (json.h's rule).
//
// Thread safety: pure functions over values.

#ifndef RDMAD_CLIENT_RDMACTL_FORMAT_POOLS_H_
#define RDMAD_CLIENT_RDMACTL_FORMAT_POOLS_H_

#include <string>
#include <vector>

#include "client/rdmactl/json.h"
#include "rdmad/client.h"

namespace rdmactl {

// What rdmactl prints when no client follows the pool.
inline constexpr char kNoPoolsLine[] =
    "no pools; an application follows them with ClientOptions::follow_pool or Prewarm";

// CLIENT PID PEER SERVICE TARGET SOURCE WARM IN-USE LAST-ERROR.
std::string FormatPools(const std::vector<rdmad::PoolSummary>& pools);

// {"pools": [{"client_id", "pid", "peer", "service", "target", "source",
// "warm", "in_use", "last_error"}...]}
Json PoolsJson(const std::vector<rdmad::PoolSummary>& pools);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_FORMAT_POOLS_H_
