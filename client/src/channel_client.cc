// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The initiator's side of the handshake: PlanChannel, the channels' own
// set-up (QP and ring, or TCP), one Connect for all of them, then each
// channel's lifeline and data path.

#include "client/src/channel_client.h"

#include <google/protobuf/arena.h>
#include <grpcpp/grpcpp.h>

#include "client/src/client_log.h"
#include "client/src/handshake.h"
#include "client/src/heap_reserve.h"
#include "client/src/rdma/rdma_channel.h"
#include "client/src/tcp/tcp_channel.h"
#include "common/endpoint_convert.h"

namespace rdmad::internal {
namespace {

// One channel of a batch on the initiator's side, from the plan to the
// peer's answer.
struct Opening {
  ChannelInfo info;
  std::unique_ptr<PendingRdmaChannel> rdma;  // RDMA: the plan has a path and set-up worked
  WireEndpoint mine;
  std::string tcp_reason;  // why TCP, else
};

Opening Prepare(const v1::PlanChannelResponse& plan, uint64_t id, const std::string& peer,
                const std::string& service, const std::shared_ptr<CompletionGroup>& group) {
  Opening o;
  o.info.id = id;
  o.info.peer = peer;
  o.info.service = service;
  o.tcp_reason = plan.plan().tcp_reason();
  if (plan.plan().has_path()) {
    auto created = PendingRdmaChannel::Create(PlanFromChannelPlan(plan.plan()), group);
    if (created.ok()) {
      o.rdma = std::move(created).value();
      o.mine.rdma = o.rdma->local();
      return o;
    }
    o.tcp_reason = "RDMA setup failed: " + created.status().message();
  }
  o.mine.tcp = TcpEndpoint{};
  o.mine.transport_reason = o.tcp_reason;
  return o;
}

// The channel made from the peer's answer; hold is its lifeline.
StatusOr<std::unique_ptr<Channel>> Finish(Opening& o, const v1::Endpoint& answer,
                                          std::unique_ptr<HoldStream> hold,
                                          HandshakeClock::time_point start,
                                          const ConnectOptions& options, bool first_of_batch) {
  auto theirs = FromProto(answer);
  if (!theirs.ok()) return Held(theirs.status(), std::move(hold), "initiator");
  if (theirs.value().rdma && o.rdma) {
    Status rtr = o.rdma->ReadyToReceive(*theirs.value().rdma);
    if (!rtr.ok()) return Held(rtr, std::move(hold), "initiator");
    o.info.transport = ChannelTransport::kRdma;
    o.info.transport_reason = "RDMA path planned on both sides";
    o.info.handshake_ms = MsSince(start);
    LogRdma("connected", o.info.id, o.mine.rdma.value(), *theirs.value().rdma, first_of_batch);
    return Held(o.rdma->ReadyToSend(o.info), std::move(hold), "initiator");
  }
  if (!theirs.value().tcp) {
    return Held(Status::InvalidArgument("the peer answered RDMA to a TCP request"), std::move(hold),
                "initiator");
  }
  o.rdma.reset();  // the acceptor fell back: the QP is discarded
  o.info.transport = ChannelTransport::kTcp;
  o.info.transport_reason =
      theirs.value().transport_reason.empty() ? o.tcp_reason : theirs.value().transport_reason;
  ClientLog().info("channel {:#018x} to {} service {}: TCP: {}", o.info.id, o.info.peer,
                   o.info.service, o.info.transport_reason);
  o.info.handshake_ms = MsSince(start);
  return Held(TcpConnect(*theirs.value().tcp, o.info, options.timeout), std::move(hold),
              "initiator");
}

}  // namespace

StatusOr<std::vector<std::unique_ptr<Channel>>> ConnectBatch(const DaemonRpc& rpc,
                                                             const std::string& peer,
                                                             const std::string& service,
                                                             size_t count,
                                                             const ConnectOptions& options) {
  if (count < 1 || count > kMaxChannelBatch) {
    return Status::InvalidArgument("a batch holds 1.." + std::to_string(kMaxChannelBatch) +
                                   " channels");
  }
  auto start = HandshakeClock::now();
  v1::Rdmad::Stub* stub = rpc.stub.get();
  // The batch's messages (an endpoint per channel, both ways) on one
  // arena, freed at once.
  google::protobuf::Arena arena;
  v1::PlanChannelRequest plan_request;
  plan_request.set_peer(peer);
  plan_request.set_service(service);
  plan_request.set_force_tcp(options.force_tcp);
  if (count > 1) plan_request.set_count(uint32_t(count));
  auto& plan = *google::protobuf::Arena::CreateMessage<v1::PlanChannelResponse>(&arena);
  grpc::ClientContext plan_ctx;
  grpc::Status st = stub->PlanChannel(&plan_ctx, plan_request, &plan);
  if (!st.ok()) return StatusFromGrpc(st);
  if (size_t(plan.channel_ids_size()) != count) {
    return Status::Unimplemented("rdmad planned " + std::to_string(plan.channel_ids_size()) +
                                 " channels for a batch of " + std::to_string(count) +
                                 " (a daemon older than this library?)");
  }
  std::vector<Opening> batch;
  std::shared_ptr<CompletionGroup> group = BatchGroup(plan.plan(), count);
  ReserveThreadHeap(count * kHeapPerChannel);  // heap_reserve.h says why
  for (uint64_t id : plan.channel_ids()) {
    batch.push_back(Prepare(plan, id, peer, service, group));
    if (batch.size() > 1 && batch.back().rdma) batch.back().rdma->LogAtDebug();
  }
  auto& request = *google::protobuf::Arena::CreateMessage<v1::ConnectRequest>(&arena);
  for (const Opening& o : batch) {
    v1::ChannelOpening* c = request.add_channels();
    c->set_channel_id(o.info.id);
    ToProto(o.mine, c->mutable_endpoint());
  }
  auto& reply = *google::protobuf::Arena::CreateMessage<v1::ConnectResponse>(&arena);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options.timeout);
  st = stub->Connect(&ctx, request, &reply);
  if (!st.ok()) return StatusFromGrpc(st);
  if (size_t(reply.channels_size()) != count) {
    return Status::InvalidArgument("rdmad answered " + std::to_string(reply.channels_size()) +
                                   " endpoints for a batch of " + std::to_string(count));
  }
  std::vector<uint64_t> ids;
  std::vector<std::string> leases;
  for (const Opening& o : batch) ids.push_back(o.info.id);
  for (const v1::ConnectedChannel& c : reply.channels()) leases.push_back(c.lease());
  auto channels = HoldAndFinish(rpc, ids, leases, [&](size_t i, std::unique_ptr<HoldStream> hold) {
    return Finish(batch[i], reply.channels(int(i)).peer(), std::move(hold), start, options, i == 0);
  });
  if (channels.ok()) BatchLogged(("to " + peer + " service " + service).c_str(), *channels);
  return channels;
}

StatusOr<std::unique_ptr<Channel>> ConnectTo(const DaemonRpc& rpc, const std::string& peer,
                                             const std::string& service,
                                             const ConnectOptions& options) {
  auto channels = ConnectBatch(rpc, peer, service, 1, options);
  if (!channels.ok()) return channels.status();
  return std::move(channels.value().front());
}

}  // namespace rdmad::internal
