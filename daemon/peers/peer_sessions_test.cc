// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PeerSessions and PeerSession with a fake transport and a fake clock: the
// test answers every call by hand and moves time itself.

#include "daemon/peers/peer_sessions.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <set>
#include <thread>

#include "daemon/peers/fake_peer_link.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

constexpr char kRemoteId[] = "0123456789abcdef0123456789abcdef";
constexpr char kLocalId[] = "fedcba9876543210fedcba9876543210";

PeerHello Hello(uint32_t major, const std::string& host = "node-b") {
  PeerHello h;
  h.protocol = {major, 3};
  h.host_name = host;
  h.daemon_version = "9.9.9";
  h.instance_id = kRemoteId;
  h.transports = {"RoCE v2"};
  h.ports = {{"mlx5_0", 1, 4096, "RoCE v2"}};
  return h;
}

// A SessionUser whose answers and records the test chooses.
struct TestUser : SessionUser {
  std::function<void(const PeerSnapshot&)> on_state = [](const PeerSnapshot&) {};
  std::function<void(const PeerSnapshot&, const PeerEvent&)> on_event = [](const PeerSnapshot&,
                                                                           const PeerEvent&) {};
  std::function<bool(const PeerSnapshot&)> uses = [](const PeerSnapshot&) { return false; };
  void OnSessionState(const PeerSnapshot& peer) override { on_state(peer); }
  void OnSessionEvent(const PeerSnapshot& peer, const PeerEvent& event) override {
    on_event(peer, event);
  }
  bool UsesSession(const PeerSnapshot& peer) const override { return uses(peer); }
};

class PeerSessionsTest : public ::testing::Test {
 protected:
  PeerSessionsTest() {
    connector_ = std::make_shared<FakePeerConnector>();
    PeerSessionOptions options;
    options.clock = &clock_;       // Random() 0.5: no jitter, exact delays
    options.breaker.failures = 0;  // no circuit breaker: peer_session_breaker_test.cc
    sessions_ = std::make_unique<PeerSessions>(connector_, hello_, options);
  }
  // The sessions end before what the tests' callbacks refer to.
  ~PeerSessionsTest() override {
    user_ = TestUser();
    sessions_.reset();
  }

  static PeerHello LocalHello() {
    PeerHello h = Hello(1, "node-a");
    h.protocol = {1, 0};
    h.instance_id = kLocalId;
    return h;
  }

  void Advance(milliseconds d) {
    clock_.Advance(d);
    sessions_->RunOnce();
  }
  FakePeerLink& Link(size_t i = 0) { return *connector_->links.at(i); }
  size_t LinkCount() { return connector_->links.size(); }
  PeerSnapshot Peer(size_t i = 0) { return sessions_->List().at(i); }

  // Configures peer b and brings its session up.
  void BringUp() {
    sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}});
    sessions_->RunOnce();
    clock_.Advance(milliseconds(2));
    connector_->links.back()->Answer(Hello(1));
    sessions_->RunOnce();
    connector_->links.back()->Beat();
    sessions_->RunOnce();
    ASSERT_EQ(Peer().state, PeerSessionState::kUp);
  }

  ManualClock clock_;
  std::shared_ptr<FakePeerConnector> connector_;
  FixedHello hello_{LocalHello()};
  TestUser user_;  // set on the sessions by the tests that need one
  std::unique_ptr<PeerSessions> sessions_;
};

