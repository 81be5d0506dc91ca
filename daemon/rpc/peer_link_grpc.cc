// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/peer_link_grpc.h"

#include <google/protobuf/arena.h>
#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <mutex>
#include <set>

#include "daemon/rpc/channel_convert.h"
#include "daemon/rpc/grpc_status.h"
#include "daemon/rpc/peer_convert.h"
#include "rdmad/v1/peer.grpc.pb.h"

namespace rdmad {
namespace {

constexpr int kMaxMessage = 1 << 20;

// One Session stream. Owned by the session (as PeerStream); the destructor
// cancels and waits for OnDone, after which gRPC no longer touches it.
class SessionReader final : public grpc::ClientReadReactor<v1::PeerEvent>, public PeerStream {
 public:
  SessionReader(std::shared_ptr<grpc::Channel> channel, v1::RdmadPeer::Stub* stub,
                const SessionOpen& open, const PeerKeyAuth& auth,
                std::shared_ptr<PeerStreamObserver> observer)
      : channel_(std::move(channel)), observer_(std::move(observer)) {
    ToProto(open, &request_);
    if (auth.key) context_.AddMetadata(kPeerAuthMetadata, auth.key->Sign("Session", auth.node));
    stub->async()->Session(&context_, &request_, this);
    StartRead(&event_);
    StartCall();
  }

  ~SessionReader() override {
    context_.TryCancel();
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return done_; });
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended; OnDone follows with the status
    observer_->OnStreamEvent(FromProto(event_));
    StartRead(&event_);
  }

  void OnDone(const grpc::Status& status) override {
    observer_->OnStreamEnd(FromGrpcStatus(status));
    std::lock_guard lock(mu_);
    done_ = true;
    cv_.notify_all();
  }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::shared_ptr<PeerStreamObserver> observer_;
  grpc::ClientContext context_;
  v1::SessionRequest request_;
  v1::PeerEvent event_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

// Counts a link's unary calls until each is destroyed, context and all.
// gRPC 1.51 runs callbacks on threads that must not drop the last
// reference to a grpc::Channel: such a thread would join itself and free
// the queue it polls (grpc/grpc#32584). A ClientContext holds a reference,
// and a callback's captures are destroyed on that thread, so the link
// waits for every call to be gone before it lets go of its own channel.
class CallCount {
 public:
  void Add() {
    std::lock_guard lock(mu_);
    ++live_;
  }
  void Remove() {
    std::lock_guard lock(mu_);
    --live_;
    cv_.notify_all();
  }
  void WaitNone() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return live_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int live_ = 0;  // guarded by mu_
};

// A unary call in flight (cancelled when the link goes away).
struct UnaryCall {
  explicit UnaryCall(CallCount* count) : counted(count) {}
  virtual ~UnaryCall() = default;

  struct Counted {
    explicit Counted(CallCount* c) : count(c) { count->Add(); }
    ~Counted() { count->Remove(); }
    CallCount* count;
  };
  Counted counted;  // first member: destroyed last, after the context
  grpc::ClientContext context;
};

template <typename Request, typename Response>
struct Call : UnaryCall {
  using UnaryCall::UnaryCall;
  // The stub's callback method for this call.
  using Method = void (v1::RdmadPeer::StubInterface::async_interface::*)(
      grpc::ClientContext*, const Request*, Response*, std::function<void(grpc::Status)>);
  // Both messages on one arena (an OpenChannel's carry a batch of
  // endpoints): freed at once with the call.
  google::protobuf::Arena arena;
  Request& request = *google::protobuf::Arena::CreateMessage<Request>(&arena);
  Response& response = *google::protobuf::Arena::CreateMessage<Response>(&arena);
};

using HelloCall = Call<v1::HelloRequest, v1::HelloResponse>;
using OpenCall = Call<v1::OpenChannelRequest, v1::OpenChannelResponse>;
using CloseCall = Call<v1::CloseChannelRequest, v1::CloseChannelResponse>;
using ReclaimCall = Call<v1::ReclaimChannelRequest, v1::ReclaimChannelResponse>;

// A close is a small message to a live peer; a peer that does not answer
// this fast is as good as gone (its session then says so).
constexpr std::chrono::milliseconds kCloseTimeout{5000};

class GrpcPeerLink final : public PeerLink {
 public:
  GrpcPeerLink(std::string target, std::shared_ptr<grpc::Channel> channel, PeerKeyAuth auth)
      : target_(std::move(target)),
        channel_(std::move(channel)),
        stub_(v1::RdmadPeer::NewStub(channel_)),
        auth_(std::move(auth)) {}

