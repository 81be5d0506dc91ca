// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/channel_client.h"

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "client/src/client_log.h"
#include "client/src/held_channel.h"
#include "client/src/rdma/rdma_channel.h"
#include "client/src/tcp/tcp_channel.h"
#include "common/endpoint_convert.h"

namespace rdmad::internal {
namespace {

using Clock = std::chrono::steady_clock;

Status FromGrpc(const grpc::Status& status) {
  return Status(StatusCodeFromInt(status.error_code()), status.error_message());
}

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::array<uint8_t, 32> RandomToken() {
  std::random_device rd;
  std::array<uint8_t, 32> token{};
  for (auto& b : token) b = uint8_t(rd());
  return token;
}

void LogRdma(const char* what, uint64_t id, const RdmaEndpoint& local, const RdmaEndpoint& peer) {
  ClientLog().info(
      "channel {:#x} {} over RDMA: local {} port {} GID index {} QPN {:#x} MTU {}; "
      "peer {} GID index {} QPN {:#x} MTU {}; path MTU {}",
      id, what, local.device, local.port, local.gid_index, local.qpn, local.active_mtu, peer.device,
      peer.gid_index, peer.qpn, peer.active_mtu,
      NegotiatedMtu(0, local.active_mtu, peer.active_mtu));
}

// Ties a channel whose data path came up (or failed to) to the lifeline
// opened when the daemons exchanged the endpoints. On a failure the daemon
// is told (the peer then hears that this side could not finish).
StatusOr<std::unique_ptr<Channel>> Held(StatusOr<std::unique_ptr<Channel>> channel,
                                        std::unique_ptr<HoldStream> hold, const char* role) {
  if (channel.ok()) {
    auto abortable = AsAbortable(std::move(channel).value());
    if (abortable.ok()) {
      return std::unique_ptr<Channel>(
          new HeldChannel(std::move(abortable).value(), std::move(hold)));
    }
    channel = abortable.status();
  }
  hold->Release(std::string("the ") + role +
                " could not finish the handshake: " + channel.status().message());
  return channel.status();
}

// The acceptor's TCP side: listen, answer the daemon, take the connection.
StatusOr<std::unique_ptr<Channel>> AcceptTcp(const DaemonRpc& rpc, v1::Rdmad::Stub* stub,
                                             const v1::IncomingChannel& in,
                                             const std::string& reason, ChannelInfo info,
                                             Clock::time_point start) {
  std::string host = in.plan().tcp_bind_host().empty() ? "127.0.0.1" : in.plan().tcp_bind_host();
  auto acceptor = TcpAcceptor::Listen(host, RandomToken());
  if (!acceptor.ok()) return acceptor.status();
  WireEndpoint mine;
  mine.tcp = acceptor.value()->local();
  mine.transport_reason = reason;
  v1::AcceptRequest request;
  request.set_request_id(in.request_id());
  ToProto(mine, request.mutable_endpoint());
  grpc::ClientContext ctx;
  v1::AcceptResponse response;
  grpc::Status st = stub->Accept(&ctx, request, &response);
  if (!st.ok()) return FromGrpc(st);
  auto hold =
      HoldStream::Open(rpc.channel, in.channel_id(), response.lease(), rpc.reattach_timeout);
  info.transport = ChannelTransport::kTcp;
  info.transport_reason = reason;
  info.handshake_ms = MsSince(start);
  ClientLog().info("channel {:#x} from {}: TCP: {}", in.channel_id(), in.peer(), reason);
  return Held(acceptor.value()->Accept(std::chrono::milliseconds(15000), info), std::move(hold),
              "acceptor");
}

StatusOr<std::unique_ptr<Channel>> AcceptOne(const DaemonRpc& rpc, v1::Rdmad::Stub* stub,
                                             const v1::IncomingChannel& in,
                                             const std::string& service) {
  auto start = Clock::now();
  ChannelInfo info;
  info.id = in.channel_id();
  info.peer = in.peer();
  info.service = service;
  auto initiator = FromProto(in.initiator());
  if (!initiator.ok()) return initiator.status();
  if (!initiator.value().rdma) {
    const std::string& why = initiator.value().transport_reason;
    return AcceptTcp(rpc, stub, in,
                     why.empty() ? "the initiator chose TCP" : "the initiator's side: " + why, info,
                     start);
  }
  if (!in.plan().has_path()) return AcceptTcp(rpc, stub, in, in.plan().tcp_reason(), info, start);
  auto pending = PendingRdmaChannel::Create(PlanFromPath(in.plan().path()));
  if (!pending.ok()) {
    return AcceptTcp(rpc, stub, in, "RDMA setup failed: " + pending.status().message(), info,
                     start);
  }
  Status rtr = pending.value()->ReadyToReceive(*initiator.value().rdma);
  if (!rtr.ok()) return AcceptTcp(rpc, stub, in, "RDMA RTR failed: " + rtr.message(), info, start);
  WireEndpoint mine;
  mine.rdma = pending.value()->local();
  v1::AcceptRequest request;
  request.set_request_id(in.request_id());
  ToProto(mine, request.mutable_endpoint());
  grpc::ClientContext ctx;
  v1::AcceptResponse response;
  grpc::Status st = stub->Accept(&ctx, request, &response);
  if (!st.ok()) return FromGrpc(st);
  auto hold =
      HoldStream::Open(rpc.channel, in.channel_id(), response.lease(), rpc.reattach_timeout);
  info.transport = ChannelTransport::kRdma;
  info.transport_reason = "RDMA path planned on both sides";
  info.handshake_ms = MsSince(start);
  LogRdma("accepted", info.id, mine.rdma.value(), *initiator.value().rdma);
  return Held(pending.value()->ReadyToSend(info), std::move(hold), "acceptor");
}

// A registered service. A reader thread queues the daemon's requests; when
// the Listen stream breaks because rdmad went away, it registers the
// service again with the next rdmad (waiting up to reattach_timeout for
// it), so that a listening application outlives a restart of its daemon.
class GrpcListener final : public Listener {
 public:
  GrpcListener(DaemonRpc rpc, std::string service)
      : rpc_(std::move(rpc)),
        stub_(v1::Rdmad::NewStub(rpc_.channel)),
        service_(std::move(service)) {}

