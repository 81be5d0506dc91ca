// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/grpc_api_server.h"

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/server_posix.h>

#include "daemon/rpc/local_service.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

class GrpcApiServer final : public ApiServer {
 public:
  explicit GrpcApiServer(DaemonCore* core) : service_(core) {}

  Status Start() {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    builder.SetMaxReceiveMessageSize(4 << 20);
    server_ = builder.BuildAndStart();
    if (!server_) return Status::Internal("cannot start the gRPC server");
    return Status::Ok();
  }

  // gRPC names the connection "fd:N"; the service learns its process here.
  void AddConnection(int fd) override {
    if (!service_.clients().Add(fd)) {
      spdlog::debug("local API: no peer credentials for fd {}; it is limited on its own", fd);
    }
    grpc::AddInsecureChannelFromFd(server_.get(), fd);
  }

  void Shutdown(std::chrono::milliseconds deadline) override {
    server_->Shutdown(std::chrono::system_clock::now() + deadline);
    server_->Wait();
    service_.Stop();  // joins the Connect handshake workers
  }

 private:
  LocalService service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace

StatusOr<std::unique_ptr<ApiServer>> MakeGrpcApiServer(DaemonCore* core) {
  auto server = std::make_unique<GrpcApiServer>(core);
  RDMAD_RETURN_IF_ERROR(server->Start());
  return std::unique_ptr<ApiServer>(std::move(server));
}

}  // namespace rdmad
