// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Endpoints to and from rdmad.v1.Endpoint, and an RdmaPlan from a planned
// v1.Path. The one conversion, used by the client library and by the
// daemon's RPC edge (which relays endpoints). FromProto refuses what the
// internal types cannot hold (a GID that is not 16 bytes, a token that is
// not 32, a TCP port above 65535, no transport set: INVALID_ARGUMENT naming
// the field); the field checks are ValidateRdmaEndpoint's job.
//
// Thread safety: stateless functions.

#ifndef RDMAD_COMMON_ENDPOINT_CONVERT_H_
#define RDMAD_COMMON_ENDPOINT_CONVERT_H_

#include "common/endpoint.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmad::internal {

void ToProto(const WireEndpoint& endpoint, v1::Endpoint* out);
StatusOr<WireEndpoint> FromProto(const v1::Endpoint& in);
RdmaPlan PlanFromPath(const v1::Path& path);
// The path's plan plus the further rails (at most kMaxRails - 1 are kept).
RdmaPlan PlanFromChannelPlan(const v1::ChannelPlan& plan);

}  // namespace rdmad::internal

#endif  // RDMAD_COMMON_ENDPOINT_CONVERT_H_