  ~GrpcPeerLink() override {
    std::set<std::shared_ptr<UnaryCall>> calls;
    {
      std::lock_guard lock(mu_);
      calls = calls_;
    }
    for (auto& call : calls) call->context.TryCancel();  // may complete inline
    calls.clear();
    count_.WaitNone();
  }

  const std::string& target() const override { return target_; }

  void Hello(const PeerHello& self, std::chrono::milliseconds timeout, HelloDone done) override {
    auto call = std::make_shared<HelloCall>(&count_);
    ToProto(self, call->request.mutable_self());
    Launch(call, timeout, "Hello", &v1::RdmadPeer::StubInterface::async_interface::Hello,
           [this, done = std::move(done), asking = self.instance_id](const grpc::Status& status,
                                                                     HelloCall& c) {
             StatusOr<PeerHello> hello =
                 Result(status, c.response, IdentityOf(c.context.auth_context()));
             if (hello.ok() && auth_.key) {
               Status proven = CheckAnswerProof(c.context, asking, hello->host_name);
               if (!proven.ok()) hello = proven;
             }
             done(std::move(hello));
           });
  }

  void OpenChannel(const OpenChannelCall& open, std::chrono::milliseconds timeout,
                   OpenDone done) override {
    auto call = std::make_shared<OpenCall>(&count_);
    ToProto(open, &call->request);
    Launch(call, timeout, "OpenChannel",
           &v1::RdmadPeer::StubInterface::async_interface::OpenChannel,
           [done = std::move(done)](const grpc::Status& status, OpenCall& c) {
             if (!status.ok()) {
               done(FromGrpcStatus(status));
             } else {
               done(EndpointsFromProto(c.response.acceptors(), "the peer's acceptors"));
             }
           });
  }

  void CloseChannel(const CloseChannelCall& close, CloseDone done) override {
    auto call = std::make_shared<CloseCall>(&count_);
    call->request.set_channel_id(close.channel_id);
    call->request.set_reason(close.reason);
    call->request.set_initiator_instance(close.initiator_instance);
    Launch(call, kCloseTimeout, "CloseChannel",
           &v1::RdmadPeer::StubInterface::async_interface::CloseChannel,
           [done = std::move(done)](const grpc::Status& status, CloseCall&) {
             done(FromGrpcStatus(status));
           });
  }

  void ReclaimChannel(const ReclaimChannelCall& reclaim, CloseDone done) override {
    auto call = std::make_shared<ReclaimCall>(&count_);
    call->request.set_channel_id(reclaim.channel_id);
    call->request.set_previous_instance(reclaim.previous_instance);
    call->request.set_instance(reclaim.instance);
    Launch(call, kCloseTimeout, "ReclaimChannel",
           &v1::RdmadPeer::StubInterface::async_interface::ReclaimChannel,
           [done = std::move(done)](const grpc::Status& status, ReclaimCall&) {
             done(FromGrpcStatus(status));
           });
  }

  std::unique_ptr<PeerStream> OpenSession(const SessionOpen& open,
                                          std::shared_ptr<PeerStreamObserver> observer) override {
    return std::make_unique<SessionReader>(channel_, stub_.get(), open, auth_, std::move(observer));
  }

