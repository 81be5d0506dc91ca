// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The client library's endpoints to and from rdmad.v1.Endpoint, and an
// RdmaPlan from a planned v1.Path. FromProto refuses what the internal
// types cannot hold (INVALID_ARGUMENT naming the field).
//
// Thread safety: stateless functions.

#ifndef RDMAD_CLIENT_SRC_ENDPOINT_CONVERT_H_
#define RDMAD_CLIENT_SRC_ENDPOINT_CONVERT_H_

#include <optional>

#include "client/src/endpoint.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmad::internal {

struct WireEndpoint {
  std::optional<RdmaEndpoint> rdma;
  std::optional<TcpEndpoint> tcp;
  std::string transport_reason;
};

void ToProto(const WireEndpoint& endpoint, v1::Endpoint* out);
StatusOr<WireEndpoint> FromProto(const v1::Endpoint& in);
RdmaPlan PlanFromPath(const v1::Path& path);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_ENDPOINT_CONVERT_H_
