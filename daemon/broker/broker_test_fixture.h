// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The broker's unit-test fixture (broker_test.cc, broker_reattach_test.cc):
// a Broker with a fake peer "B" (one FakePeerLink, instance kInstanceB), a
// fake clock, and a holder that records how channels ended.
//
// Thread safety: as the tests use it, from the test's thread (the broker's
// callbacks may come from a Connect's thread).

#ifndef RDMAD_DAEMON_BROKER_BROKER_TEST_FIXTURE_H_
#define RDMAD_DAEMON_BROKER_BROKER_TEST_FIXTURE_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/broker/broker.h"
#include "daemon/peers/fake_peer_link.h"
#include "gtest/gtest.h"

namespace rdmad::testing {

using namespace std::chrono_literals;

inline constexpr char kInstanceA[] = "0123456789abcdef0123456789abcdef";
inline constexpr char kInstanceB[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
// The application the tests' channels and listeners belong to.
inline const Caller kApp = Caller::User(1000, 4242);

inline ChannelEndpoint TcpEnd(uint16_t port) {
  ChannelEndpoint e;
  e.tcp = internal::TcpEndpoint{};
  e.tcp->host = "127.0.0.1";
  e.tcp->port = port;
  e.tcp->token[0] = 1;
  return e;
}

// Peer B's OpenChannel for service: one channel per id, each by TCP.
inline OpenChannelCall CallFromB(const std::vector<uint64_t>& ids,
                                 const std::string& service = "svc") {
  OpenChannelCall call;
  call.service = service;
  call.initiator_host = "hostB";
  call.initiator_instance = kInstanceB;
  for (uint64_t id : ids) call.channels.push_back({id, TcpEnd(1)});
  return call;
}

class FakeHolder : public ChannelHolder {
 public:
  void OnChannelEnded(ChannelState state, const std::string& reason) override {
    std::lock_guard lock(mu);
    ends.emplace_back(state, reason);
  }
  std::vector<std::pair<ChannelState, std::string>> Ends() {
    std::lock_guard lock(mu);
    return ends;
  }
  std::mutex mu;
  std::vector<std::pair<ChannelState, std::string>> ends;
};

// The broker under test, and its network: peer "B" (up unless `up` is
// false) reached through `link`, paths as `path` says, events recorded.
struct Fixture : BrokerNetwork {
  std::shared_ptr<FakePeerLink> link = std::make_shared<FakePeerLink>();
  bool up = true;
  bool instance_link = true;  // LinkToInstance finds link
  ManualClock clock;
  SourceAddressTable sources{{{"192.0.2.7", "192.0.2.1"}}};
  std::vector<std::pair<std::string, PeerEvent>> events;
  std::optional<PathDecision> path;  // what ResolvePath answers (none: no RDMA)
  ChannelRails rails;                // what RailsFor answers
  pid_t rails_pid = -1;              // the pid RailsFor was last asked for
  std::function<void()> on_find;     // called as FindPeer or LinkToInstance is asked
  BrokerOptions options = Options();
  Broker broker{options};

  BrokerOptions Options() {
    BrokerOptions o;
    o.host_name = "hostA";
    o.instance_id = kInstanceA;
    o.accept_deadline = 2000ms;
    o.network = this;
    o.source_address = &sources;
    o.clock = &clock;
    return o;
  }

  StatusOr<PathDecision> ResolvePath(const PathRequest&) const override {
    if (path) return *path;
    return Status::NotFound("no RDMA device");
  }
  ChannelRails RailsFor(const PathDecision&, pid_t pid) override {
    rails_pid = pid;
    return rails;
  }
  StatusOr<BrokerPeer> FindPeer(const std::string& name, std::optional<uid_t>) override {
    if (on_find) on_find();
    if (name != "B") return Status::NotFound("unknown peer " + name);
    BrokerPeer p{"B", "127.0.0.1:7581", kInstanceB, Status::Unavailable("peer B is down: refused")};
    if (up) p.link = std::static_pointer_cast<PeerLink>(link);
    return p;
  }
  StatusOr<std::shared_ptr<PeerLink>> LinkToInstance(const std::string& id) override {
    if (on_find) on_find();
    if (!instance_link || id != kInstanceB) return Status::NotFound("no session");
    return std::static_pointer_cast<PeerLink>(link);
  }
  Status SendEvent(const std::string& id, const PeerEvent& e) override {
    events.emplace_back(id, e);
    return Status::Ok();
  }

  // An established initiator channel (TCP).
  uint64_t Established() {
    link->open_answer = [](const OpenChannelCall&) -> StatusOr<ChannelEndpoint> {
      return TcpEnd(5000);
    };
    auto planned = broker.PlanChannel(kApp, "B", "svc", true);
    EXPECT_TRUE(planned.ok()) << planned.status().ToString();
    auto reply = broker.Connect(kApp, planned.value().channel_ids[0], TcpEnd(1));
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    return planned.value().channel_ids[0];
  }

  ChannelRecord Record(uint64_t id) {
    for (const ChannelRecord& r : broker.Channels()) {
      if (r.channel_id == id) return r;
    }
    return ChannelRecord{};
  }
};

}  // namespace rdmad::testing

#endif  // RDMAD_DAEMON_BROKER_BROKER_TEST_FIXTURE_H_
