// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The RPC edge's one conversion from rdmad::Status to grpc::Status.

#ifndef RDMAD_DAEMON_SERVER_GRPC_STATUS_H_
#define RDMAD_DAEMON_SERVER_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "rdmad/status.h"

namespace rdmad {

inline grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), status.message());
}

}  // namespace rdmad

#endif  // RDMAD_DAEMON_SERVER_GRPC_STATUS_H_
