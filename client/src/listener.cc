// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The acceptor's side of the handshake: a Listener over the Listen stream.
// A request may be a batch (an initiator's ConnectMany): Accept sets up
// every channel of it and answers them with one Accept call, returns the
// first and hands out the others on the next Accepts without waiting.

#include <google/protobuf/arena.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "client/src/channel_client.h"
#include "client/src/client_log.h"
#include "client/src/completion_signal.h"
#include "client/src/handshake.h"
#include "client/src/heap_reserve.h"
#include "client/src/rdma/rdma_channel.h"
#include "client/src/tcp/tcp_channel.h"
#include "common/endpoint_convert.h"

namespace rdmad::internal {
namespace {

// One channel of a request on the acceptor's side, from its set-up to the
// daemon's answer.
struct Accepting {
  ChannelInfo info;
  std::optional<RdmaEndpoint> initiator;     // RDMA: the initiator's side
  std::unique_ptr<PendingRdmaChannel> rdma;  // RDMA: at RTR with the initiator's QP
  std::unique_ptr<TcpAcceptor> tcp;          // TCP: listening for the initiator
  WireEndpoint mine;
};

// The TCP fallback for reason: listen where the daemon planned.
Status ListenTcp(const v1::IncomingChannel& in, const std::string& reason, Accepting* a) {
  a->rdma.reset();
  std::string host = in.plan().tcp_bind_host().empty() ? "127.0.0.1" : in.plan().tcp_bind_host();
  auto acceptor = TcpAcceptor::Listen(host, RandomToken());
  if (!acceptor.ok()) return acceptor.status();
  a->tcp = std::move(acceptor).value();
  a->mine = WireEndpoint{};
  a->mine.tcp = a->tcp->local();
  a->mine.transport_reason = reason;
  a->info.transport = ChannelTransport::kTcp;
  a->info.transport_reason = reason;
  return Status::Ok();
}

// Sets up this side of channel id for the initiator's endpoint: RDMA when
// both sides have a path (the QP at RTR), else a TCP listener and why.
StatusOr<Accepting> Prepare(const v1::IncomingChannel& in, uint64_t id,
                            const v1::Endpoint& initiator_proto, const std::string& service,
                            const std::shared_ptr<CompletionGroup>& group, bool first_of_batch) {
  Accepting a;
  a.info.id = id;
  a.info.peer = in.peer();
  a.info.service = service;
  auto initiator = FromProto(initiator_proto);
  if (!initiator.ok()) return initiator.status();
  if (!initiator.value().rdma) {
    const std::string& why = initiator.value().transport_reason;
    RDMAD_RETURN_IF_ERROR(ListenTcp(
        in, why.empty() ? "the initiator chose TCP" : "the initiator's side: " + why, &a));
    return a;
  }
  if (!in.plan().has_path()) {
    RDMAD_RETURN_IF_ERROR(ListenTcp(in, in.plan().tcp_reason(), &a));
    return a;
  }
  auto pending = PendingRdmaChannel::Create(PlanFromChannelPlan(in.plan()), group);
  if (!pending.ok()) {
    RDMAD_RETURN_IF_ERROR(ListenTcp(in, "RDMA setup failed: " + pending.status().message(), &a));
    return a;
  }
  if (!first_of_batch) pending.value()->LogAtDebug();
  Status rtr = pending.value()->ReadyToReceive(*initiator.value().rdma, RailRole::kAcceptor);
  if (!rtr.ok()) {
    RDMAD_RETURN_IF_ERROR(ListenTcp(in, "RDMA RTR failed: " + rtr.message(), &a));
    return a;
  }
  a.rdma = std::move(pending).value();
  a.initiator = *initiator.value().rdma;
  a.mine.rdma = a.rdma->local();
  a.info.transport = ChannelTransport::kRdma;
  a.info.transport_reason = "RDMA path planned on both sides";
  return a;
}

// The channel once the daemon has the answer: RTS, or the initiator's TCP
// connection.
StatusOr<std::unique_ptr<Channel>> Finish(Accepting& a, std::unique_ptr<HoldStream> hold,
                                          HandshakeClock::time_point start, bool first_of_batch) {
  a.info.handshake_ms = MsSince(start);
  if (a.rdma) {
    LogRdma("accepted", a.info.id, *a.mine.rdma, *a.initiator, first_of_batch);
    return Held(a.rdma->ReadyToSend(a.info), std::move(hold), "acceptor");
  }
  ClientLog().info("channel {:#018x} from {}: TCP: {}", a.info.id, a.info.peer,
                   a.info.transport_reason);
  return Held(a.tcp->Accept(std::chrono::milliseconds(15000), a.info), std::move(hold), "acceptor");
}

// Accepts every channel of request in, first first. All or nothing: when
// one cannot finish, the others are closed and its error returned.
StatusOr<std::vector<std::unique_ptr<Channel>>> AcceptRequest(const DaemonRpc& rpc,
                                                              v1::Rdmad::Stub* stub,
                                                              const v1::IncomingChannel& in,
                                                              const std::string& service) {
  auto start = HandshakeClock::now();
  std::vector<Accepting> batch;
  if (in.channels().empty()) return Status::InvalidArgument("rdmad offered no channels");
  std::shared_ptr<CompletionGroup> group = BatchGroup(in.plan(), in.channels_size());
  ReserveThreadHeap(size_t(in.channels_size()) * kHeapPerChannel);  // heap_reserve.h says why
  for (const v1::ChannelOpening& c : in.channels()) {
    auto a = Prepare(in, c.channel_id(), c.endpoint(), service, group, batch.empty());
    if (!a.ok()) return a.status();
    batch.push_back(std::move(a).value());
  }
  google::protobuf::Arena arena;  // the answer's endpoints, freed at once
  auto& request = *google::protobuf::Arena::CreateMessage<v1::AcceptRequest>(&arena);
  request.set_request_id(in.request_id());
  for (const Accepting& a : batch) ToProto(a.mine, request.add_endpoints());
  grpc::ClientContext ctx;
  auto& response = *google::protobuf::Arena::CreateMessage<v1::AcceptResponse>(&arena);
  grpc::Status st = stub->Accept(&ctx, request, &response);
  if (!st.ok()) return StatusFromGrpc(st);
  std::vector<uint64_t> ids;
  std::vector<std::string> leases(response.leases().begin(), response.leases().end());
  for (const Accepting& a : batch) ids.push_back(a.info.id);
  auto channels = HoldAndFinish(rpc, ids, leases, [&](size_t i, std::unique_ptr<HoldStream> hold) {
    return Finish(batch[i], std::move(hold), start, i == 0);
  });
  if (channels.ok()) BatchLogged(("from " + in.peer() + " service " + service).c_str(), *channels);
  return channels;
}

// A registered service. A reader thread queues the daemon's requests; when
// the Listen stream breaks because rdmad went away, it registers the
// service again with the next rdmad (waiting up to reattach_timeout for
// it), so that a listening application outlives a restart of its daemon.
class GrpcListener final : public Listener {
 public:
  GrpcListener(DaemonRpc rpc, std::string service)
      : rpc_(std::move(rpc)), service_(std::move(service)) {}

