// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/peer_service.h"

#include <thread>

#include "daemon/rpc/channel_convert.h"
#include "daemon/rpc/grpc_status.h"
#include "daemon/rpc/peer_convert.h"

namespace rdmad {
namespace {

// Writes one Session stream; deletes itself when gRPC is done with it.
class SessionReactor final : public grpc::ServerWriteReactor<v1::PeerEvent>,
                             public PeerStreamWriter {
 public:
  explicit SessionReactor(PeerInbound* inbound) : stream_(inbound->NewStream(this)) {}

  void Start(const SessionOpen& open, const std::string& from, const PeerIdentity& identity) {
    stream_->Start(open, from, identity);
  }

  // PeerStreamWriter:
  void Write(const PeerEvent& event) override {
    ToProto(event, &out_);
    StartWrite(&out_);
  }
  void Finish(const Status& status) override {
    grpc::ServerWriteReactor<v1::PeerEvent>::Finish(ToGrpcStatus(status));
  }

  // grpc::ServerWriteReactor:
  void OnWriteDone(bool ok) override { stream_->OnWriteDone(ok); }
  // gRPC 1.51's Server::Shutdown waits for reactors: finish on cancel.
  void OnCancel() override { stream_->Cancel(); }
  void OnDone() override {
    stream_->Detach();
    delete this;
  }

 private:
  v1::PeerEvent out_;  // the one write in flight
  std::shared_ptr<InboundStream> stream_;
};

}  // namespace

grpc::ServerUnaryReactor* PeerService::Hello(grpc::CallbackServerContext* context,
                                             const v1::HelloRequest* request,
                                             v1::HelloResponse* response) {
  auto* reactor = context->DefaultReactor();
  if (!request->has_self()) {
    reactor->Finish(ToGrpcStatus(Status::InvalidArgument("self: required")));
    return reactor;
  }
  auto local = inbound_->Hello(FromProto(request->self()), context->peer(),
                               IdentityOf(context->auth_context()));
  if (local.ok()) ToProto(*local, response->mutable_self());
  reactor->Finish(ToGrpcStatus(local.status()));
  return reactor;
}

grpc::ServerWriteReactor<v1::PeerEvent>* PeerService::Session(grpc::CallbackServerContext* context,
                                                              const v1::SessionRequest* request) {
  auto* reactor = new SessionReactor(inbound_);
  reactor->Start(FromProto(*request), context->peer(), IdentityOf(context->auth_context()));
  return reactor;
}

grpc::ServerUnaryReactor* PeerService::OpenChannel(grpc::CallbackServerContext* context,
                                                   const v1::OpenChannelRequest* request,
                                                   v1::OpenChannelResponse* response) {
  auto* reactor = context->DefaultReactor();
  StatusOr<OpenChannelCall> call = FromProto(*request);
  if (!call.ok()) {
    reactor->Finish(ToGrpcStatus(call.status()));
    return reactor;
  }
  // The server's Shutdown waits for this Finish, so inbound_ outlives it.
  std::thread([this, reactor, response, from = context->peer(),
               identity = IdentityOf(context->auth_context()), call = std::move(call).value()] {
    StatusOr<ChannelEndpoints> answer = inbound_->OpenChannel(call, from, identity);
    for (size_t i = 0; answer.ok() && i < answer.value().size(); ++i) {
      ToProto(answer.value()[i],
              i == 0 ? response->mutable_acceptor() : response->add_more_acceptors());
    }
    reactor->Finish(ToGrpcStatus(answer.status()));
  }).detach();
  return reactor;
}

grpc::ServerUnaryReactor* PeerService::CloseChannel(grpc::CallbackServerContext* context,
                                                    const v1::CloseChannelRequest* request,
                                                    v1::CloseChannelResponse*) {
  auto* reactor = context->DefaultReactor();
  CloseChannelCall call{request->channel_id(), request->reason(), request->initiator_instance()};
  reactor->Finish(ToGrpcStatus(inbound_->CloseChannel(call, IdentityOf(context->auth_context()))));
  return reactor;
}

grpc::ServerUnaryReactor* PeerService::ReclaimChannel(grpc::CallbackServerContext* context,
                                                      const v1::ReclaimChannelRequest* request,
                                                      v1::ReclaimChannelResponse*) {
  auto* reactor = context->DefaultReactor();
  ReclaimChannelCall call{request->channel_id(), request->previous_instance(), request->instance()};
  reactor->Finish(
      ToGrpcStatus(inbound_->ReclaimChannel(call, IdentityOf(context->auth_context()))));
  return reactor;
}

}  // namespace rdmad