  ~GrpcListener() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      if (context_) context_->TryCancel();
    }
    if (reader_thread_.joinable()) reader_thread_.join();
  }

  Status Start() {
    RDMAD_RETURN_IF_ERROR(Register(std::nullopt));
    reader_thread_ = std::thread([this] { ReadLoop(); });
    return Status::Ok();
  }

  const std::string& service() const override { return service_; }

  StatusOr<std::unique_ptr<Channel>> Accept(std::chrono::milliseconds timeout) override {
    auto next = Next(timeout);
    if (!next.ok()) return next.status();
    auto channel = AcceptOne(rpc_, stub_.get(), next.value(), service_);
    if (channel.ok()) return channel;
    return channel.status();
  }

  Status Reject(const std::string& reason, std::chrono::milliseconds timeout) override {
    auto next = Next(timeout);
    if (!next.ok()) return next.status();
    v1::RejectRequest request;
    request.set_request_id(next.value().request_id());
    request.set_reason(reason);
    grpc::ClientContext ctx;
    v1::RejectResponse response;
    return FromGrpc(stub_->Reject(&ctx, request, &response));
  }

 private:
  // Opens the Listen stream and reads its registration; until: re-registering
  // after a restart (wait for the daemon up to then).
  Status Register(std::optional<Clock::time_point> until) {
    // Re-registering: wait for the next rdmad first. The stream itself has
    // no deadline (it lasts as long as the listener).
    if (until && !rpc_.channel->WaitForConnected(std::chrono::system_clock::now() +
                                                 (*until - Clock::now()))) {
      return Status::Unavailable("rdmad did not come back within " +
                                 std::to_string(rpc_.reattach_timeout.count()) + " ms");
    }
    auto context = std::make_unique<grpc::ClientContext>();
    grpc::ClientContext* raw = context.get();
    reader_.reset();  // before the context it used
    {
      std::lock_guard lock(mu_);
      if (stopping_) return Status::Cancelled("the listener is closing");
      context_ = std::move(context);
    }
    v1::ListenRequest request;
    request.set_service(service_);
    reader_ = stub_->Listen(raw, request);
    v1::ListenEvent first;
    if (!reader_->Read(&first) || !first.has_registered()) {
      grpc::Status st = reader_->Finish();
      return st.ok() ? Status::Internal("Listen: no registration") : FromGrpc(st);
    }
    return Status::Ok();
  }

