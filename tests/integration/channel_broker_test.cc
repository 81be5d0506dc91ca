// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The channel broker between two real rdmad processes on loopback, driven
// through the local API's gRPC calls (no client library yet): B's app
// Listens on "svc", A's app plans and connects to ("B", "svc"); the
// endpoints cross both daemons. Without RDMA devices the plans say TCP.
// Negative paths: unknown peer, no such service, rejected, a second
// listener, a malformed endpoint (INVALID_ARGUMENT, the daemon keeps going).

#include <grpcpp/grpcpp.h>

#include <thread>

#include "gtest/gtest.h"
#include "rdmad/v1/rdmad.grpc.pb.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/grpc_node.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Process;
using testing::TcpEndpoint;
using testing::TempDir;
using Node = testing::GrpcNode;

class ChannelBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_.name = "A";
    b_.name = "B";
    for (Node* n : {&a_, &b_}) {
      n->socket = dir_.File(n->name + "/rdmad.sock");
      n->port = testing::FreeLoopbackPort();
    }
    ASSERT_NO_FATAL_FAILURE(Start(&a_, b_));
    ASSERT_NO_FATAL_FAILURE(Start(&b_, a_));
  }

  void Start(Node* n, const Node& peer) {
    std::string config = dir_.Write(
        n->name + ".toml", testing::LoopbackPeerConfig(n->socket, n->port, "socket_group = \"\"",
                                                       peer.name, peer.port));
    n->process = testing::StartPeeredDaemon(config, n->port, dir_.File(n->name + ".log"));
    ASSERT_TRUE(testing::WaitForPath(n->socket, seconds(10), n->process.get()))
        << n->process->Describe() << "\n"
        << n->process->log();
    n->stub = v1::Rdmad::NewStub(
        grpc::CreateChannel("unix:" + n->socket, grpc::InsecureChannelCredentials()));
  }

  // Plans and connects from A to B's service; the status of the first
  // failing call, or the peer's endpoint.
  grpc::Status Connect(const std::string& peer, const std::string& service,
                       v1::ConnectResponse* reply, v1::Endpoint endpoint = TcpEndpoint(1111)) {
    grpc::Status status;
    v1::PlanChannelResponse plan;
    for (int i = 0; i < 50; ++i) {  // until A's session to B is up
      grpc::ClientContext ctx;
      v1::PlanChannelRequest req;
      req.set_peer(peer);
      req.set_service(service);
      status = a_.stub->PlanChannel(&ctx, req, &plan);
      if (!status.ok()) return status;
      grpc::ClientContext cctx;
      v1::ConnectRequest creq;
      v1::ChannelOpening* c = creq.add_channels();
      c->set_channel_id(plan.channel_ids(0));
      *c->mutable_endpoint() = endpoint;
      status = a_.stub->Connect(&cctx, creq, reply);
      if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return status;
      std::this_thread::sleep_for(milliseconds(100));
    }
    return status;
  }

  std::string Logs() { return a_.process->log() + "\n---\n" + b_.process->log(); }

  TempDir dir_;
  Node a_;
  Node b_;
};

// B's listener: answers each IncomingChannel with accept (or a rejection).
void Serve(v1::Rdmad::Stub* stub, grpc::ClientContext* ctx, bool accept,
           v1::IncomingChannel* seen) {
  v1::ListenRequest req;
  req.set_service("svc");
  auto reader = stub->Listen(ctx, req);
  v1::ListenEvent event;
  while (reader->Read(&event)) {
    if (!event.has_incoming()) continue;
    *seen = event.incoming();
    grpc::ClientContext actx;
    if (accept) {
      v1::AcceptRequest a;
      a.set_request_id(event.incoming().request_id());
      *a.add_endpoints() = TcpEndpoint(2222);
      v1::AcceptResponse r;
      EXPECT_TRUE(stub->Accept(&actx, a, &r).ok());
    } else {
      v1::RejectRequest r;
      r.set_request_id(event.incoming().request_id());
      r.set_reason("busy");
      v1::RejectResponse resp;
      EXPECT_TRUE(stub->Reject(&actx, r, &resp).ok());
    }
  }
  reader->Finish();
}

