// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The daemon's channel side without gRPC, for the fuzz targets: a real
// Broker (with its ServiceRegistry) and a real PeerInbound wired to it as
// daemon_broker.cc wires them, with fakes at the edges:
//   * an inventory of three devices (RoCE v2, InfiniBand, iWARP) and the
//     real path policy with the default config;
//   * peers: "B" (instance kPeerInstance, its link answered from a queue of
//     fuzzed replies), "down" (no link), "self" (this daemon: its link calls
//     the broker's own OnOpenChannel/OnCloseChannel, as the daemon does
//     when an application connects to a service on its own host), and any
//     IP literal (on demand, like "B"); anything else is NOT_FOUND;
//   * listeners whose sink answers each IncomingChannel at once from a
//     queue of fuzzed Accept/Reject requests (or not at all: the deadline
//     is 0 ms), optionally after something else happens meanwhile (the
//     initiator closes, the peer is lost, the listener goes away);
//   * holders that check they are told at most once.
// Everything runs on the calling thread; nothing blocks.
//
// Channel ids: a fuzzed id k in 1..15 names the ((k - 1) % known + 1)-th
// channel this world has seen (planned or offered; 1 is the first), so that
// scripts can reach the broker's random ids.
//
// Thread safety: single-threaded.

#ifndef RDMAD_TESTS_FUZZ_CHANNEL_WORLD_H_
#define RDMAD_TESTS_FUZZ_CHANNEL_WORLD_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/broker/broker.h"
#include "daemon/config/config.h"
#include "daemon/discovery/inventory.h"
#include "daemon/peers/fake_peer_link.h"
#include "daemon/peers/peer_inbound.h"
#include "tests/fuzz/fuzz_support.h"