 private:
  // The peer's Hello, if well formed and from the node its certificate
  // names (docs/security.md).
  // With the peer key, the answer must prove the node its host name says.
  Status CheckAnswerProof(const grpc::ClientContext& context, const std::string& asking,
                          const std::string& host_name) {
    const auto& metadata = context.GetServerInitialMetadata();
    auto it = metadata.find(kPeerAuthMetadata);
    if (it == metadata.end()) {
      return Status::Unauthenticated("the daemon at " + target_ +
                                     " did not prove the peer key in its Hello answer");
    }
    auto node = auth_.key->Verify(HelloAnswerMethod(asking),
                                  std::string_view(it->second.data(), it->second.size()));
    if (!node.ok()) {
      return Status::Unauthenticated("the daemon at " + target_ +
                                     ": its Hello answer's proof: " + node.status().message());
    }
    if (*node != host_name) {
      return Status::Unauthenticated("the daemon at " + target_ + " says it is " + host_name +
                                     " but its proof names " + *node);
    }
    return Status::Ok();
  }

  static StatusOr<PeerHello> Result(const grpc::Status& status, const v1::HelloResponse& reply,
                                    const PeerIdentity& identity) {
    if (!status.ok()) return FromGrpcStatus(status);
    if (!reply.has_self()) return Status::InvalidArgument("the peer's reply has no self");
    PeerHello hello = FromProto(reply.self());
    Status valid = ValidateHello(hello, "the peer's reply: self");
    if (!valid.ok()) return valid;
    Status covered = identity.Covers(hello.host_name);
    if (!covered.ok()) return covered;
    return hello;
  }

  // Starts the call (method of the stub's async interface) with a deadline;
  // finish runs with its status once, then the link forgets it.
  template <typename CallT, typename Finish>
  void Launch(const std::shared_ptr<CallT>& call, std::chrono::milliseconds timeout,
              const char* name, typename CallT::Method method, Finish finish) {
    call->context.set_deadline(std::chrono::system_clock::now() + timeout);
    if (auth_.key) call->context.AddMetadata(kPeerAuthMetadata, auth_.key->Sign(name, auth_.node));
    {
      std::lock_guard lock(mu_);
      calls_.insert(call);
    }
    (stub_->async()->*method)(&call->context, &call->request, &call->response,
                              [this, call, finish = std::move(finish)](grpc::Status status) {
                                finish(status, *call);
                                std::lock_guard lock(mu_);
                                calls_.erase(call);
                              });
  }

  const std::string target_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::RdmadPeer::Stub> stub_;
  std::mutex mu_;
  std::set<std::shared_ptr<UnaryCall>> calls_;  // guarded by mu_; to cancel
  CallCount count_;
  const PeerKeyAuth auth_;
};

class GrpcPeerConnector final : public PeerConnector {
 public:
  GrpcPeerConnector(std::shared_ptr<grpc::ChannelCredentials> creds, PeerKeyAuth auth)
      : creds_(std::move(creds)), auth_(std::move(auth)) {}

  StatusOr<std::shared_ptr<PeerLink>> Connect(const std::string& target) override {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 1000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 2000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    // Our own backoff decides when to retry: no shared subchannel in
    // transient failure, a short transport backoff, no HTTP proxy.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
    args.SetMaxReceiveMessageSize(kMaxMessage);
    auto channel = grpc::CreateCustomChannel(target, creds_, args);
    if (!channel) return Status::Internal("cannot make a gRPC channel to " + target);
    return std::shared_ptr<PeerLink>(
        std::make_shared<GrpcPeerLink>(target, std::move(channel), auth_));
  }

 private:
  std::shared_ptr<grpc::ChannelCredentials> creds_;
  PeerKeyAuth auth_;
};

}  // namespace

std::string HelloAnswerMethod(std::string_view asking_instance) {
  return "Hello answer to " + std::string(asking_instance);
}

std::shared_ptr<PeerConnector> MakeGrpcPeerConnector(
    std::shared_ptr<grpc::ChannelCredentials> creds, PeerKeyAuth auth) {
  return std::make_shared<GrpcPeerConnector>(std::move(creds), std::move(auth));
}

}  // namespace rdmad
