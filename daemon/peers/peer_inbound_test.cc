// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PeerInbound with a fake stream writer and a fake clock.

#include "daemon/peers/peer_inbound.h"

#include "daemon/peers/fake_inbound_channels.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr char kPeerId[] = "0123456789abcdef0123456789abcdef";

class FakeWriter : public PeerStreamWriter {
 public:
  void Write(const PeerEvent& event) override { written.push_back(event); }
  void Finish(const Status& status) override {
    ++finishes;
    final = status;
  }
  std::vector<PeerEvent> written;
  int finishes = 0;
  Status final;
};

PeerHello LocalHello() {
  PeerHello h;
  h.protocol = {1, 0};
  h.host_name = "node-a";
  h.daemon_version = "0.1.0";
  h.instance_id = "fedcba9876543210fedcba9876543210";
  return h;
}

SessionOpen Open(uint32_t major = 1) { return SessionOpen{{major, 0}, "node-b", kPeerId, 1000}; }

class PeerInboundTest : public ::testing::Test {
 protected:
  FakeInboundChannels broker_;  // outlives inbound_, which may call it to the end
  FixedHello hello_{LocalHello()};
  ManualClock clock_;
  PeerInbound inbound_{hello_, clock_};
};

TEST_F(PeerInboundTest, HelloAnswersWithThisDaemonsOwn) {
  PeerHello remote = LocalHello();
  remote.host_name = "node-b";
  remote.instance_id = kPeerId;
  auto reply = inbound_.Hello(remote, "ipv4:127.0.0.1:5000");
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(*reply, LocalHello());
  remote.protocol.major = 2;  // answered as well: the caller decides
  EXPECT_TRUE(inbound_.Hello(remote, "ipv4:127.0.0.1:5000").ok());
}

TEST_F(PeerInboundTest, MalformedHelloIsInvalidArgument) {
  PeerHello remote = LocalHello();
  remote.host_name = "";
  auto reply = inbound_.Hello(remote, "ipv4:127.0.0.1:5000");
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(reply.status().message(), "self.host_name: 1..255 bytes required");
}

TEST_F(PeerInboundTest, HeartbeatAtOnceThenEveryInterval) {
  FakeWriter writer;
  auto stream = inbound_.NewStream(&writer);
  stream->Start(Open(), "ipv4:127.0.0.1:5000");
  ASSERT_EQ(writer.written.size(), 1u);
  EXPECT_EQ(writer.written[0].kind, PeerEvent::Kind::kHeartbeat);
  EXPECT_EQ(writer.written[0].sequence, 1u);
  EXPECT_EQ(inbound_.stream_count(), 1u);
  stream->OnWriteDone(true);
  clock_.Advance(milliseconds(999));
  inbound_.Tick();
  EXPECT_EQ(writer.written.size(), 1u);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(inbound_.Tick(), clock_.Now() + milliseconds(1000));
  ASSERT_EQ(writer.written.size(), 2u);
  EXPECT_EQ(writer.written[1].sequence, 2u);
  // Write still pending: the next heartbeat is skipped, not queued.
  clock_.Advance(milliseconds(1000));
  inbound_.Tick();
  EXPECT_EQ(writer.written.size(), 2u);
  stream->OnWriteDone(true);
  EXPECT_EQ(writer.written.size(), 2u);
  stream->Detach();
  EXPECT_EQ(inbound_.stream_count(), 0u);
}