TEST_F(ChannelBrokerTest, EndpointsCrossBothDaemons) {
  grpc::ClientContext listen;
  v1::IncomingChannel seen;
  std::jthread app_b(Serve, b_.stub.get(), &listen, true, &seen);
  std::this_thread::sleep_for(milliseconds(300));
  v1::ConnectResponse reply;
  grpc::Status status = Connect("B", "svc", &reply);
  EXPECT_TRUE(status.ok()) << status.error_message() << "\n" << Logs();
  ASSERT_EQ(reply.channels_size(), 1);
  EXPECT_EQ(reply.channels(0).peer().tcp().port(), 2222u);
  ASSERT_EQ(seen.channels_size(), 1);
  EXPECT_EQ(seen.channels(0).endpoint().tcp().port(), 1111u);
  EXPECT_FALSE(seen.plan().tcp_reason().empty());

  // A second listener on the same name.
  grpc::ClientContext second;
  v1::ListenRequest req;
  req.set_service("svc");
  auto reader = b_.stub->Listen(&second, req);
  v1::ListenEvent event;
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::ALREADY_EXISTS);

  listen.TryCancel();
  app_b.join();
}

TEST_F(ChannelBrokerTest, NegativePathsAreClearStatuses) {
  v1::ConnectResponse reply;
  EXPECT_EQ(Connect("nobody", "svc", &reply).error_code(), grpc::StatusCode::NOT_FOUND);
  grpc::Status status = Connect("B", "svc", &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
  EXPECT_NE(status.error_message().find("no service svc on"), std::string::npos);

  v1::Endpoint bad;
  bad.mutable_rdma()->set_qpn(0x1000000);
  bad.mutable_rdma()->set_gid(std::string(16, '\1'));
  status = Connect("B", "svc", &reply, bad);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();

  grpc::ClientContext listen;
  v1::IncomingChannel seen;
  std::jthread app_b(Serve, b_.stub.get(), &listen, false, &seen);
  std::this_thread::sleep_for(milliseconds(300));
  status = Connect("B", "svc", &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(), "rejected: busy");
  listen.TryCancel();
  app_b.join();

  grpc::ClientContext ctx;  // the daemon still serves
  v1::GetStatusResponse st;
  EXPECT_TRUE(a_.stub->GetStatus(&ctx, v1::GetStatusRequest(), &st).ok());
}

// A batch by hand: a plan of 3, one Connect, one IncomingChannel with the
// other two, one Accept for all (a wrong count first). Malformed batches
// are INVALID_ARGUMENT and the daemons keep going.
TEST_F(ChannelBrokerTest, ABatchIsOnePlanOneConnectAndOneAccept) {
  grpc::ClientContext too_many;
  v1::PlanChannelRequest big;
  big.set_peer("B");
  big.set_service("svc");
  big.set_count(65);
  v1::PlanChannelResponse plan;
  EXPECT_EQ(a_.stub->PlanChannel(&too_many, big, &plan).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  grpc::ClientContext listen;
  std::jthread app_b([&] {
    v1::ListenRequest req;
    req.set_service("svc");
    auto reader = b_.stub->Listen(&listen, req);
    v1::ListenEvent event;
    while (reader->Read(&event)) {
      if (!event.has_incoming()) continue;
      EXPECT_EQ(event.incoming().channels_size(), 3);
      v1::AcceptRequest a;
      a.set_request_id(event.incoming().request_id());
      *a.add_endpoints() = TcpEndpoint(3000);
      *a.add_endpoints() = TcpEndpoint(3001);
      v1::AcceptResponse r;
      grpc::ClientContext short_ctx;
      EXPECT_EQ(b_.stub->Accept(&short_ctx, a, &r).error_code(),
                grpc::StatusCode::INVALID_ARGUMENT);
      *a.add_endpoints() = TcpEndpoint(3002);
      grpc::ClientContext actx;
      EXPECT_TRUE(b_.stub->Accept(&actx, a, &r).ok());
      EXPECT_EQ(r.leases_size(), 3);
    }
    reader->Finish();
  });
  std::this_thread::sleep_for(milliseconds(300));
  grpc::Status status;
  v1::ConnectResponse reply;
  for (int i = 0; i < 50; ++i) {  // until A's session to B is up
    grpc::ClientContext pctx;
    v1::PlanChannelRequest req = big;
    req.set_count(3);
    ASSERT_TRUE(a_.stub->PlanChannel(&pctx, req, &plan).ok());
    ASSERT_EQ(plan.channel_ids_size(), 3);
    v1::ConnectRequest creq;
    for (uint64_t id : plan.channel_ids()) {
      v1::ChannelOpening* c = creq.add_channels();
      c->set_channel_id(id);
      *c->mutable_endpoint() = TcpEndpoint(1111);
    }
    if (i == 0) {  // a stranger's id in the batch
      v1::ConnectRequest bad = creq;
      bad.mutable_channels(2)->set_channel_id(12345);
      grpc::ClientContext bctx;
      EXPECT_EQ(a_.stub->Connect(&bctx, bad, &reply).error_code(), grpc::StatusCode::NOT_FOUND);
    }
    grpc::ClientContext cctx;
    status = a_.stub->Connect(&cctx, creq, &reply);
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(status.ok()) << status.error_message() << "\n" << Logs();
  ASSERT_EQ(reply.channels_size(), 3);
  EXPECT_EQ(reply.channels(0).peer().tcp().port(), 3000u);
  EXPECT_EQ(reply.channels(1).peer().tcp().port(), 3001u);
  EXPECT_EQ(reply.channels(2).peer().tcp().port(), 3002u);
  EXPECT_FALSE(reply.channels(2).lease().empty());

  // One lifeline for the three: one released, its event alone; the stream
  // cancelled, the other two closed.
  grpc::ClientContext hold;
  v1::HoldChannelRequest hreq;
  for (uint64_t id : plan.channel_ids()) hreq.add_channel_ids(id);
  auto reader = a_.stub->HoldChannel(&hold, hreq);
  reader->WaitForInitialMetadata();
  EXPECT_EQ(hold.GetServerInitialMetadata().count("rdmad-lease-bin"), 0u);  // Connect gave them
  grpc::ClientContext rctx;
  v1::ReleaseChannelRequest release;
  release.set_channel_id(plan.channel_ids(1));
  v1::ReleaseChannelResponse released;
  ASSERT_TRUE(a_.stub->ReleaseChannel(&rctx, release, &released).ok());
  v1::ChannelEvent event;
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_TRUE(event.closed());
  EXPECT_EQ(event.channel_id(), plan.channel_ids(1));
  hold.TryCancel();
  while (reader->Read(&event)) {
  }
  reader->Finish();
  auto state_of = [&](uint64_t id) {
    grpc::ClientContext lctx;
    v1::ListChannelsResponse table;
    EXPECT_TRUE(a_.stub->ListChannels(&lctx, v1::ListChannelsRequest(), &table).ok());
    for (const auto& c : table.channels()) {
      if (c.id() == id) return c.state() + ": " + c.reason();
    }
    return std::string("not listed");
  };
  for (int i = 0; i < 50 && state_of(plan.channel_ids(2)).rfind("closed", 0) != 0; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(state_of(plan.channel_ids(0)), "closed: the application went away");
  EXPECT_EQ(state_of(plan.channel_ids(2)), "closed: the application went away");
  EXPECT_EQ(state_of(plan.channel_ids(1)), "closed: closed by the application");
  listen.TryCancel();
  app_b.join();
}

}  // namespace
}  // namespace rdmad