  void ReadLoop() {
    v1::ListenEvent event;
    for (;;) {
      while (reader_->Read(&event)) {
        if (!event.has_incoming()) continue;
        std::lock_guard lock(mu_);
        queue_.push_back(event.incoming());
        cv_.notify_all();
      }
      grpc::Status finished = reader_->Finish();
      Status st = FromGrpc(finished);
      if (Reregister(finished)) continue;
      std::lock_guard lock(mu_);
      ended_ = st.ok() ? Status::Unavailable("the daemon ended the Listen stream") : st;
      done_ = true;
      cv_.notify_all();
      return;
    }
  }

  // After the stream broke: registers again with the next rdmad. False
  // when it should not (closing, refused, no reattach) or could not.
  bool Reregister(const grpc::Status& finished) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return false;
      queue_.clear();  // requests of the daemon that went away
    }
    if (!DaemonWentAway(finished.error_code()) || rpc_.reattach_timeout.count() <= 0) {
      ClientLog().info("service {}: the Listen stream ended ({})", service_,
                       finished.error_message());
      return false;
    }
    ClientLog().info("service {}: the Listen stream to rdmad broke ({}); registering again",
                     service_, finished.error_message());
    auto until = Clock::now() + rpc_.reattach_timeout;
    Status st = Register(until);
    // Tried again: a call that raced the old daemon's connection closing
    // (UNAVAILABLE), and the old registration still in place for a moment
    // (ALREADY_EXISTS: a stream the daemon has not seen end yet).
    auto again = [](const Status& s) {
      return s.code() == StatusCode::kAlreadyExists || s.code() == StatusCode::kUnavailable ||
             s.code() == StatusCode::kCancelled || s.code() == StatusCode::kUnknown;
    };
    while (again(st) && Clock::now() < until) {
      {
        std::lock_guard lock(mu_);
        if (stopping_) return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      st = Register(until);
    }
    if (st.ok()) {
      ClientLog().info("service {}: registered again", service_);
      return true;
    }
    ClientLog().warn("service {}: could not register again: {}", service_, st.message());
    return false;
  }

  StatusOr<v1::IncomingChannel> Next(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    auto ready = [this] { return !queue_.empty() || done_; };
    if (timeout.count() < 0) {
      cv_.wait(lock, ready);
    } else if (!cv_.wait_for(lock, timeout, ready)) {
      return Status::DeadlineExceeded("no channel request for " + service_);
    }
    if (queue_.empty()) return ended_;
    v1::IncomingChannel in = std::move(queue_.front());
    queue_.pop_front();
    return in;
  }

  const DaemonRpc rpc_;
  std::unique_ptr<v1::Rdmad::Stub> stub_;
  const std::string service_;
  // The reader thread's (Start's before it runs).
  std::unique_ptr<grpc::ClientReader<v1::ListenEvent>> reader_;
  std::thread reader_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<grpc::ClientContext> context_;  // the open stream's; guarded by mu_
  bool stopping_ = false;                         // guarded by mu_
  std::deque<v1::IncomingChannel> queue_;         // guarded by mu_
  bool done_ = false;                             // guarded by mu_
  Status ended_;                                  // guarded by mu_
};

}  // namespace