  ~GrpcListener() override { Close(); }

  void Close() override {
    std::thread reader;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      stopping_ = true;
      if (context_) context_->TryCancel();
      queue_.clear();
      accepted_.clear();
      cv_.notify_all();
      SyncReady();
      reader = std::move(reader_thread_);
    }
    if (reader.joinable()) reader.join();
  }

  StatusOr<int> RequestFd() override {
    std::lock_guard lock(mu_);
    return ready_.Open(Ready());
  }

  Status Start() {
    RDMAD_RETURN_IF_ERROR(Register(std::nullopt));
    reader_thread_ = std::thread([this] { ReadLoop(); });
    return Status::Ok();
  }

  const std::string& service() const override { return service_; }

  StatusOr<std::unique_ptr<Channel>> Accept(std::chrono::milliseconds timeout) override {
    {
      std::lock_guard lock(mu_);
      if (!stopping_ && !accepted_.empty()) {  // the rest of a batch
        std::unique_ptr<Channel> channel = std::move(accepted_.front());
        accepted_.pop_front();
        SyncReady();
        return channel;
      }
    }
    auto next = Next(timeout);
    if (!next.ok()) return next.status();
    auto channels = AcceptRequest(rpc_, rpc_.stub.get(), next.value(), service_);
    if (!channels.ok()) return channels.status();
    std::unique_ptr<Channel> first = std::move(channels.value().front());
    std::lock_guard lock(mu_);
    for (size_t i = 1; i < channels.value().size(); ++i) {
      accepted_.push_back(std::move(channels.value()[i]));
    }
    SyncReady();
    return first;
  }

  Status Reject(const std::string& reason, std::chrono::milliseconds timeout) override {
    auto next = Next(timeout);
    if (!next.ok()) return next.status();
    v1::RejectRequest request;
    request.set_request_id(next.value().request_id());
    request.set_reason(reason);
    grpc::ClientContext ctx;
    v1::RejectResponse response;
    return StatusFromGrpc(rpc_.stub->Reject(&ctx, request, &response));
  }

