// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The gRPC peer transport on loopback: the real listener (an ephemeral
// port on 127.0.0.1), the real connector, PeerInbound behind them.

#include "daemon/rpc/peer_server.h"

#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "daemon/peers/fake_inbound_channels.h"
#include "daemon/rpc/peer_convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rdmad/v1/peer.grpc.pb.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

PeerHello Hello(const std::string& host, const std::string& id) {
  PeerHello h;
  h.protocol = {1, 0};
  h.host_name = host;
  h.daemon_version = "0.1.0";
  h.instance_id = id;
  return h;
}

const PeerHello kServer = Hello("server", "11111111111111111111111111111111");
const PeerHello kClient = Hello("client", "22222222222222222222222222222222");

// A plaintext listener on 127.0.0.1:port (0: any).
PeerTransportOptions Loopback(int port = 0) {
  PeerTransportOptions o;
  o.listen_address = "127.0.0.1";
  o.listen_port = port;
  return o;
}

// Collects a PeerLink's callbacks for the test thread.
struct Waiter {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<StatusOr<PeerHello>> hello;
  std::vector<PeerEvent> events;
  std::optional<Status> end;

  template <typename Pred>
  bool Wait(Pred pred) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(20), pred);
  }
};

// Records a Session stream's events and end in a Waiter.
class Recorder final : public PeerStreamObserver {
 public:
  explicit Recorder(Waiter& w) : w_(w) {}
  void OnStreamEvent(const PeerEvent& event) override {
    std::lock_guard lock(w_.mu);
    w_.events.push_back(event);
    w_.cv.notify_all();
  }
  void OnStreamEnd(const Status& status) override {
    std::lock_guard lock(w_.mu);
    w_.end = status;
    w_.cv.notify_all();
  }

 private:
  Waiter& w_;
};

class PeerServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto transport = MakeGrpcPeerTransport(Loopback(), &inbound_);
    ASSERT_TRUE(transport.ok()) << transport.status().ToString();
    server_ = std::move(transport->server);
    connector_ = transport->connector;
    target_ = "127.0.0.1:" + std::to_string(server_->port());
    inbound_.Start();
  }
  void TearDown() override {
    inbound_.Close();
    if (server_) server_->Shutdown(milliseconds(1000));
  }

  std::unique_ptr<v1::RdmadPeer::Stub> RawStub() {
    return v1::RdmadPeer::NewStub(grpc::CreateChannel(target_, grpc::InsecureChannelCredentials()));
  }

  FakeInboundChannels broker_;  // outlives inbound_, which may call it to the end
  FixedHello hello_{kServer};
  PeerInbound inbound_{hello_};
  std::unique_ptr<PeerServer> server_;
  std::shared_ptr<PeerConnector> connector_;
  std::string target_;
};

TEST_F(PeerServerTest, HelloAndSessionOverLoopback) {
  auto link = connector_->Connect(target_);
  ASSERT_TRUE(link.ok());
  Waiter w;
  (*link)->Hello(kClient, milliseconds(5000), [&](StatusOr<PeerHello> r) {
    std::lock_guard lock(w.mu);
    w.hello = std::move(r);
    w.cv.notify_all();
  });
  ASSERT_TRUE(w.Wait([&] { return w.hello.has_value(); }));
  ASSERT_TRUE(w.hello->ok()) << w.hello->status().ToString();
  EXPECT_EQ(w.hello->value(), kServer);

  auto stream = (*link)->OpenSession(SessionOpen{{1, 0}, "client", kClient.instance_id, 100},
                                     std::make_shared<Recorder>(w));
  ASSERT_TRUE(w.Wait([&] { return w.events.size() >= 2; }));  // heartbeats
  EXPECT_EQ(w.events[0].kind, PeerEvent::Kind::kHeartbeat);
  EXPECT_EQ(w.events[1].sequence, 2u);

  PeerEvent closed;
  closed.kind = PeerEvent::Kind::kChannelClosed;
  closed.channel_id = 9;
  closed.reason = "bye";
  ASSERT_TRUE(inbound_.Send(kClient.instance_id, closed).ok());
  ASSERT_TRUE(w.Wait([&] {
    return std::any_of(w.events.begin(), w.events.end(), [](const PeerEvent& e) {
      return e.kind == PeerEvent::Kind::kChannelClosed && e.channel_id == 9 && e.reason == "bye";
    });
  }));

  // The serving side stopping ends the stream with UNAVAILABLE.
  inbound_.Close();
  ASSERT_TRUE(w.Wait([&] { return w.end.has_value(); }));
  EXPECT_EQ(w.end->code(), StatusCode::kUnavailable);
  EXPECT_THAT(w.end->message(), HasSubstr("rdmad is stopping"));
}

TEST_F(PeerServerTest, DestroyingTheStreamCancelsIt) {
  auto link = connector_->Connect(target_);
  ASSERT_TRUE(link.ok());
  Waiter w;
  auto stream = (*link)->OpenSession(SessionOpen{{1, 0}, "client", kClient.instance_id, 1000},
                                     std::make_shared<Recorder>(w));
  ASSERT_TRUE(w.Wait([&] { return !w.events.empty(); }));
  stream.reset();  // returns once on_end has run
  ASSERT_TRUE(w.end.has_value());
  EXPECT_EQ(w.end->code(), StatusCode::kCancelled);
}