StatusOr<std::unique_ptr<Listener>> ListenOn(DaemonRpc rpc, const std::string& service) {
  auto listener = std::make_unique<GrpcListener>(std::move(rpc), service);
  RDMAD_RETURN_IF_ERROR(listener->Start());
  return std::unique_ptr<Listener>(std::move(listener));
}

StatusOr<std::unique_ptr<Channel>> ConnectTo(const DaemonRpc& rpc, const std::string& peer,
                                             const std::string& service,
                                             const ConnectOptions& options) {
  auto start = Clock::now();
  auto owned_stub = v1::Rdmad::NewStub(rpc.channel);
  v1::Rdmad::Stub* stub = owned_stub.get();
  v1::PlanChannelRequest plan_request;
  plan_request.set_peer(peer);
  plan_request.set_service(service);
  plan_request.set_force_tcp(options.force_tcp);
  v1::PlanChannelResponse plan;
  grpc::ClientContext plan_ctx;
  grpc::Status st = stub->PlanChannel(&plan_ctx, plan_request, &plan);
  if (!st.ok()) return FromGrpc(st);
  ChannelInfo info;
  info.id = plan.channel_id();
  info.peer = peer;
  info.service = service;
  std::unique_ptr<PendingRdmaChannel> pending;
  WireEndpoint mine;
  std::string reason = plan.plan().tcp_reason();
  if (plan.plan().has_path()) {
    auto created = PendingRdmaChannel::Create(PlanFromPath(plan.plan().path()));
    if (created.ok()) {
      pending = std::move(created).value();
      mine.rdma = pending->local();
    } else {
      reason = "RDMA setup failed: " + created.status().message();
    }
  }
  if (!mine.rdma) {
    mine.tcp = TcpEndpoint{};
    mine.transport_reason = reason;
  }
  v1::ConnectRequest request;
  request.set_channel_id(plan.channel_id());
  ToProto(mine, request.mutable_endpoint());
  v1::ConnectResponse reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options.timeout);
  st = stub->Connect(&ctx, request, &reply);
  if (!st.ok()) return FromGrpc(st);
  auto hold = HoldStream::Open(rpc.channel, plan.channel_id(), reply.lease(), rpc.reattach_timeout);
  auto theirs = FromProto(reply.peer());
  if (!theirs.ok()) return Held(theirs.status(), std::move(hold), "initiator");
  if (theirs.value().rdma && pending) {
    Status rtr = pending->ReadyToReceive(*theirs.value().rdma);
    if (!rtr.ok()) return Held(rtr, std::move(hold), "initiator");
    info.transport = ChannelTransport::kRdma;
    info.transport_reason = "RDMA path planned on both sides";
    info.handshake_ms = MsSince(start);
    LogRdma("connected", info.id, mine.rdma.value(), *theirs.value().rdma);
    return Held(pending->ReadyToSend(info), std::move(hold), "initiator");
  }
  if (!theirs.value().tcp) {
    return Held(Status::InvalidArgument("the peer answered RDMA to a TCP request"), std::move(hold),
                "initiator");
  }
  pending.reset();  // the acceptor fell back: the QP is discarded
  info.transport = ChannelTransport::kTcp;
  info.transport_reason =
      theirs.value().transport_reason.empty() ? reason : theirs.value().transport_reason;
  ClientLog().info("channel {:#x} to {} service {}: TCP: {}", info.id, peer, service,
                   info.transport_reason);
  info.handshake_ms = MsSince(start);
  return Held(TcpConnect(*theirs.value().tcp, info, options.timeout), std::move(hold), "initiator");
}

}  // namespace rdmad::internal
