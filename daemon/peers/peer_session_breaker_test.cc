// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PeerSession's circuit breaker with a fake transport and fake clocks: a
// peer that keeps failing is not dialled while the circuit is open, fails
// fast, and is probed once when the open time is up.

#include <memory>
#include <string>

#include "daemon/peers/fake_peer_link.h"
#include "daemon/peers/peer_sessions.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

// Answers every Hello at once: refused while *refuse, else a good Hello; a
// session stream delivers its first heartbeat at once.
void Instant(FakePeerConnector& connector, const bool* refuse) {
  connector.configure = [refuse](FakePeerLink& link) {
    link.hello_answer = [refuse]() -> StatusOr<PeerHello> {
      if (*refuse) return Status::Unavailable("Connection refused");
      PeerHello h;
      h.protocol = {1, 0};
      h.host_name = "node-b";
      h.instance_id = "0123456789abcdef0123456789abcdef";
      return h;
    };
    link.beat_on_open = true;
  };
}

class PeerSessionBreakerTest : public ::testing::Test {
 protected:
  PeerSessionBreakerTest() {
    connector_ = std::make_shared<FakePeerConnector>();
    Instant(*connector_, &refuse_);
    PeerSessionOptions options;
    options.clock = &clock_;  // Random() 0.5: no jitter, exact delays
    options.breaker = {.failures = 3, .open_for = seconds(30)};
    sessions_ = std::make_unique<PeerSessions>(connector_, hello_, options);
    sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}});
    sessions_->RunOnce();  // attempt 1
  }

  void Advance(milliseconds d) {
    clock_.Advance(d);
    sessions_->RunOnce();
  }
  PeerSnapshot Peer() { return sessions_->List().at(0); }
  Status LinkStatus() { return (*sessions_->Peer("b"))->link().status(); }

  // Attempts 2 and 3 (100 and 200 ms of backoff later) open the circuit.
  void Trip() {
    Advance(milliseconds(100));
    ASSERT_EQ(Peer().state, PeerSessionState::kDown);
    Advance(milliseconds(200));
    ASSERT_EQ(connector_->Hellos(), 3u);
    ASSERT_EQ(Peer().state, PeerSessionState::kCircuitOpen);
  }

  ManualClock clock_;  // from 2027-01-15T08:00:00Z
  bool refuse_ = true;
  std::shared_ptr<FakePeerConnector> connector_;
  FixedHello hello_{[] {
    PeerHello h;
    h.protocol = {1, 0};
    h.instance_id = "fedcba9876543210fedcba9876543210";
    return h;
  }()};
  std::unique_ptr<PeerSessions> sessions_;
};

TEST_F(PeerSessionBreakerTest, TripsAfterNFailuresInARow) {
  EXPECT_EQ(Peer().state, PeerSessionState::kDown);
  EXPECT_EQ(LinkStatus().code(), StatusCode::kFailedPrecondition);  // down: not fail-fast
  Trip();
  PeerSnapshot p = Peer();
  EXPECT_EQ(p.failures, 3);
  EXPECT_EQ(p.last_error, "Hello: Connection refused");
  EXPECT_EQ(p.circuit_open_until, clock_.WallNow() + seconds(30));
}

TEST_F(PeerSessionBreakerTest, FailsFastAndDoesNotDialWhileOpen) {
  Trip();
  Status status = LinkStatus();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(),
            "peer b: circuit open until 2027-01-15T08:00:30Z after 3 failures: "
            "Hello: Connection refused");
  for (int i = 0; i < 29; ++i) Advance(seconds(1));
  Advance(milliseconds(999));
  EXPECT_EQ(connector_->Hellos(), 3u);
  EXPECT_EQ(Peer().state, PeerSessionState::kCircuitOpen);
}

TEST_F(PeerSessionBreakerTest, HalfOpenProbeFailureReopens) {
  Trip();
  Advance(seconds(30));  // the probe, refused
  EXPECT_EQ(connector_->Hellos(), 4u);
  PeerSnapshot p = Peer();
  EXPECT_EQ(p.state, PeerSessionState::kCircuitOpen);
  EXPECT_EQ(p.failures, 4);
  EXPECT_EQ(p.circuit_open_until, clock_.WallNow() + seconds(30));
  EXPECT_THAT(LinkStatus().message(), HasSubstr("circuit open until 2027-01-15T08:01:00Z"));
  Advance(seconds(29));
  EXPECT_EQ(connector_->Hellos(), 4u);  // open again: no backoff retries
}

TEST_F(PeerSessionBreakerTest, HalfOpenProbeSuccessCloses) {
  Trip();
  refuse_ = false;
  Advance(seconds(30));
  EXPECT_EQ(connector_->Hellos(), 4u);
  PeerSnapshot p = Peer();
  EXPECT_EQ(p.state, PeerSessionState::kUp);
  EXPECT_EQ(p.failures, 0);
  EXPECT_TRUE(LinkStatus().ok());
}

// A peer that proves it is alive (its Hello to us) is dialled at once,
// circuit or not; a Hello from another peer changes nothing.
TEST_F(PeerSessionBreakerTest, APeerThatSaysHelloClosesTheCircuitAndIsDialledAtOnce) {
  Trip();
  refuse_ = false;
  sessions_->PeerAlive("node-c", "192.0.2.3", "a Hello from someone else");
  sessions_->RunOnce();
  EXPECT_EQ(connector_->Hellos(), 3u);
  EXPECT_EQ(Peer().state, PeerSessionState::kCircuitOpen);
  // Never up: matched by the IP it is dialled at.
  sessions_->PeerAlive("node-b", "192.0.2.2", "its Hello to this daemon");
  sessions_->RunOnce();  // no time passes
  EXPECT_EQ(connector_->Hellos(), 4u);
  PeerSnapshot p = Peer();
  EXPECT_EQ(p.state, PeerSessionState::kUp);
  EXPECT_EQ(p.failures, 0);
  EXPECT_TRUE(LinkStatus().ok());
}

TEST_F(PeerSessionBreakerTest, AFailedRevivalStartsTheBackoffAndBreakerAfresh) {
  Trip();
  sessions_->PeerAlive("b", "", "its member record is back in etcd");
  sessions_->RunOnce();  // dialled at once, refused again
  EXPECT_EQ(connector_->Hellos(), 4u);
  PeerSnapshot p = Peer();
  EXPECT_EQ(p.state, PeerSessionState::kDown);  // one failure: the circuit is closed
  EXPECT_EQ(p.failures, 1);
  Advance(milliseconds(99));
  EXPECT_EQ(connector_->Hellos(), 4u);
  Advance(milliseconds(1));  // 100 ms: the backoff started over
  EXPECT_EQ(connector_->Hellos(), 5u);
}

TEST(PeerSessionBreakerNamesTest, CircuitOpenHasAName) {
  EXPECT_EQ(PeerSessionStateName(PeerSessionState::kCircuitOpen), "circuit-open");
}

}  // namespace
}  // namespace rdmad