TEST_F(PeerSessionsTest, HelloThenStreamBringsThePeerUp) {
  sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}});
  sessions_->RunOnce();
  ASSERT_EQ(LinkCount(), 1u);
  EXPECT_EQ(Link().target(), "192.0.2.2:7581");
  ASSERT_EQ(Link().sent.size(), 1u);
  EXPECT_EQ(Link().sent[0].instance_id, kLocalId);
  EXPECT_EQ(Peer().state, PeerSessionState::kConnecting);

  clock_.Advance(milliseconds(3));
  Link().Answer(Hello(1));
  sessions_->RunOnce();
  ASSERT_EQ(Link().streams.size(), 1u);
  EXPECT_EQ(Link().streams[0]->open.instance_id, kLocalId);
  EXPECT_EQ(Link().streams[0]->open.heartbeat_interval_ms, 1000);
  EXPECT_EQ(Peer().state, PeerSessionState::kConnecting);  // not before the stream answers
  EXPECT_DOUBLE_EQ(Peer().rtt_ms, 3.0);

  Link().Beat();
  sessions_->RunOnce();
  PeerSnapshot p = Peer();
  EXPECT_EQ(p.state, PeerSessionState::kUp);
  EXPECT_EQ(p.name, "b");
  EXPECT_TRUE(p.configured);
  EXPECT_EQ(p.last_error, "");
  ASSERT_TRUE(p.remote.has_value());
  EXPECT_EQ(p.remote->host_name, "node-b");
  EXPECT_EQ(p.remote->protocol, (ProtocolVersion{1, 3}));  // minor differences are fine
  auto session = sessions_->Peer("b");
  ASSERT_TRUE(session.ok());
  EXPECT_TRUE((*session)->link().ok());
}

TEST_F(PeerSessionsTest, ObserversSeeEverySessionsStateAndChannelEvents) {
  std::vector<std::string> seen;
  user_.on_state = [&](const PeerSnapshot& p) {
    seen.push_back(p.name + " " + std::string(PeerSessionStateName(p.state)) + " " +
                   (p.remote ? p.remote->instance_id : "-"));
  };
  user_.on_event = [&](const PeerSnapshot& p, const PeerEvent& e) {
    seen.push_back(p.name + " closed " + std::to_string(e.channel_id) + " " + e.reason);
  };
  sessions_->SetUser(&user_);
  BringUp();
  PeerEvent closed;
  closed.kind = PeerEvent::Kind::kChannelClosed;
  closed.channel_id = 7;
  closed.reason = "bye";
  Link().streams[0]->Send(closed);
  sessions_->RunOnce();
  Link().streams[0]->End(Status::Unavailable("keepalive watchdog timeout"));
  sessions_->RunOnce();
  EXPECT_EQ(seen, (std::vector<std::string>{"b up " + std::string(kRemoteId), "b closed 7 bye",
                                            "b down " + std::string(kRemoteId)}));
}

TEST_F(PeerSessionsTest, FailuresBackOffExponentiallyUpTo10s) {
  sessions_->SetConfiguredPeers({{"b", "192.0.2.2:7600"}});
  sessions_->RunOnce();
  std::vector<int64_t> waits;
  for (int attempt = 0; attempt < 9; ++attempt) {
    connector_->links.back()->Answer(Status::Unavailable("Connection refused"));
    sessions_->RunOnce();
    PeerSnapshot p = Peer();
    EXPECT_EQ(p.state, PeerSessionState::kDown);
    EXPECT_EQ(p.last_error, "Hello: Connection refused");
    EXPECT_EQ(p.failures, attempt + 1);
    // Step 1 ms at a time until the next attempt starts.
    size_t links = LinkCount();
    int64_t waited = 0;
    while (LinkCount() == links && waited < 20000) {
      Advance(milliseconds(1));
      ++waited;
    }
    waits.push_back(waited);
  }
  EXPECT_EQ(waits, (std::vector<int64_t>{100, 200, 400, 800, 1600, 3200, 6400, 10000, 10000}));
}

TEST_F(PeerSessionsTest, BackoffStartsOverAfterTheSessionWasUp) {
  BringUp();
  Link().streams[0]->End(Status::Unavailable("keepalive watchdog timeout"));
  sessions_->RunOnce();
  EXPECT_EQ(Peer().state, PeerSessionState::kDown);
  EXPECT_EQ(Peer().last_error, "session stream: keepalive watchdog timeout");
  Advance(milliseconds(99));
  EXPECT_EQ(LinkCount(), 1u);
  Advance(milliseconds(1));
  EXPECT_EQ(LinkCount(), 2u);  // a fresh link for every attempt
}

