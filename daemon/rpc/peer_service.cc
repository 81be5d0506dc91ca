// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/peer_service.h"

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

StatusOr<PeerIdentity> PeerService::Admit(grpc::CallbackServerContext* context,
                                          std::string_view method,
                                          const std::string& instance_named) const {
  auto identity = gate_->Admit(context, method);
  if (identity.ok() && instance_named == inbound_->own_instance()) {
    identity->this_process = gate_->FromThisProcess(context);
  }
  return identity;
}

grpc::ServerUnaryReactor* PeerService::Hello(grpc::CallbackServerContext* context,
                                             const v1::HelloRequest* request,
                                             v1::HelloResponse* response) {
  auto identity = Admit(context, "Hello", request->self().instance_id());
  if (!identity.ok()) return Reply(context, identity.status());
  if (!request->has_self()) return Reply(context, Status::InvalidArgument("self: required"));
  auto local = inbound_->Hello(FromProto(request->self()), context->peer(), *identity);
  if (local.ok()) {
    ToProto(*local, response->mutable_self());
    gate_->SignHelloAnswer(context, request->self().instance_id());
  }
  return Reply(context, local.status());
}

grpc::ServerWriteReactor<v1::PeerEvent>* PeerService::Session(grpc::CallbackServerContext* context,
                                                              const v1::SessionRequest* request) {
  auto identity = Admit(context, "Session", request->instance_id());
  if (!identity.ok()) return new FailedStream<v1::PeerEvent>(identity.status());
  auto* reactor = new SessionReactor(inbound_);
  reactor->Start(FromProto(*request), context->peer(), *identity);
  return reactor;
}

grpc::ServerUnaryReactor* PeerService::OpenChannel(grpc::CallbackServerContext* context,
                                                   const v1::OpenChannelRequest* request,
                                                   v1::OpenChannelResponse* response) {
  auto identity = Admit(context, "OpenChannel", request->initiator_instance());
  if (!identity.ok()) return Reply(context, identity.status());
  StatusOr<OpenChannelCall> call = FromProto(*request);
  if (!call.ok()) return Reply(context, call.status());
  if (opening_.fetch_add(1) >= kMaxOpening) {
    opening_.fetch_sub(1);
    return Reply(context,
                 Status::ResourceExhausted("rdmad is answering " + std::to_string(kMaxOpening) +
                                           " channel requests from peers already; try again"));
  }
  auto* reactor = context->DefaultReactor();
  // The server's Shutdown waits for this Finish, so inbound_ outlives it.
  Status queued = opens_.Submit([this, reactor, response, from = context->peer(),
                                 identity = *identity, call = std::move(call).value()] {
    StatusOr<ChannelEndpoints> answer = inbound_->OpenChannel(call, from, identity);
    for (size_t i = 0; answer.ok() && i < answer.value().size(); ++i) {
      ToProto(answer.value()[i], response->add_acceptors());
    }
    opening_.fetch_sub(1);
    reactor->Finish(ToGrpcStatus(answer.status()));
  });
  if (!queued.ok()) {  // stopping
    opening_.fetch_sub(1);
    reactor->Finish(ToGrpcStatus(queued));
  }
  return reactor;
}

grpc::ServerUnaryReactor* PeerService::CloseChannel(grpc::CallbackServerContext* context,
                                                    const v1::CloseChannelRequest* request,
                                                    v1::CloseChannelResponse*) {
  auto identity = Admit(context, "CloseChannel", request->initiator_instance());
  if (!identity.ok()) return Reply(context, identity.status());
  CloseChannelCall call{request->channel_id(), request->reason(), request->initiator_instance()};
  return Reply(context, inbound_->CloseChannel(call, *identity));
}

grpc::ServerUnaryReactor* PeerService::ReclaimChannel(grpc::CallbackServerContext* context,
                                                      const v1::ReclaimChannelRequest* request,
                                                      v1::ReclaimChannelResponse*) {
  auto identity = Admit(context, "ReclaimChannel", request->instance());
  if (!identity.ok()) return Reply(context, identity.status());
  ReclaimChannelCall call{request->channel_id(), request->previous_instance(), request->instance()};
  return Reply(context, inbound_->ReclaimChannel(call, *identity));
}

}  // namespace rdmad