namespace rdmad::fuzz {

inline constexpr char kSelfInstance[] = "0123456789abcdef0123456789abcdef";

// The fuzzed daemon's own Hello.
inline PeerHello SelfHello() {
  PeerHello hello;
  hello.protocol = {1, 0};
  hello.host_name = "fuzzhost";
  hello.instance_id = kSelfInstance;
  return hello;
}
inline constexpr char kPeerInstance[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
// The local application every fuzzed local call comes from.
inline const Caller kApp = Caller::User(1000, 4242);

// rxe0 (RoCE v2, 192.0.2.1 and 2001:db8::1 on veth0, active MTU 1024),
// mlx5_0 (InfiniBand, LID 7) and siw0 (iWARP).
Inventory FakeInventory();

// Something that happens while a handshake waits (a peer's reply or a
// listener's answer): the other side of the race.
enum class Meanwhile : uint8_t {
  kNothing,
  kRelease,    // the application releases the channel
  kPeerLost,   // the peer daemon is lost
  kPeerClose,  // the peer closes it (CloseChannel)
  kUnlisten,   // the listener goes away (acceptor only)
  kShutdown,   // rdmad stops
  kCount,
};

// The ops both channel targets share; each target maps its op bytes onto a
// subset of them.
enum class ChannelOp : uint8_t {
  // The local API (an application).
  kListen,          // ListenRequest
  kUnlisten,        // ListenRequest: the Listen stream ends
  kPlanChannel,     // PlanChannelRequest
  kConnect,         // ConnectRequest
  kHoldChannel,     // HoldChannelRequest
  kUnhold,          // HoldChannelRequest: the hold stream ends
  kReleaseChannel,  // ReleaseChannelRequest
  kListChannels,    // (none)
  kAccept,          // AcceptRequest, outside any offer
  kReject,          // RejectRequest, outside any offer
  // The listener's next answers (to the next IncomingChannel).
  kQueueAccept,  // AcceptRequest; request_id 0: the one offered
  kQueueReject,  // RejectRequest
  // The peer daemon's next reply to OpenChannel.
  kQueuePeerReply,  // OpenChannelResponse
  kQueuePeerError,  // raw: code, then message bytes
  // What happens during the next handshake wait (raw: Meanwhile).
  kQueueMeanwhile,
  // The peer API (another daemon).
  kOpenChannel,   // OpenChannelRequest
  kCloseChannel,  // CloseChannelRequest
  kPeerEvent,     // PeerEvent from B's session stream (ChannelClosed)
  kPeerLost,      // raw: which instance
  kSweep,         // raw: seconds to advance the clock
  kShutdown,      // (none)
  kCount,
};

// The op tables of the two channel targets: a record's op byte picks
// table[op % size].
inline constexpr ChannelOp kLocalChannelOps[] = {
    ChannelOp::kListen,         ChannelOp::kUnlisten,       ChannelOp::kPlanChannel,
    ChannelOp::kConnect,        ChannelOp::kHoldChannel,    ChannelOp::kUnhold,
    ChannelOp::kReleaseChannel, ChannelOp::kListChannels,   ChannelOp::kAccept,
    ChannelOp::kReject,         ChannelOp::kQueueAccept,    ChannelOp::kQueueReject,
    ChannelOp::kQueuePeerReply, ChannelOp::kQueuePeerError, ChannelOp::kQueueMeanwhile,
    ChannelOp::kPeerLost,       ChannelOp::kSweep,          ChannelOp::kShutdown,
};
inline constexpr ChannelOp kPeerChannelOps[] = {
    ChannelOp::kOpenChannel, ChannelOp::kCloseChannel,   ChannelOp::kPeerEvent,
    ChannelOp::kListen,      ChannelOp::kUnlisten,       ChannelOp::kQueueAccept,
    ChannelOp::kQueueReject, ChannelOp::kQueueMeanwhile, ChannelOp::kHoldChannel,
    ChannelOp::kUnhold,      ChannelOp::kReleaseChannel, ChannelOp::kListChannels,
    ChannelOp::kPlanChannel, ChannelOp::kConnect,        ChannelOp::kPeerLost,
    ChannelOp::kSweep,       ChannelOp::kShutdown,
};

// Runs a script (fuzz_support.h) against a fresh world with the table.
template <size_t N>
void RunChannelScript(const ChannelOp (&ops)[N], const uint8_t* data, size_t size);

// The op byte of op in the table (for the seed generator).
template <size_t N>
constexpr uint8_t OpByte(const ChannelOp (&ops)[N], ChannelOp op) {
  for (size_t i = 0; i < N; ++i) {
    if (ops[i] == op) return static_cast<uint8_t>(i);
  }
  return 0xFF;
}

// The world is the broker's network too: peers B, self and "down".
class ChannelWorld : private BrokerNetwork, private SourceAddressLookup {
 public:
  ChannelWorld();
  ~ChannelWorld();

  // Runs one op with its payload.
  void Run(ChannelOp op, std::string_view payload);
  // Checks the table's rules (states only move forward, ...).
  void CheckTable();

 private:
  class Sink;
  class Holder;
  struct ListenerAnswer {
    bool accept = false;
    uint64_t request_id = 0;
    StatusOr<ChannelEndpoint> endpoint = Status(StatusCode::kUnknown, "unset");
    std::string reason;
  };

  BrokerOptions Options();
  // BrokerNetwork.
  StatusOr<PathDecision> ResolvePath(const PathRequest& request) const override;
  // SourceAddressLookup.
  std::optional<std::string> SourceAddressFor(const std::string& ip) const override;
  StatusOr<BrokerPeer> FindPeer(const std::string& name, std::optional<uid_t> opener) override;
  StatusOr<std::shared_ptr<PeerLink>> LinkToInstance(const std::string& id) override;
  Status SendEvent(const std::string& id, const PeerEvent& event) override;
  uint64_t MapId(uint64_t id) const;
  void Remember(uint64_t id);
  void DoMeanwhile(uint64_t channel_id, const std::string& service);
  StatusOr<ChannelEndpoint> NextPeerReply(const OpenChannelCall& call);
  void Answer(const IncomingChannelRequest& request);

  ManualClock clock_;
  Inventory inventory_;
  Config config_;
  std::shared_ptr<FakePeerLink> link_;  // peer B
  std::shared_ptr<FakePeerLink> loop_;  // this daemon, through its own inbound
  std::unique_ptr<Broker> broker_;
  FixedHello hello_{SelfHello()};
  std::unique_ptr<PeerInbound> inbound_;
  std::map<std::string, std::unique_ptr<ServiceRegistration>> listeners_;
  std::map<uint64_t, std::vector<std::pair<uint64_t, std::shared_ptr<Holder>>>> holds_;
  std::vector<std::shared_ptr<Holder>> holders_;
  std::vector<uint64_t> known_;
  std::map<uint64_t, ChannelState> seen_;
  std::deque<ListenerAnswer> answers_;
  std::deque<StatusOr<ChannelEndpoint>> replies_;
  std::deque<Meanwhile> meanwhile_;
  int depth_ = 0;  // nested handshakes (self channels)
};

template <size_t N>
void RunChannelScript(const ChannelOp (&ops)[N], const uint8_t* data, size_t size) {
  ChannelWorld world;
  Script script(data, size);
  uint8_t op;
  std::string_view payload;
  while (script.Next(&op, &payload)) {
    world.Run(ops[op % N], payload);
    world.CheckTable();
  }
}

}  // namespace rdmad::fuzz

#endif  // RDMAD_TESTS_FUZZ_CHANNEL_WORLD_H_