// A channel waits for an attempt under way (Daemon::AwaitPeer): the
// snapshot says when one is, the first or a re-dial, and only then.
TEST_F(PeerSessionsTest, TheSnapshotSaysWhileAnAttemptIsUnderWay) {
  sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}});
  sessions_->RunOnce();
  EXPECT_TRUE(Peer().dialling);  // the first attempt
  Link().Answer(Status::Unavailable("Connection refused"));
  sessions_->RunOnce();
  EXPECT_EQ(Peer().state, PeerSessionState::kDown);
  EXPECT_FALSE(Peer().dialling);  // waiting out its backoff
  Advance(milliseconds(99));
  EXPECT_FALSE(Peer().dialling);
  Advance(milliseconds(1));  // the backoff's re-dial
  ASSERT_EQ(LinkCount(), 2u);
  EXPECT_EQ(Peer().state, PeerSessionState::kDown);
  EXPECT_TRUE(Peer().dialling);
  Link(1).Answer(Status::Unavailable("Connection refused"));
  sessions_->RunOnce();
  EXPECT_FALSE(Peer().dialling);

  // The peer dialled us: dialling at once, before the worker runs Revive.
  sessions_->PeerAlive("node-b", "192.0.2.2", "its Hello to this daemon");
  EXPECT_TRUE(Peer().dialling);
  EXPECT_EQ(LinkCount(), 2u);
  sessions_->RunOnce();
  ASSERT_EQ(LinkCount(), 3u);
  EXPECT_EQ(Peer().state, PeerSessionState::kDown);
  EXPECT_EQ(Peer().last_error, "Hello: Connection refused");
  EXPECT_TRUE(Peer().dialling);
  clock_.Advance(milliseconds(2));
  Link(2).Answer(Hello(1));
  sessions_->RunOnce();
  EXPECT_TRUE(Peer().dialling);  // Hello answered, the stream not yet
  Link(2).Beat();
  sessions_->RunOnce();
  EXPECT_EQ(Peer().state, PeerSessionState::kUp);
  EXPECT_FALSE(Peer().dialling);
  Advance(milliseconds(4000));
  Link(2).Beat();
  Advance(milliseconds(1000));  // the RTT probe's Hello while up is not a dial
  EXPECT_EQ(Link(2).sent.size(), 2u);
  EXPECT_EQ(Peer().state, PeerSessionState::kUp);
  EXPECT_FALSE(Peer().dialling);
}

// Daemon::AwaitPeer: a channel asked for during a dial waits until that
// attempt ends, failed or up, or its deadline passes; between attempts it
// does not wait.
TEST_F(PeerSessionsTest, AWaitForADialEndsWithTheAttempt) {
  using RealClock = std::chrono::steady_clock;
  sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}});
  sessions_->RunOnce();
  Link().Answer(Status::Unavailable("Connection refused"));
  sessions_->RunOnce();
  auto found = sessions_->Peer("b");
  ASSERT_TRUE(found.ok());
  std::shared_ptr<PeerSession> session = *found;
  EXPECT_TRUE(session->AwaitDial(RealClock::now() + seconds(30)));  // between attempts

  Advance(milliseconds(100));  // a re-dial, its Hello not answered
  ASSERT_EQ(LinkCount(), 2u);
  const auto asked = RealClock::now();
  EXPECT_FALSE(session->AwaitDial(asked + milliseconds(50)));
  EXPECT_GE(RealClock::now() - asked, milliseconds(50));

  auto wait = [&](std::atomic<int>* ended) {
    return std::thread(
        [session, ended] { *ended = session->AwaitDial(RealClock::now() + seconds(30)) ? 1 : 0; });
  };
  std::atomic<int> failed{-1};
  std::thread waiter = wait(&failed);
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(failed, -1);
  Link(1).Answer(Status::Unavailable("Connection refused"));
  sessions_->RunOnce();
  waiter.join();
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(Peer().state, PeerSessionState::kDown);

  Advance(milliseconds(200));  // the next re-dial: answered, then the stream
  ASSERT_EQ(LinkCount(), 3u);
  std::atomic<int> up{-1};
  waiter = wait(&up);
  clock_.Advance(milliseconds(2));
  Link(2).Answer(Hello(1));
  sessions_->RunOnce();
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(up, -1);  // not before the stream is up
  Link(2).Beat();
  sessions_->RunOnce();
  waiter.join();
  EXPECT_EQ(up, 1);
  EXPECT_EQ(Peer().state, PeerSessionState::kUp);
}

