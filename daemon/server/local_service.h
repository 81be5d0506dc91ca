// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// LocalService implements the rdmad.v1.Rdmad gRPC service with the callback
// API. Handlers only validate the request, call the DaemonCore and fill the
// reply; streams go through EventStreamer so their logic lives in the core.
//
// Thread safety: gRPC calls handlers concurrently; the service holds no
// mutable state of its own.

#ifndef RDMAD_DAEMON_SERVER_LOCAL_SERVICE_H_
#define RDMAD_DAEMON_SERVER_LOCAL_SERVICE_H_

#include "daemon/core/daemon.h"
#include "rdmad/v1/rdmad.grpc.pb.h"

namespace rdmad {

class LocalService final : public v1::Rdmad::CallbackService {
 public:
  explicit LocalService(DaemonCore* core) : core_(core) {}

  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* context,
                                      const v1::GetStatusRequest* request,
                                      v1::GetStatusResponse* response) override;

  grpc::ServerWriteReactor<v1::Event>* WatchEvents(
      grpc::CallbackServerContext* context,
      const v1::WatchEventsRequest* request) override;

  grpc::ServerUnaryReactor* ListDevices(grpc::CallbackServerContext* context,
                                        const v1::ListDevicesRequest* request,
                                        v1::ListDevicesResponse* response) override;
  grpc::ServerUnaryReactor* GetDevice(grpc::CallbackServerContext* context,
                                      const v1::GetDeviceRequest* request,
                                      v1::Device* response) override;
  grpc::ServerUnaryReactor* GetPortCounters(grpc::CallbackServerContext* context,
                                            const v1::GetPortCountersRequest* request,
                                            v1::GetPortCountersResponse* response) override;
  grpc::ServerUnaryReactor* ResolvePath(grpc::CallbackServerContext* context,
                                        const v1::ResolvePathRequest* request,
                                        v1::Path* response) override;
  grpc::ServerUnaryReactor* ListPeers(grpc::CallbackServerContext* context,
                                      const v1::ListPeersRequest* request,
                                      v1::ListPeersResponse* response) override;

 private:
  DaemonCore* core_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_SERVER_LOCAL_SERVICE_H_