 private:
  // Opens the Listen stream and reads its registration; until: re-registering
  // after a restart (wait for the daemon up to then).
  Status Register(std::optional<HandshakeClock::time_point> until) {
    // Re-registering: wait for the next rdmad first. The stream itself has
    // no deadline (it lasts as long as the listener).
    if (until && !rpc_.channel->WaitForConnected(std::chrono::system_clock::now() +
                                                 (*until - HandshakeClock::now()))) {
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
    reader_ = rpc_.stub->Listen(raw, request);
    v1::ListenEvent first;
    if (!reader_->Read(&first) || !first.has_registered()) {
      grpc::Status st = reader_->Finish();
      return st.ok() ? Status::Internal("Listen: no registration") : StatusFromGrpc(st);
    }
    return Status::Ok();
  }

  void ReadLoop() {
    v1::ListenEvent event;
    for (;;) {
      while (reader_->Read(&event)) {
        if (!event.has_incoming()) continue;
        std::lock_guard lock(mu_);
        queue_.push_back(std::move(*event.mutable_incoming()));
        cv_.notify_all();
        SyncReady();
      }
      grpc::Status finished = reader_->Finish();
      Status st = StatusFromGrpc(finished);
      if (Reregister(finished)) continue;
      std::lock_guard lock(mu_);
      ended_ = st.ok() ? Status::Unavailable("the daemon ended the Listen stream") : st;
      done_ = true;
      cv_.notify_all();
      SyncReady();
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
      SyncReady();
    }
    if (!DaemonWentAway(finished.error_code()) || rpc_.reattach_timeout.count() <= 0) {
      ClientLog().info("service {}: the Listen stream ended ({})", service_,
                       finished.error_message());
      return false;
    }
    ClientLog().info("service {}: the Listen stream to rdmad broke ({}); registering again",
                     service_, finished.error_message());
    auto until = HandshakeClock::now() + rpc_.reattach_timeout;
    Status st = Register(until);
    // Tried again: a call that raced the old daemon's connection closing
    // (UNAVAILABLE), and the old registration still in place for a moment
    // (ALREADY_EXISTS: a stream the daemon has not seen end yet).
    auto again = [](const Status& s) {
      return s.code() == StatusCode::kAlreadyExists || s.code() == StatusCode::kUnavailable ||
             s.code() == StatusCode::kCancelled || s.code() == StatusCode::kUnknown;
    };
    while (again(st) && HandshakeClock::now() < until) {
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
    auto ready = [this] { return !queue_.empty() || done_ || stopping_; };
    if (timeout.count() < 0) {
      cv_.wait(lock, ready);
    } else if (!cv_.wait_for(lock, timeout, ready)) {
      return Status::DeadlineExceeded("no channel request for " + service_);
    }
    if (stopping_) return Status::Cancelled("the listener on " + service_ + " was closed");
    if (queue_.empty()) return ended_;
    v1::IncomingChannel in = std::move(queue_.front());
    queue_.pop_front();
    SyncReady();
    return in;
  }

  // Whether Accept would not wait for a request; mu_ held.
  bool Ready() const { return !queue_.empty() || !accepted_.empty() || done_ || stopping_; }
  void SyncReady() { ready_.Set(Ready()); }

  const DaemonRpc rpc_;  // its stub makes the listener's calls
  const std::string service_;
  // The reader thread's (Start's before it runs).
  std::unique_ptr<grpc::ClientReader<v1::ListenEvent>> reader_;
  std::thread reader_thread_;
  std::mutex mu_;
  // Channels of a batch accepted and not handed out yet.
  std::deque<std::unique_ptr<Channel>> accepted_;  // guarded by mu_
  std::condition_variable cv_;
  std::unique_ptr<grpc::ClientContext> context_;  // the open stream's; guarded by mu_
  bool stopping_ = false;                         // guarded by mu_
  std::deque<v1::IncomingChannel> queue_;         // guarded by mu_
  bool done_ = false;                             // guarded by mu_
  Status ended_;                                  // guarded by mu_
  ReadySignal ready_;                             // guarded by mu_
};

}  // namespace

StatusOr<std::unique_ptr<Listener>> ListenOn(DaemonRpc rpc, const std::string& service) {
  auto listener = std::make_unique<GrpcListener>(std::move(rpc), service);
  RDMAD_RETURN_IF_ERROR(listener->Start());
  return std::unique_ptr<Listener>(std::move(listener));
}

}  // namespace rdmad::internal
