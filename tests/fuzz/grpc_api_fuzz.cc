// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: the daemon's real gRPC services end to end, in process.
// Started once: the local API server (LocalService, on a socketpair handed
// over as the daemon's accept loop does) over a fake DaemonCore with a real
// broker, and the peer listener (PeerService on 127.0.0.1, an ephemeral
// port) over a PeerInbound wired to that broker. Each record of the input
// (fuzz_support.h) is one call: the op byte picks a method of Rdmad or
// RdmadPeer (in the order of the .proto files) and the payload is sent as
// the request's bytes as they are, so the server's own parsing is fuzzed
// too. Every call must end with a status: unary calls within their
// deadline, streams after a few messages or a cancel; a call that never
// completes is a hang.

#include <grpcpp/create_channel_posix.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/socket.h>

#include <vector>

#include "daemon/peers/fake_peer_link.h"
#include "daemon/policy/path_policy.h"
#include "daemon/rpc/grpc_api_server.h"
#include "daemon/rpc/peer_server.h"
#include "rdmad/v1/peer.grpc.pb.h"
#include "rdmad/v1/rdmad.grpc.pb.h"
#include "tests/fuzz/channel_world.h"
#include "tests/fuzz/fuzz_support.h"

using namespace rdmad;
using namespace std::chrono_literals;

namespace {

// A plaintext peer listener on any port of 127.0.0.1.
rdmad::PeerTransportOptions LoopbackPeerOptions() {
  rdmad::PeerTransportOptions o;
  o.listen_address = "127.0.0.1";
  return o;
}

// This daemon's link to itself, through the peer service's own handler.
std::shared_ptr<FakePeerLink> SelfLink(PeerInbound* inbound) {
  auto link = std::make_shared<FakePeerLink>("127.0.0.1:7581");
  link->open_batch_answer = [inbound](const OpenChannelCall& call) {
    return inbound->OpenChannel(call, "ipv4:127.0.0.1:40000");
  };
  link->close_answer = [inbound](const CloseChannelCall& call) {
    return inbound->CloseChannel(call);
  };
  return link;
}

class FuzzCore final : public DaemonCore, private BrokerNetwork {
 public:
  FuzzCore() {
    inbound_.SetChannels(broker_.get());
    inbound_.Start();
  }

  DaemonStatus GetStatus() const override {
    DaemonStatus s;
    s.version = "0.1.0";
    s.device_count = uint32_t(inventory_->devices.size());
    return s;
  }
  EventBus& events() override { return events_; }
  std::shared_ptr<const Inventory> inventory() const override { return inventory_; }
  StatusOr<std::map<std::string, uint64_t>> PortCounters(const std::string& device,
                                                         int port) const override {
    return Status::NotFound("no counters in the fuzz core");
  }
  StatusOr<PathDecision> ResolvePath(const PathRequest& request) const override {
    return rdmad::ResolvePath(*inventory_, config_, request, &lab_routes_);
  }
  std::vector<PeerSnapshot> ListPeers() const override { return {}; }
  StatusOr<std::shared_ptr<PeerSession>> Peer(const std::string& name) override {
    return Status::InvalidArgument("no peers in the fuzz core");
  }
  Broker* broker() override { return broker_.get(); }
  PoolRegistry* pool() override { return &pool_; }
  PeerInbound* inbound() { return &inbound_; }

 private:
  // BrokerNetwork: this daemon ("self") and peer B, which is down.
  StatusOr<BrokerPeer> FindPeer(const std::string& name, std::optional<uid_t>) override {
    if (name == "self")
      return BrokerPeer{"self", "127.0.0.1:7581", fuzz::kSelfInstance,
                        std::shared_ptr<PeerLink>(loop_)};
    if (name == "B") {
      return BrokerPeer{"B", "192.0.2.7:7581", "", Status::Unavailable("peer B: refused")};
    }
    return Status::NotFound("unknown peer " + name);
  }
  StatusOr<std::shared_ptr<PeerLink>> LinkToInstance(const std::string& id) override {
    if (id == fuzz::kSelfInstance) return std::static_pointer_cast<PeerLink>(loop_);
    return Status::NotFound("no session");
  }
  Status SendEvent(const std::string& id, const PeerEvent& e) override {
    return inbound_.Send(id, e);
  }

  BrokerOptions Options() {
    BrokerOptions o;
    o.host_name = "fuzzhost";
    o.instance_id = fuzz::kSelfInstance;
    o.accept_deadline = 20ms;
    o.open_timeout = 1000ms;
    o.network = this;
    o.source_address = &no_routes_;
    return o;
  }