TEST_F(PeerSessionsTest, AnotherMajorVersionIsAMismatchAndFinal) {
  sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}});
  sessions_->RunOnce();
  Link().Answer(Hello(2));
  sessions_->RunOnce();
  PeerSnapshot p = Peer();
  EXPECT_EQ(p.state, PeerSessionState::kVersionMismatch);
  EXPECT_EQ(p.last_error, "peer b speaks rdmad protocol 2.3, this daemon 1.0");
  EXPECT_TRUE(Link().streams.empty());
  Advance(std::chrono::minutes(5));
  EXPECT_EQ(LinkCount(), 1u);
  EXPECT_EQ(Link().sent.size(), 1u);
  auto session = sessions_->Peer("b");
  ASSERT_TRUE(session.ok());
  EXPECT_THAT((*session)->link().status().message(),
              HasSubstr("is version-mismatch: peer b speaks rdmad protocol 2.3"));
}

TEST_F(PeerSessionsTest, NoHeartbeatFor5sIsDown) {
  BringUp();
  Advance(milliseconds(4000));
  Link().Beat();
  Advance(milliseconds(4999));
  EXPECT_EQ(Peer().state, PeerSessionState::kUp);
  Advance(milliseconds(1));
  EXPECT_EQ(Peer().state, PeerSessionState::kDown);
  EXPECT_EQ(Peer().last_error, "no heartbeat from the peer for 5000 ms");
  EXPECT_TRUE(Link().streams[0]->cancelled);
}

TEST_F(PeerSessionsTest, HeartbeatsTellThePeersClockOffset) {
  sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}});
  sessions_->RunOnce();
  clock_.Advance(milliseconds(4));  // a 4 ms round trip
  Link().Answer(Hello(1));
  sessions_->RunOnce();
  Link().Beat();  // no time in it: no offset yet
  sessions_->RunOnce();
  EXPECT_FALSE(Peer().clock_offset_ms.has_value());
  // The peer's clock runs 1.5 s ahead: its heartbeat was stamped 2 ms
  // (half the round trip) before it arrived.
  PeerEvent beat;
  beat.unix_time_ms = std::chrono::duration_cast<milliseconds>(clock_.WallNow().time_since_epoch() +
                                                               milliseconds(1500 - 2))
                          .count();
  Link().streams[0]->Send(beat);
  sessions_->RunOnce();
  ASSERT_TRUE(Peer().clock_offset_ms.has_value());
  EXPECT_DOUBLE_EQ(*Peer().clock_offset_ms, 1500);
}

TEST_F(PeerSessionsTest, HelloIsRepeatedForTheRtt) {
  BringUp();
  for (int i = 0; i < 4; ++i) {
    Advance(milliseconds(1000));
    Link().Beat();
  }
  EXPECT_EQ(Link().sent.size(), 1u);
  Advance(milliseconds(1000));  // 5 s after up: the probe
  ASSERT_EQ(Link().sent.size(), 2u);
  clock_.Advance(milliseconds(7));
  Link().Answer(Hello(1, "node-b-renamed"));
  sessions_->RunOnce();
  EXPECT_DOUBLE_EQ(Peer().rtt_ms, 7.0);
  EXPECT_EQ(Peer().remote->host_name, "node-b-renamed");
  EXPECT_EQ(Peer().state, PeerSessionState::kUp);
}

TEST_F(PeerSessionsTest, HelloWithoutAnswerTimesOut) {
  sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}});
  sessions_->RunOnce();
  Advance(milliseconds(3999));
  EXPECT_EQ(Peer().state, PeerSessionState::kConnecting);
  Advance(milliseconds(1));
  EXPECT_EQ(Peer().state, PeerSessionState::kDown);
  EXPECT_EQ(Peer().last_error, "Hello: no answer within 3000 ms");
  // The late answer belongs to a finished attempt and changes nothing.
  Link().Answer(Hello(1));
  sessions_->RunOnce();
  EXPECT_EQ(Peer().state, PeerSessionState::kDown);
  EXPECT_TRUE(Link().streams.empty());
}

TEST_F(PeerSessionsTest, ConnectorErrorsAreDownWithTheReason) {
  connector_->refuse = "bad TLS material";
  sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}});
  sessions_->RunOnce();
  EXPECT_EQ(Peer().state, PeerSessionState::kDown);
  EXPECT_EQ(Peer().last_error, "bad TLS material");
}