TEST_F(PeerInboundTest, AnotherMajorVersionIsRefused) {
  FakeWriter writer;
  auto stream = inbound_.NewStream(&writer);
  stream->Start(Open(2), "ipv4:127.0.0.1:5000");
  EXPECT_TRUE(writer.written.empty());
  EXPECT_EQ(writer.finishes, 1);
  EXPECT_EQ(writer.final.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(writer.final.message(),
            "peer node-b (ipv4:127.0.0.1:5000) speaks rdmad protocol 2.0, this daemon 1.0");
  EXPECT_EQ(inbound_.stream_count(), 0u);
}

TEST_F(PeerInboundTest, MalformedSessionRequestIsInvalidArgument) {
  FakeWriter writer;
  auto stream = inbound_.NewStream(&writer);
  SessionOpen open = Open();
  open.heartbeat_interval_ms = 5;
  stream->Start(open, "ipv4:127.0.0.1:5000");
  EXPECT_EQ(writer.final.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(writer.final.message(), HasSubstr("heartbeat_interval_ms"));
}

TEST_F(PeerInboundTest, SendReachesThePeersStream) {
  FakeWriter writer;
  auto stream = inbound_.NewStream(&writer);
  stream->Start(Open(), "ipv4:127.0.0.1:5000");
  PeerEvent closed;
  closed.kind = PeerEvent::Kind::kChannelClosed;
  closed.channel_id = 7;
  closed.reason = "the application exited";
  ASSERT_TRUE(inbound_.Send(kPeerId, closed).ok());
  EXPECT_EQ(writer.written.size(), 1u);  // queued behind the heartbeat
  stream->OnWriteDone(true);
  ASSERT_EQ(writer.written.size(), 2u);
  EXPECT_EQ(writer.written[1].channel_id, 7u);
  EXPECT_EQ(writer.written[1].sequence, 2u);
  EXPECT_EQ(inbound_.Send("00000000000000000000000000000000", closed).code(),
            StatusCode::kNotFound);
}

TEST_F(PeerInboundTest, APeerThatDoesNotReadIsEnded) {
  FakeWriter writer;
  auto stream = inbound_.NewStream(&writer);
  stream->Start(Open(), "ipv4:127.0.0.1:5000");
  PeerEvent closed;
  closed.kind = PeerEvent::Kind::kChannelClosed;
  // The heartbeat is being written; kMaxQueued events wait; one more ends it.
  for (size_t i = 0; i < PeerInbound::kMaxQueued; ++i) {
    ASSERT_TRUE(inbound_.Send(kPeerId, closed).ok()) << i;
  }
  EXPECT_EQ(inbound_.Send(kPeerId, closed).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(writer.finishes, 0);  // a write is in flight
  stream->OnWriteDone(true);
  EXPECT_EQ(writer.finishes, 1);
  EXPECT_EQ(writer.final.code(), StatusCode::kResourceExhausted);
}

TEST_F(PeerInboundTest, CloseEndsStreamsAndRefusesNewOnes) {
  FakeWriter writer;
  auto stream = inbound_.NewStream(&writer);
  stream->Start(Open(), "ipv4:127.0.0.1:5000");
  inbound_.Close();
  EXPECT_EQ(writer.finishes, 0);  // after the write in flight
  stream->OnWriteDone(true);
  EXPECT_EQ(writer.finishes, 1);
  EXPECT_EQ(writer.final.code(), StatusCode::kUnavailable);
  FakeWriter late;
  auto refused = inbound_.NewStream(&late);
  refused->Start(Open(), "ipv4:127.0.0.1:5001");
  EXPECT_EQ(late.final.code(), StatusCode::kUnavailable);
}

TEST_F(PeerInboundTest, CancelFinishesOnceTheWriteIsDone) {
  FakeWriter writer;
  auto stream = inbound_.NewStream(&writer);
  stream->Start(Open(), "ipv4:127.0.0.1:5000");
  stream->Cancel();
  EXPECT_EQ(inbound_.stream_count(), 0u);
  stream->OnWriteDone(false);
  EXPECT_EQ(writer.finishes, 1);
  EXPECT_EQ(writer.final.code(), StatusCode::kCancelled);
}

// With mutual TLS a peer speaks only for the node its certificate names.
TEST_F(PeerInboundTest, ACertificateSpeaksOnlyForItsNode) {
  const PeerIdentity cert_b{.tls = true, .names = {"node-b", "192.0.2.2"}};
  const PeerIdentity cert_c{.tls = true, .names = {"node-c", "192.0.2.3"}};
  FakeInboundChannels& broker = broker_;
  inbound_.SetChannels(&broker);
  PeerHello b = LocalHello();
  b.host_name = "node-b";
  b.instance_id = kPeerId;
  // node-c's certificate cannot say Hello as node-b; node-b's can (any case).
  auto spoofed = inbound_.Hello(b, "ipv4:192.0.2.3:5000", cert_c);
  EXPECT_EQ(spoofed.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(spoofed.status().message(),
            "the peer's certificate is for node-c, 192.0.2.3, not node-b");
  b.host_name = "NODE-B";
  EXPECT_TRUE(inbound_.Hello(b, "ipv4:192.0.2.2:5000", cert_b).ok());
  // Nor open a session or a channel as node-b.
  FakeWriter writer;
  inbound_.NewStream(&writer)->Start(Open(), "ipv4:192.0.2.3:5000", cert_c);
  EXPECT_EQ(writer.final.code(), StatusCode::kPermissionDenied);
  OpenChannelCall open{.service = "svc",
                       .initiator_host = "node-b",
                       .initiator_instance = kPeerId,
                       .channels = {{7, {}}}};
  EXPECT_EQ(inbound_.OpenChannel(open, "ipv4:192.0.2.3:5000", cert_c).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(inbound_.OpenChannel(open, "ipv4:192.0.2.2:5000", cert_b).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(broker.opens.size(), 1u);
  // Nor close or reclaim a channel as node-b's instance.
  CloseChannelCall close{7, "bye", kPeerId};
  EXPECT_EQ(inbound_.CloseChannel(close, cert_c).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(inbound_.CloseChannel(close, cert_b).ok());
  ReclaimChannelCall reclaim{7, "00000000000000000000000000000000", kPeerId};
  EXPECT_EQ(inbound_.ReclaimChannel(reclaim, cert_c).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(inbound_.ReclaimChannel(reclaim, cert_b).ok());
  // An instance that never said Hello is nobody's, with TLS.
  close.initiator_instance = "11111111111111111111111111111111";
  EXPECT_EQ(inbound_.CloseChannel(close, cert_b).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(broker.closes.size(), 1u);
  EXPECT_EQ(broker.reclaims.size(), 1u);
  // Without TLS neither: the instance must have said Hello.
  EXPECT_EQ(inbound_.CloseChannel(close).code(), StatusCode::kPermissionDenied);
  close.initiator_instance = kPeerId;
  EXPECT_TRUE(inbound_.CloseChannel(close).ok());
}

TEST_F(PeerInboundTest, AnInstanceBelongsToTheNodeThatClaimedItFirst) {
  // No TLS: what is checked is which node claimed an instance first.
  constexpr char kCId[] = "cccccccccccccccccccccccccccccccc";
  constexpr char kB2Id[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
  FakeInboundChannels& broker = broker_;
  inbound_.SetChannels(&broker);
  const std::vector<ReclaimChannelCall>& reclaims = broker.reclaims;
  PeerHello b = LocalHello();
  b.host_name = "node-b";
  b.instance_id = kPeerId;
  ASSERT_TRUE(inbound_.Hello(b, "ipv4:127.0.0.1:5000").ok());
  PeerHello c = b;
  c.host_name = "node-c";
  c.instance_id = kCId;
  ASSERT_TRUE(inbound_.Hello(c, "ipv4:127.0.0.1:5001").ok());
  // node-c says it is node-b's instance: in a Hello, and in a Session.
  PeerHello stolen = c;
  stolen.instance_id = kPeerId;
  auto refused = inbound_.Hello(stolen, "ipv4:127.0.0.1:5001");
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.status().message(), HasSubstr("belongs to node node-b, not node-c"));
  FakeWriter writer;
  SessionOpen open = Open();
  open.host_name = "node-c";
  inbound_.NewStream(&writer)->Start(open, "ipv4:127.0.0.1:5001");
  EXPECT_EQ(writer.final.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(inbound_.stream_count(), 0u);
  // Nor this daemon's own instance, public through its Hello.
  stolen.instance_id = LocalHello().instance_id;
  EXPECT_EQ(inbound_.Hello(stolen, "ipv4:127.0.0.1:5001").status().code(),
            StatusCode::kPermissionDenied);
  // node-c takes back node-b's channels: refused before the broker.
  EXPECT_EQ(inbound_.ReclaimChannel({7, kPeerId, kCId}).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(reclaims.empty());
  // node-b restarted (a new instance) takes them back: allowed.
  b.instance_id = kB2Id;
  ASSERT_TRUE(inbound_.Hello(b, "ipv4:127.0.0.1:5002").ok());
  ASSERT_TRUE(inbound_.ReclaimChannel({7, kPeerId, kB2Id}).ok());
  ASSERT_EQ(reclaims.size(), 1u);
  EXPECT_EQ(reclaims[0].caller_node, "node-b");
  EXPECT_TRUE(reclaims[0].previous_node_known);
  // A previous instance this daemon never met: the broker decides by the
  // channel's peer, told the caller's node.
  ASSERT_TRUE(inbound_.ReclaimChannel({8, "dddddddddddddddddddddddddddddddd", kB2Id}).ok());
  ASSERT_EQ(reclaims.size(), 2u);
  EXPECT_EQ(reclaims[1].caller_node, "node-b");
  EXPECT_FALSE(reclaims[1].previous_node_known);
}

}  // namespace
}  // namespace rdmad
