// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The RPC edge's one conversion from rdmad::Status to grpc::Status, and
// the handlers' ways to end a call with one.

#ifndef RDMAD_DAEMON_RPC_GRPC_STATUS_H_
#define RDMAD_DAEMON_RPC_GRPC_STATUS_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/status.h>

#include <string>
#include <string_view>

#include "rdmad/status.h"

namespace rdmad {

// The other way, for the daemon's own gRPC clients (peer links, etcd):
// the code kept, the message after prefix, cut to kMaxRemoteMessage bytes
// (what another server says is relayed, never trusted to be short).
inline constexpr size_t kMaxRemoteMessage = 2048;
inline Status FromGrpcStatus(const grpc::Status& status, std::string_view prefix = "") {
  if (status.ok()) return Status::Ok();
  return Status(StatusCodeFromInt(status.error_code()),
                std::string(prefix) + status.error_message().substr(0, kMaxRemoteMessage));
}

inline grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), status.message());
}

// Ends a unary call with status (the reply as filled so far).
inline grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* context, const Status& status) {
  auto* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// A server stream that only finishes with status (a refused request).
template <typename Event>
class FailedStream final : public grpc::ServerWriteReactor<Event> {
 public:
  explicit FailedStream(const Status& status) { this->Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_GRPC_STATUS_H_
