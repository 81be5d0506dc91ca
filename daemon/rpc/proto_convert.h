// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Core values to wire messages (rdmad.v1), for the RPC edge only.

#ifndef RDMAD_DAEMON_RPC_PROTO_CONVERT_H_
#define RDMAD_DAEMON_RPC_PROTO_CONVERT_H_

#include "daemon/discovery/inventory.h"
#include "daemon/lifecycle/daemon.h"
#include "daemon/policy/path_policy.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmad {

void ToProto(const DaemonStatus& s, v1::GetStatusResponse* out);
void ToProto(const DeviceInfo& d, v1::Device* out);
void ToProto(const PathDecision& p, v1::Path* out);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_PROTO_CONVERT_H_