  Config config_ = DefaultConfig();
  std::shared_ptr<const Inventory> inventory_ =
      std::make_shared<const Inventory>(fuzz::FakeInventory());
  EventBus events_;
  SourceAddressTable no_routes_;
  // Every peer is reached from the lab's address.
  struct LabRoutes final : SourceAddressLookup {
    std::optional<std::string> SourceAddressFor(const std::string&) const override {
      return "192.0.2.1";
    }
  } lab_routes_;
  FixedHello hello_{fuzz::SelfHello()};
  PeerInbound inbound_{hello_};
  std::shared_ptr<FakePeerLink> loop_ = SelfLink(&inbound_);
  std::unique_ptr<Broker> broker_ = std::make_unique<Broker>(Options());
  PoolRegistry pool_;
};

struct Method {
  std::string path;
  bool streaming = false;
  grpc::GenericStub* stub = nullptr;
};

// Started once and never torn down: the process ends with it.
struct Servers {
  FuzzCore core;
  std::unique_ptr<ApiServer> api;
  std::unique_ptr<PeerServer> peer;
  std::unique_ptr<grpc::GenericStub> local_stub;
  std::unique_ptr<grpc::GenericStub> peer_stub;
  std::vector<Method> methods;
  grpc::CompletionQueue cq;

  Servers() {
    auto api_server = MakeGrpcApiServer(&core);
    FUZZ_CHECK_MSG(api_server.ok(), api_server.status().ToString());
    api = std::move(api_server).value();
    int fds[2];
    FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    api->AddConnection(fds[0]);
    local_stub = std::make_unique<grpc::GenericStub>(
        grpc::CreateInsecureChannelFromFd("rdmad-fuzz", fds[1]));

    auto transport = MakeGrpcPeerTransport(LoopbackPeerOptions(), core.inbound());
    FUZZ_CHECK_MSG(transport.ok(), transport.status().ToString());
    peer = std::move(transport->server);
    peer_stub = std::make_unique<grpc::GenericStub>(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(peer->port()), grpc::InsecureChannelCredentials()));

    for (const auto* file :
         {v1::GetStatusRequest::descriptor()->file(), v1::HelloRequest::descriptor()->file()}) {
      for (int s = 0; s < file->service_count(); ++s) {
        const auto* service = file->service(s);
        grpc::GenericStub* stub = service->name() == "Rdmad" ? local_stub.get() : peer_stub.get();
        for (int m = 0; m < service->method_count(); ++m) {
          const auto* method = service->method(m);
          methods.push_back({"/" + service->full_name() + "/" + method->name(),
                             method->server_streaming(), stub});
        }
      }
    }
  }

  // Waits for tag; a call that never completes is a hang.
  bool Wait(void* tag, std::chrono::milliseconds limit) {
    void* got = nullptr;
    bool ok = false;
    auto deadline = std::chrono::system_clock::now() + limit;
    grpc::CompletionQueue::NextStatus next = cq.AsyncNext(&got, &ok, deadline);
    FUZZ_CHECK_MSG(next == grpc::CompletionQueue::GOT_EVENT, "a call did not complete");
    FUZZ_CHECK(got == tag);
    return ok;
  }

  void Call(const Method& method, std::string_view payload) {
    grpc::Slice slice(payload.data(), payload.size());
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    grpc::Status status;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 3s);
    if (!method.streaming) {
      auto call = method.stub->PrepareUnaryCall(&context, method.path, request, &cq);
      call->StartCall();
      call->Finish(&response, &status, this);
      Wait(this, 10s);
    } else {
      auto call = method.stub->PrepareCall(&context, method.path, &cq);
      call->StartCall(this);
      bool ok = Wait(this, 10s);
      if (ok) {
        call->Write(request, this);
        ok = Wait(this, 10s);
      }
      if (ok) {
        call->WritesDone(this);
        ok = Wait(this, 10s);
      }
      for (int reads = 0; ok && reads < 3; ++reads) {
        call->Read(&response, this);
        void* got = nullptr;
        auto next = cq.AsyncNext(&got, &ok, std::chrono::system_clock::now() + 5ms);
        if (next == grpc::CompletionQueue::TIMEOUT) {  // an open stream: let go
          context.TryCancel();
          ok = Wait(this, 10s);
          break;
        }
        FUZZ_CHECK(next == grpc::CompletionQueue::GOT_EVENT && got == this);
      }
      context.TryCancel();
      call->Finish(&status, this);
      Wait(this, 10s);
    }
    FUZZ_CHECK(status.error_code() >= grpc::StatusCode::OK &&
               status.error_code() <= grpc::StatusCode::UNAUTHENTICATED);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInit();
  static Servers* servers = new Servers();
  fuzz::Script script(data, size, /*max_calls=*/8);
  uint8_t op;
  std::string_view payload;
  while (script.Next(&op, &payload)) {
    servers->Call(servers->methods[op % servers->methods.size()], payload);
  }
  return 0;
}
