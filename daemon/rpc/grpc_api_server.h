// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// GrpcApiServer serves the local API with gRPC on connections that the
// daemon's own accept loop hands over (AddInsecureChannelFromFd); it binds no
// port of its own. It records each connection's process (SO_PEERCRED) for
// the service's per-client limits.
//
// Thread safety: AddConnection may be called from any thread; Shutdown once.

#ifndef RDMAD_DAEMON_RPC_GRPC_API_SERVER_H_
#define RDMAD_DAEMON_RPC_GRPC_API_SERVER_H_

#include <memory>

#include "daemon/lifecycle/daemon.h"

namespace rdmad {

// The local API server the rdmad binary uses (the peer side is
// MakeGrpcPeerTransport).
StatusOr<std::unique_ptr<ApiServer>> MakeGrpcApiServer(DaemonCore* core);

class GrpcApiServerFactory final : public ApiServerFactory {
 public:
  StatusOr<std::unique_ptr<ApiServer>> Make(DaemonCore* core) const override {
    return MakeGrpcApiServer(core);
  }
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_GRPC_API_SERVER_H_