TEST_F(PeerSessionsTest, ReloadAddsRemovesAndRedials) {
  sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}, {"c", "192.0.2.3"}});
  sessions_->RunOnce();
  ASSERT_EQ(LinkCount(), 2u);
  auto c = sessions_->Peer("c");
  sessions_->SetConfiguredPeers({{"c", "192.0.2.3"}, {"d", "192.0.2.4:9000"}});
  sessions_->RunOnce();
  auto list = sessions_->List();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].name, "c");
  EXPECT_EQ(list[1].name, "d");
  EXPECT_EQ(list[1].address, "192.0.2.4:9000");
  EXPECT_EQ(sessions_->Peer("c")->get(), c->get());  // unchanged: the same session
  EXPECT_EQ(LinkCount(), 3u);                        // only d dialled
  sessions_->SetConfiguredPeers({{"c", "192.0.2.33"}});
  sessions_->RunOnce();
  EXPECT_NE(sessions_->Peer("c")->get(), c->get());
  EXPECT_EQ(sessions_->List().at(0).address, "192.0.2.33:7581");
  EXPECT_EQ(sessions_->size(), 1u);
}

TEST_F(PeerSessionsTest, RemovedPeersLoseTheirStream) {
  BringUp();
  sessions_->SetConfiguredPeers({});
  sessions_->RunOnce();
  EXPECT_TRUE(Link().streams[0]->cancelled);
  EXPECT_EQ(sessions_->size(), 0u);
}

TEST_F(PeerSessionsTest, PeerOpensSessionsOnDemand) {
  sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}});
  auto by_address = sessions_->Peer("192.0.2.2:7581");
  ASSERT_TRUE(by_address.ok());
  EXPECT_EQ((*by_address)->name(), "b");
  auto created = sessions_->Peer("192.0.2.9");
  ASSERT_TRUE(created.ok());
  EXPECT_EQ((*created)->name(), "192.0.2.9:7581");
  EXPECT_FALSE((*created)->configured());
  EXPECT_EQ(sessions_->Peer("192.0.2.9:7581")->get(), created->get());
  auto v6 = sessions_->Peer("2001:db8::5");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ((*v6)->address(), "[2001:db8::5]:7581");
  sessions_->RunOnce();
  EXPECT_EQ(LinkCount(), 3u);
  EXPECT_FALSE(sessions_->List().at(1).configured);
  auto bad = sessions_->Peer("no such peer!");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("no peer named \"no such peer!\""));
  // A reload keeps on-demand sessions.
  sessions_->SetConfiguredPeers({});
  EXPECT_EQ(sessions_->size(), 2u);
}

TEST_F(PeerSessionsTest, ObserversSeeStateChangesAndChannelEvents) {
  sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}});
  auto session = *sessions_->Peer("b");
  std::vector<PeerSessionState> states;
  std::vector<uint64_t> closed;
  user_.on_state = [&](const PeerSnapshot& s) { states.push_back(s.state); };
  user_.on_event = [&](const PeerSnapshot&, const PeerEvent& e) { closed.push_back(e.channel_id); };
  session->SetUser(&user_);
  sessions_->RunOnce();
  Link().Answer(Hello(1));
  sessions_->RunOnce();
  Link().Beat();
  PeerEvent event;
  event.kind = PeerEvent::Kind::kChannelClosed;
  event.channel_id = 42;
  Link().streams[0]->Send(event);
  sessions_->RunOnce();
  Link().streams[0]->End(Status::Ok());
  sessions_->RunOnce();
  EXPECT_EQ(states,
            (std::vector<PeerSessionState>{PeerSessionState::kUp, PeerSessionState::kDown}));
  EXPECT_EQ(closed, (std::vector<uint64_t>{42}));
  EXPECT_EQ(Peer().last_error, "the peer closed the session");
  session->SetUser(nullptr);
}

TEST_F(PeerSessionsTest, StopEndsEverySession) {
  BringUp();
  sessions_->Stop();
  EXPECT_TRUE(Link().streams[0]->cancelled);
  EXPECT_EQ(sessions_->Peer("b").status().code(), StatusCode::kFailedPrecondition);
  sessions_->Stop();  // twice is fine
}