TEST_F(PeerServerTest, AnEndedSessionStreamIsReportedOnce) {
  inbound_.SetChannels(&broker_);
  std::mutex& mu = broker_.mu;
  std::vector<std::string>& lost = broker_.lost;
  auto link = connector_->Connect(target_);
  ASSERT_TRUE(link.ok());
  // Each stream's first heartbeat shows the server registered it.
  Waiter first_w, second_w;
  auto open_stream = [&](Waiter& w) {
    return (*link)->OpenSession(SessionOpen{{1, 0}, "client", kClient.instance_id, 1000},
                                std::make_shared<Recorder>(w));
  };
  auto first = open_stream(first_w);
  ASSERT_TRUE(first_w.Wait([&] { return first_w.events.size() >= 1; }));
  auto second = open_stream(second_w);
  ASSERT_TRUE(second_w.Wait([&] { return second_w.events.size() >= 1; }));
  first.reset();  // the instance still has a session: nothing lost
  second.reset();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard lock(mu);
      if (!lost.empty()) break;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  std::this_thread::sleep_for(milliseconds(50));
  std::lock_guard lock(mu);
  EXPECT_EQ(lost, std::vector<std::string>{kClient.instance_id + " client"});
}

TEST_F(PeerServerTest, CloseChannelReachesTheHandlerWithItsAnswer) {
  auto link = connector_->Connect(target_);
  ASSERT_TRUE(link.ok());
  auto close = [&](const CloseChannelCall& call) {
    Waiter w;
    (*link)->CloseChannel(call, [&](const Status& s) {
      std::lock_guard lock(w.mu);
      w.end = s;
      w.cv.notify_all();
    });
    EXPECT_TRUE(w.Wait([&] { return w.end.has_value(); }));
    return w.end.value_or(Status::Internal("no answer"));
  };
  CloseChannelCall call{42, "closed by the application", kClient.instance_id};
  EXPECT_EQ(close(call).code(), StatusCode::kPermissionDenied) << "the instance never said Hello";
  Waiter hello;
  (*link)->Hello(kClient, milliseconds(5000), [&](StatusOr<PeerHello> r) {
    std::lock_guard lock(hello.mu);
    hello.hello = std::move(r);
    hello.cv.notify_all();
  });
  ASSERT_TRUE(hello.Wait([&] { return hello.hello.has_value(); }));
  ASSERT_TRUE(hello.hello->ok()) << hello.hello->status().ToString();
  EXPECT_EQ(close(call).code(), StatusCode::kUnavailable);  // no broker yet
  broker_.close_default = Status::NotFound("no channel 0x2b");
  broker_.close_results[42] = Status::Ok();
  inbound_.SetChannels(&broker_);
  const std::vector<CloseChannelCall>& seen = broker_.closes;
  EXPECT_TRUE(close(call).ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].reason, "closed by the application");
  EXPECT_EQ(seen[0].initiator_instance, kClient.instance_id);
  call.channel_id = 43;
  Status unknown = close(call);
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_EQ(unknown.message(), "no channel 0x2b");
}

TEST_F(PeerServerTest, MalformedHelloIsInvalidArgument) {
  auto stub = RawStub();
  grpc::ClientContext context;
  v1::HelloRequest request;
  ToProto(kClient, request.mutable_self());
  request.mutable_self()->set_instance_id("not hex");
  v1::HelloResponse response;
  grpc::Status status = stub->Hello(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "self.instance_id: 32 lower-case hex digits required");

  grpc::ClientContext empty_context;
  status = stub->Hello(&empty_context, v1::HelloRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(PeerServerTest, SessionOfAnotherMajorVersionIsRefused) {
  auto stub = RawStub();
  grpc::ClientContext context;
  v1::SessionRequest request;
  ToProto(SessionOpen{{2, 0}, "client", kClient.instance_id, 1000}, &request);
  auto reader = stub->Session(&context, request);
  v1::PeerEvent event;
  EXPECT_FALSE(reader->Read(&event));
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("speaks rdmad protocol 2.0, this daemon 1.0"));
}

TEST_F(PeerServerTest, UnreachablePeerIsUnavailable) {
  // A port nobody listens on: bind one, close it.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  auto link = connector_->Connect("127.0.0.1:" + std::to_string(ntohs(addr.sin_port)));
  ASSERT_TRUE(link.ok());
  Waiter w;
  (*link)->Hello(kClient, milliseconds(5000), [&](StatusOr<PeerHello> r) {
    std::lock_guard lock(w.mu);
    w.hello = std::move(r);
    w.cv.notify_all();
  });
  ASSERT_TRUE(w.Wait([&] { return w.hello.has_value(); }));
  EXPECT_EQ(w.hello->status().code(), StatusCode::kUnavailable);
}

TEST(PeerServerStartTest, APortInUseIsAClearError) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  FixedHello hello(kServer);
  PeerInbound inbound(hello);
  auto transport = MakeGrpcPeerTransport(Loopback(port), &inbound);
  close(fd);
  ASSERT_FALSE(transport.ok());
  EXPECT_EQ(transport.status().message(),
            "cannot listen for peers on 127.0.0.1:" + std::to_string(port) +
                " (daemon.peer_address, daemon.peer_port): Address already in use");
}

TEST(PeerServerStartTest, UnreadableTlsFilesAreAClearError) {
  FixedHello hello(kServer);
  PeerInbound inbound(hello);
  PeerTransportOptions tls = Loopback();
  tls.tls_cert = "/nonexistent/cert.pem";
  tls.tls_key = "/nonexistent/key.pem";
  tls.tls_ca = "/nonexistent/ca.pem";
  auto transport = MakeGrpcPeerTransport(tls, &inbound);
  ASSERT_FALSE(transport.ok());
  EXPECT_EQ(transport.status().message(),
            "cannot read daemon.tls_cert /nonexistent/cert.pem: No such file or directory");
}

}  // namespace
}  // namespace rdmad