TEST(PeerSessionsThreadTest, TheWorkerBringsSessionsUpOnItsOwn) {
  auto connector = std::make_shared<FakePeerConnector>();
  connector->configure = [](FakePeerLink& link) {
    link.hello_answer = [] { return StatusOr<PeerHello>(Hello(1)); };
    link.beat_on_open = true;
  };
  FixedHello hello(Hello(1, "node-a"));
  PeerSessions sessions(connector, hello);
  sessions.SetConfiguredPeers({{"b", "192.0.2.2"}});
  sessions.Start();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (sessions.List().at(0).state != PeerSessionState::kUp &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_EQ(sessions.List().at(0).state, PeerSessionState::kUp);
  sessions.Stop();
}

// Cluster members are listed (idle) without a session; the first use opens
// one, and a member that goes or moves loses it. A [[peers]] name wins.
TEST_F(PeerSessionsTest, MembersAreDialledOnFirstUseAndFollowTheirRecords) {
  sessions_->SetDiscoveredPeers({{"m1", "192.0.2.5"}, {"m2", "192.0.2.6"}});
  sessions_->RunOnce();
  EXPECT_EQ(LinkCount(), 0u);
  ASSERT_EQ(sessions_->List().size(), 2u);
  EXPECT_EQ(sessions_->size(), 2u);
  for (const PeerSnapshot& p : sessions_->List()) {
    EXPECT_EQ(p.state, PeerSessionState::kIdle) << p.name;
    EXPECT_EQ(p.origin, PeerOrigin::kDiscovered) << p.name;
    EXPECT_FALSE(p.configured) << p.name;
  }
  EXPECT_EQ(Peer(0).address, "192.0.2.5:7581");
  EXPECT_TRUE(sessions_->Knows("m2"));
  EXPECT_TRUE(sessions_->Knows("192.0.2.6:7581"));
  EXPECT_FALSE(sessions_->Knows("m3"));

  auto m1 = sessions_->Peer("m1");
  ASSERT_TRUE(m1.ok()) << m1.status().ToString();
  sessions_->RunOnce();
  ASSERT_EQ(LinkCount(), 1u);
  EXPECT_EQ(Link().target(), "192.0.2.5:7581");
  EXPECT_EQ(Peer(0).name, "m1");
  EXPECT_EQ(Peer(0).state, PeerSessionState::kConnecting);
  EXPECT_EQ(Peer(0).origin, PeerOrigin::kDiscovered);
  EXPECT_EQ(Peer(1).name, "m2");
  EXPECT_EQ(Peer(1).state, PeerSessionState::kIdle);
  EXPECT_EQ(sessions_->Peer("m1").value(), m1.value());  // one session per member

  // m1 leaves; m2 moves (after it was used).
  ASSERT_TRUE(sessions_->Peer("m2").ok());
  sessions_->SetDiscoveredPeers({{"m2", "192.0.2.7"}});
  sessions_->RunOnce();
  ASSERT_EQ(sessions_->List().size(), 1u);
  EXPECT_EQ(Peer(0).name, "m2");
  EXPECT_EQ(Peer(0).state, PeerSessionState::kIdle);
  EXPECT_EQ(Peer(0).address, "192.0.2.7:7581");

  // A [[peers]] entry of the same name is what the name means.
  ASSERT_TRUE(sessions_->Peer("m2").ok());
  sessions_->SetConfiguredPeers({{"m2", "192.0.2.9"}});
  sessions_->RunOnce();
  ASSERT_EQ(sessions_->List().size(), 1u);
  EXPECT_TRUE(Peer(0).configured);
  EXPECT_EQ(Peer(0).address, "192.0.2.9:7581");
  EXPECT_TRUE(sessions_->Peer("m2").value()->configured());
}

// A uid opens sessions on demand up to its quota, checked before anything
// is dialled; the daemon's own lookups and other uids are not counted.
TEST_F(PeerSessionsTest, OnDemandSessionsCountAgainstTheirOpenersQuota) {
  sessions_->SetOnDemandQuota(2);
  ASSERT_TRUE(sessions_->Peer("192.0.2.10", 1000).ok());
  ASSERT_TRUE(sessions_->Peer("192.0.2.11", 1000).ok());
  sessions_->RunOnce();
  size_t dialled = LinkCount();
  auto third = sessions_->Peer("192.0.2.12", 1000);
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(third.status().message(),
              HasSubstr("uid 1000 has 2 peer sessions opened on demand, its limit "
                        "(limits.max_peer_sessions_per_uid = 2)"));
  sessions_->RunOnce();
  EXPECT_EQ(LinkCount(), dialled) << "nothing was dialled for it";
  EXPECT_TRUE(sessions_->Peer("192.0.2.10", 1000).ok()) << "its own sessions are still its";
  EXPECT_TRUE(sessions_->Peer("192.0.2.12", 1001).ok()) << "another uid has its own quota";
  EXPECT_TRUE(sessions_->Peer("192.0.2.13").ok()) << "the daemon's own lookups are not counted";
  EXPECT_EQ(sessions_->List().size(), 4u);
}

// A writer of the cluster's store points member m1 at another daemon: the
// daemon there answers with its own name, and the member is not used
// (a [[peers]] name, an alias the operator chose, is not compared).
TEST_F(PeerSessionsTest, AMemberWhoseAddressAnswersAsAnotherNodeIsNotUsed) {
  sessions_->SetDiscoveredPeers({{"m1", "192.0.2.5"}});
  ASSERT_TRUE(sessions_->Peer("m1").ok());
  sessions_->RunOnce();
  clock_.Advance(milliseconds(2));
  Link().Answer(Hello(1, "m7"));
  sessions_->RunOnce();
  EXPECT_NE(Peer().state, PeerSessionState::kUp);
  EXPECT_TRUE(Link().streams.empty()) << "no session was opened with it";
  EXPECT_THAT(Peer().last_error,
              HasSubstr("the daemon at 192.0.2.5:7581 is m7, not the cluster member m1"));
  // When the record is right again (the daemon there is m1), it is used.
  Advance(milliseconds(2000));
  ASSERT_GE(LinkCount(), 1u);
  connector_->links.back()->Answer(Hello(1, "m1"));
  sessions_->RunOnce();
  connector_->links.back()->Beat();
  sessions_->RunOnce();
  EXPECT_EQ(Peer().state, PeerSessionState::kUp) << Peer().last_error;
}

// etcd lost a member's lease (etcd was away) and it registers again: its
// session, up all along, is kept; only its own failure detection ends it.
TEST_F(PeerSessionsTest, AMemberThatDropsOutOfTheViewKeepsItsSessionWhileItIsUp) {
  sessions_->SetDiscoveredPeers({{"m1", "192.0.2.5"}});
  ASSERT_TRUE(sessions_->Peer("m1").ok());
  sessions_->RunOnce();
  Link().Answer(Hello(1, "m1"));
  sessions_->RunOnce();
  Link().Beat();
  sessions_->RunOnce();
  ASSERT_EQ(Peer().state, PeerSessionState::kUp);
  auto session = sessions_->Peer("m1").value();

  sessions_->SetDiscoveredPeers({});
  Advance(milliseconds(500));
  Link().Beat();
  sessions_->RunOnce();
  ASSERT_EQ(sessions_->List().size(), 1u);
  EXPECT_EQ(Peer().state, PeerSessionState::kUp);
  EXPECT_FALSE(Link().streams[0]->cancelled);
  sessions_->SetDiscoveredPeers({{"m1", "192.0.2.5"}});
  sessions_->RunOnce();
  EXPECT_EQ(sessions_->Peer("m1").value(), session);  // the same session
  EXPECT_EQ(LinkCount(), 1u);                         // never dialled again
  EXPECT_EQ(Peer().state, PeerSessionState::kUp);

  // Gone from the view and then down by its own detection: closed.
  sessions_->SetDiscoveredPeers({});
  sessions_->RunOnce();
  Link().streams[0]->End(Status::Unavailable("keepalive watchdog timeout"));
  sessions_->RunOnce();
  EXPECT_EQ(sessions_->List().size(), 0u);
  Advance(milliseconds(10000));
  EXPECT_EQ(LinkCount(), 1u);  // and not retried
}

TEST_F(PeerSessionsTest, SessionsOpenedOnFirstUseCloseWhenUnused) {
  const milliseconds idle(60000);
  connector_->configure = [](FakePeerLink& link) {  // every session comes up
    // A member's daemon answers with the member's name.
    std::string host = link.target() == "192.0.2.5:7581"   ? "m1"
                       : link.target() == "192.0.2.6:7581" ? "m2"
                                                           : "node-b";
    link.hello_answer = [host] { return Hello(1, host); };
    link.beat_on_open = true;
  };
  // Moves time in steps of a second, every open stream beating meanwhile.
  auto run = [&](milliseconds d) {
    for (milliseconds done(0); done < d;) {
      milliseconds step = std::min(milliseconds(1000), d - done);
      clock_.Advance(step);
      done += step;
      for (auto& link : connector_->links) {
        if (!link->streams.empty() && !link->streams.back()->ended &&
            !link->streams.back()->cancelled) {
          link->Beat();
        }
      }
      sessions_->RunOnce();
    }
  };
  std::set<std::string> in_use;
  user_.uses = [&](const PeerSnapshot& p) { return in_use.count(p.name) > 0; };
  sessions_->SetUser(&user_);
  sessions_->SetIdleClose(idle);
  sessions_->SetConfiguredPeers({{"b", "192.0.2.2"}});
  sessions_->SetDiscoveredPeers({{"m1", "192.0.2.5"}, {"m2", "192.0.2.6"}});
  ASSERT_TRUE(sessions_->Peer("m1").ok());
  ASSERT_TRUE(sessions_->Peer("m2").ok());
  ASSERT_TRUE(sessions_->Peer("192.0.2.9").ok());
  sessions_->RunOnce();
  ASSERT_EQ(LinkCount(), 4u);
  auto state = [&](const std::string& name) -> std::optional<PeerSessionState> {
    for (const PeerSnapshot& p : sessions_->List()) {
      if (p.name == name) return p.state;
    }
    return std::nullopt;
  };
  // A session of its own: listed, and not idle.
  auto open = [&](const std::string& name) {
    auto s = state(name);
    return s.has_value() && *s != PeerSessionState::kIdle;
  };
  in_use.insert("m1");  // m1 carries channels
  run(idle / 2);
  ASSERT_TRUE(sessions_->Peer("m2").ok());  // m2 is named again: used
  run(idle / 2);
  // The address's session is gone; m1 (channels) and m2 (used) stay;
  // the configured one never closes.
  EXPECT_EQ(state("192.0.2.9:7581"), std::nullopt);
  ASSERT_EQ(Link(3).target(), "192.0.2.9:7581");
  ASSERT_EQ(Link(3).streams.size(), 1u);
  EXPECT_TRUE(Link(3).streams.back()->cancelled);  // the close ended its stream
  EXPECT_FALSE(Link(0).streams.back()->cancelled);
  EXPECT_TRUE(open("m1"));
  EXPECT_TRUE(open("m2"));
  EXPECT_TRUE(open("b"));
  EXPECT_FALSE(sessions_->Knows("192.0.2.9:7581"));

  in_use.clear();  // m1's channels end
  run(idle / 2 + milliseconds(1));
  EXPECT_EQ(state("m2"), PeerSessionState::kIdle);  // back to a member without a session
  EXPECT_TRUE(open("m1"));                          // in use at its last check
  run(idle / 2);
  EXPECT_EQ(state("m1"), PeerSessionState::kIdle);
  EXPECT_TRUE(open("b"));
  EXPECT_EQ(sessions_->size(), 3u);

  // Used again: a new session.
  ASSERT_EQ(LinkCount(), 4u);  // no session went down meanwhile
  const size_t links = LinkCount();
  auto again = sessions_->Peer("m1");
  ASSERT_TRUE(again.ok());
  sessions_->RunOnce();
  ASSERT_EQ(LinkCount(), links + 1);
  EXPECT_EQ(Link(links).target(), "192.0.2.5:7581");
  EXPECT_TRUE(open("m1"));

  // 0 turns it off.
  sessions_->SetIdleClose(milliseconds(0));
  run(idle * 10);
  EXPECT_TRUE(open("m1"));
}

}  // namespace
}  // namespace rdmad
