// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "tests/fuzz/channel_world.h"

#include <arpa/inet.h>

#include "daemon/peers/peer_protocol.h"
#include "daemon/policy/path_policy.h"
#include "daemon/rpc/channel_convert.h"
#include "daemon/rpc/peer_convert.h"
#include "tests/fuzz/fuzz_support.h"

namespace rdmad::fuzz {
namespace {

using namespace std::chrono_literals;

GidEntry RoceGid(int index, const std::string& gid, const std::string& ip, GidType type) {
  return GidEntry{index, gid, type, "veth0", ip};
}

bool IsIp(const std::string& host) {
  unsigned char buf[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

int Rank(ChannelState s) {
  switch (s) {
    case ChannelState::kPlanned: return 0;
    case ChannelState::kOpening: return 1;
    case ChannelState::kEstablished: return 2;
    case ChannelState::kFailed:
    case ChannelState::kClosed: return 3;
  }
  return -1;
}

}  // namespace

Inventory FakeInventory() {
  Inventory inv;
  DeviceInfo rxe;
  rxe.name = "rxe0";
  rxe.node_type = NodeType::kCa;
  rxe.parent_netdev = "veth0";
  PortInfo p;
  p.port = 1;
  p.state = 4;
  p.state_name = "ACTIVE";
  p.link_layer = LinkLayer::kEthernet;
  p.transport = Transport::kRoceV2;
  p.max_mtu = 4096;
  p.active_mtu = 1024;
  p.netdev = "veth0";
  p.netdev_mtu = 1500;
  p.gids = {
      RoceGid(0, "fe80:0000:0000:0000:0000:00ff:fe00:0001", "fe80::ff:fe00:1", GidType::kRoceV1),
      RoceGid(1, "0000:0000:0000:0000:0000:ffff:c000:0201", "192.0.2.1", GidType::kRoceV2),
      RoceGid(2, "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1", GidType::kRoceV2)};
  rxe.ports.push_back(p);
  PortInfo down = p;
  down.port = 2;
  down.state = 1;
  down.state_name = "DOWN";
  rxe.ports.push_back(down);
  inv.devices.push_back(rxe);

  DeviceInfo ib;
  ib.name = "mlx5_0";
  ib.node_type = NodeType::kCa;
  PortInfo q;
  q.port = 1;
  q.state = 4;
  q.state_name = "ACTIVE";
  q.link_layer = LinkLayer::kInfiniBand;
  q.transport = Transport::kInfiniBand;
  q.max_mtu = 4096;
  q.active_mtu = 4096;
  q.lid = 7;
  q.gids = {GidEntry{0, "fe80:0000:0000:0000:0c42:a103:0065:e8f4", GidType::kIb, "", ""}};
  ib.ports.push_back(q);
  inv.devices.push_back(ib);

  DeviceInfo siw;
  siw.name = "siw0";
  siw.node_type = NodeType::kRnic;
  PortInfo r;
  r.port = 1;
  r.state = 4;
  r.state_name = "ACTIVE";
  r.link_layer = LinkLayer::kEthernet;
  r.transport = Transport::kIwarp;
  r.max_mtu = 1024;
  r.active_mtu = 1024;
  r.netdev = "eth1";
  siw.ports.push_back(r);
  inv.devices.push_back(siw);
  return inv;
}

// The listener's stream, as ListenSink is: events from the registry.
class ChannelWorld::Sink final : public ServiceSink {
 public:
  explicit Sink(ChannelWorld* world) : world_(world) {}
  void OnIncoming(const IncomingChannelRequest& request) override { world_->Answer(request); }
  void OnChannelClosed(uint64_t channel_id, const std::string& reason) override {
    FUZZ_CHECK(channel_id != 0);
    FUZZ_CHECK(!reason.empty());
    v1::ListenEvent event;  // as ListenSink writes it
    event.mutable_closed()->set_channel_id(channel_id);
    event.mutable_closed()->set_reason(reason);
  }

 private:
  ChannelWorld* world_;
};

// HoldReactor's sink: told at most once, with an ended state and why.
class ChannelWorld::Holder final : public ChannelHolder {
 public:
  void OnChannelEnded(ChannelState state, const std::string& reason) override {
    FUZZ_CHECK_MSG(!told_, reason);
    told_ = true;
    FUZZ_CHECK(ChannelEnded(state));
    FUZZ_CHECK(!reason.empty());
  }

 private:
  bool told_ = false;
};

// This daemon's link to itself: what the peer server would do, inline.
std::shared_ptr<FakePeerLink> SelfLink(PeerInbound* inbound) {
  auto link = std::make_shared<FakePeerLink>("127.0.0.1:7581");
  link->open_batch_answer = [inbound](const OpenChannelCall& call) -> StatusOr<ChannelEndpoints> {
    v1::OpenChannelRequest wire;
    ToProto(call, &wire);
    StatusOr<OpenChannelCall> back = FromProto(wire);
    if (!back.ok()) return back.status();
    return inbound->OpenChannel(back.value(), "ipv4:127.0.0.1:40000");
  };
  link->close_answer = [inbound](const CloseChannelCall& call) {
    return inbound->CloseChannel(call);
  };
  return link;
}

ChannelWorld::ChannelWorld()
    : inventory_(FakeInventory()),
      config_(DefaultConfig()),
      link_(std::make_shared<FakePeerLink>("192.0.2.7:7581")) {
  // Peer B's link: OpenChannel answered from the queue of fuzzed replies.
  link_->open_answer = [this](const OpenChannelCall& call) {
    v1::OpenChannelRequest wire;  // what goes to the peer
    ToProto(call, &wire);
    return NextPeerReply(call);
  };
  link_->close_answer = [](const CloseChannelCall& call) {
    FUZZ_CHECK(call.channel_id != 0);
    FUZZ_CHECK(call.reason.size() <= 1024);
    return Status::Ok();
  };
  inbound_ = std::make_unique<PeerInbound>(hello_);
  broker_ = std::make_unique<Broker>(Options());
  Broker* broker = broker_.get();
  inbound_->SetChannels(broker);
  loop_ = SelfLink(inbound_.get());
}

ChannelWorld::~ChannelWorld() {
  broker_->Shutdown();
  CheckTable();
  listeners_.clear();  // the registrations before their registry
  broker_.reset();
  inbound_.reset();
}

BrokerOptions ChannelWorld::Options() {
  BrokerOptions o;
  o.host_name = "fuzzhost";
  o.instance_id = kSelfInstance;
  o.accept_deadline = 0ms;  // a listener that does not answer at once never does
  o.max_ended = 8;
  o.network = this;
  o.source_address = this;
  o.clock = &clock_;
  return o;
}

StatusOr<PathDecision> ChannelWorld::ResolvePath(const PathRequest& request) const {
  return rdmad::ResolvePath(inventory_, config_, request, this);
}

// The lab's networks, both families.
std::optional<std::string> ChannelWorld::SourceAddressFor(const std::string& ip) const {
  if (ip.rfind("192.0.2.", 0) == 0) return "192.0.2.1";
  if (ip.rfind("2001:db8:", 0) == 0) return "2001:db8::1";
  return std::nullopt;
}

StatusOr<BrokerPeer> ChannelWorld::FindPeer(const std::string& name, std::optional<uid_t>) {
  if (name == "B")
    return BrokerPeer{"B", "192.0.2.7:7581", kPeerInstance, std::shared_ptr<PeerLink>(link_)};
  if (name == "self")
    return BrokerPeer{"self", "127.0.0.1:7581", kSelfInstance, std::shared_ptr<PeerLink>(loop_)};
  if (name == "down") {
    return BrokerPeer{"down", "192.0.2.8:7581", "",
                      Status::Unavailable("peer down: connection refused")};
  }
  if (!IsIp(HostOfAddress(name))) {
    return Status::NotFound("unknown peer " + name + ": not a [[peers]] name nor an IP address");
  }
  StatusOr<std::string> address = NormalizePeerAddress(name);
  if (!address.ok())
    return Status::NotFound("unknown peer " + name + ": " + address.status().message());
  return BrokerPeer{name, address.value(), kPeerInstance, std::shared_ptr<PeerLink>(link_)};
}

StatusOr<std::shared_ptr<PeerLink>> ChannelWorld::LinkToInstance(const std::string& id) {
  if (id == kPeerInstance) return std::static_pointer_cast<PeerLink>(link_);
  if (id == kSelfInstance) return std::static_pointer_cast<PeerLink>(loop_);
  return Status::NotFound("no session up to rdmad instance " + id);
}

Status ChannelWorld::SendEvent(const std::string& id, const PeerEvent& event) {
  return inbound_->Send(id, event);
}

uint64_t ChannelWorld::MapId(uint64_t id) const {
  if (id == 0 || id >= 16 || known_.empty()) return id;
  return known_[(id - 1) % known_.size()];
}

void ChannelWorld::Remember(uint64_t id) {
  if (id == 0) return;
  for (uint64_t k : known_) {
    if (k == id) return;
  }
  if (known_.size() < 16) known_.push_back(id);
}

void ChannelWorld::DoMeanwhile(uint64_t channel_id, const std::string& service) {
  if (meanwhile_.empty()) return;
  Meanwhile what = meanwhile_.front();
  meanwhile_.pop_front();
  std::string instance;
  for (const ChannelRecord& r : broker_->Channels()) {
    if (r.channel_id == channel_id) instance = r.peer_instance;
  }
  switch (what) {
    case Meanwhile::kNothing: break;
    case Meanwhile::kRelease:
      CheckStatus(broker_->Release(kApp, channel_id, "closed by the application"));
      break;
    case Meanwhile::kPeerLost: broker_->OnPeerLost(instance, "B", "connection reset"); break;
    case Meanwhile::kPeerClose:
      CheckStatus(inbound_->CloseChannel(CloseChannelCall{channel_id, "bye", instance}));
      break;
    case Meanwhile::kUnlisten: listeners_.erase(service); break;
    case Meanwhile::kShutdown: broker_->Shutdown(); break;
    case Meanwhile::kCount: break;
  }
}

StatusOr<ChannelEndpoint> ChannelWorld::NextPeerReply(const OpenChannelCall& call) {
  FUZZ_CHECK(!call.channels.empty());
  for (const ChannelOpening& c : call.channels) {
    FUZZ_CHECK(c.channel_id != 0);
    FUZZ_CHECK(ValidateChannelEndpoint(c.endpoint, /*listening=*/false).ok());
  }
  DoMeanwhile(call.channels.front().channel_id, call.service);
  if (replies_.empty()) return Status::DeadlineExceeded("Deadline Exceeded");
  StatusOr<ChannelEndpoint> reply = std::move(replies_.front());
  replies_.pop_front();
  return reply;
}

void ChannelWorld::Answer(const IncomingChannelRequest& request) {
  FUZZ_CHECK(request.request_id != 0);
  FUZZ_CHECK(!request.channels.empty());
  FUZZ_CHECK(request.plan.path.has_value() != !request.plan.tcp_reason.empty());
  FUZZ_CHECK(!request.plan.tcp_bind_host.empty());
  {
    v1::ListenEvent event;  // as ListenSink writes it
    v1::IncomingChannel* in = event.mutable_incoming();
    for (const ChannelOpening& c : request.channels) {
      FUZZ_CHECK(c.channel_id != 0);
      FUZZ_CHECK(ValidateChannelEndpoint(c.endpoint, /*listening=*/false).ok());
      Remember(c.channel_id);
      ToProto(c, in->add_channels());
    }
    ToProto(request.plan, in->mutable_plan());
  }
  DoMeanwhile(request.channels.front().channel_id, request.service);
  if (answers_.empty()) return;
  ListenerAnswer a = std::move(answers_.front());
  answers_.pop_front();
  uint64_t id = a.request_id == 0 ? request.request_id : a.request_id;
  if (!a.accept) {
    CheckStatus(
        broker_->services().Reject(kApp, id, a.reason.empty() ? "no reason given" : a.reason));
  } else if (!a.endpoint.ok()) {
    CheckStatus(a.endpoint.status());
  } else {
    Status accepted = broker_->services().Accept(kApp, id, {a.endpoint.value()});
    CheckStatus(accepted);
    if (accepted.ok()) FUZZ_CHECK(ValidateChannelEndpoint(a.endpoint.value()).ok());
  }
}

void ChannelWorld::CheckTable() {
  std::map<uint64_t, ChannelState> now;
  for (const ChannelRecord& r : broker_->Channels()) {
    FUZZ_CHECK(r.channel_id != 0);
    FUZZ_CHECK(!ChannelEnded(r.state) || !r.reason.empty());
    auto it = seen_.find(r.channel_id);
    if (it != seen_.end()) {
      FUZZ_CHECK_MSG(Rank(it->second) <= Rank(r.state), std::string(ChannelStateName(it->second)) +
                                                            " -> " +
                                                            std::string(ChannelStateName(r.state)));
      FUZZ_CHECK_MSG(!ChannelEnded(it->second) || it->second == r.state,
                     std::string(ChannelStateName(it->second)) + " -> " +
                         std::string(ChannelStateName(r.state)));
    }
    now[r.channel_id] = r.state;
  }
  seen_ = std::move(now);
}

void ChannelWorld::Run(ChannelOp op, std::string_view payload) {
  switch (op) {
    case ChannelOp::kListen: {
      v1::ListenRequest req;
      if (!Parse(payload, &req)) return;
      auto registration =
          broker_->services().Register(req.service(), std::make_shared<Sink>(this), kApp);
      CheckStatus(registration.status());
      if (registration.ok()) listeners_[req.service()] = std::move(registration).value();
      break;
    }
    case ChannelOp::kUnlisten: {
      v1::ListenRequest req;
      if (!Parse(payload, &req)) return;
      listeners_.erase(req.service());
      break;
    }
    case ChannelOp::kPlanChannel: {
      v1::PlanChannelRequest req;
      if (!Parse(payload, &req)) return;
      if (req.peer().empty()) return;  // the handler: "peer: required"
      auto planned = broker_->PlanChannel(kApp, req.peer(), req.service(), req.force_tcp());
      CheckStatus(planned.status());
      if (!planned.ok()) return;
      const PlannedChannel& p = planned.value();
      FUZZ_CHECK(p.channel_ids.size() == 1 && p.channel_ids[0] != 0);
      FUZZ_CHECK(p.plan.path.has_value() != !p.plan.tcp_reason.empty());
      v1::PlanChannelResponse response;
      response.add_channel_ids(p.channel_ids[0]);
      ToProto(p.plan, response.mutable_plan());
      response.set_peer_address(p.peer_address);
      if (p.plan.path) internal::PlanFromPath(response.plan().path());
      Remember(p.channel_ids[0]);
      break;
    }
    case ChannelOp::kConnect: {
      v1::ConnectRequest req;
      if (!Parse(payload, &req)) return;
      StatusOr<std::vector<ChannelOpening>> channels = FromProto(req.channels());
      CheckStatus(channels.status());
      if (!channels.ok()) return;
      for (ChannelOpening& c : channels.value()) c.channel_id = MapId(c.channel_id);
      if (++depth_ > 1) {  // never: Connect is not reentered
        --depth_;
        return;
      }
      StatusOr<ChannelEndpoints> peer = broker_->Connect(kApp, channels.value());
      --depth_;
      CheckStatus(peer.status());
      if (!peer.ok()) return;
      FUZZ_CHECK(peer.value().size() == channels.value().size());
      v1::ConnectResponse response;
      for (const ChannelEndpoint& e : peer.value()) {
        FUZZ_CHECK(ValidateChannelEndpoint(e).ok());
        ToProto(e, response.add_channels()->mutable_peer());
      }
      break;
    }
    case ChannelOp::kHoldChannel: {
      v1::HoldChannelRequest req;
      if (!Parse(payload, &req) || req.channel_ids().empty()) return;
      uint64_t id = MapId(req.channel_ids(0));
      auto holder = std::make_shared<Holder>();
      auto held = broker_->Hold(kApp, id, holder);
      CheckStatus(held.status());
      if (!held.ok()) return;
      if (held.value().token == 0) {
        FUZZ_CHECK(ChannelEnded(held.value().state));
        FUZZ_CHECK(!held.value().reason.empty());
        return;
      }
      if (holders_.size() < 64) {
        holders_.push_back(holder);
        holds_[id].emplace_back(held.value().token, holder);
      } else {
        broker_->Unhold(id, held.value().token, "the application went away");
      }
      break;
    }
    case ChannelOp::kUnhold: {
      v1::HoldChannelRequest req;
      if (!Parse(payload, &req) || req.channel_ids().empty()) return;
      uint64_t id = MapId(req.channel_ids(0));
      auto it = holds_.find(id);
      if (it == holds_.end() || it->second.empty()) return;
      uint64_t token = it->second.back().first;
      it->second.pop_back();
      broker_->Unhold(id, token, "the application went away");
      break;
    }
    case ChannelOp::kReleaseChannel: {
      v1::ReleaseChannelRequest req;
      if (!Parse(payload, &req)) return;
      if (req.channel_id() == 0) return;  // the handler: "channel_id: required"
      std::string reason = "closed by the application";
      if (!req.reason().empty()) reason += ": " + req.reason();
      CheckStatus(broker_->Release(kApp, MapId(req.channel_id()), reason));
      break;
    }
    case ChannelOp::kListChannels: {
      CheckTable();
      v1::ListChannelsResponse response;
      for (const ChannelRecord& r : broker_->Channels()) {
        ToProto(r, std::chrono::system_clock::now(), response.add_channels());
      }
      break;
    }
    case ChannelOp::kAccept: {
      v1::AcceptRequest req;
      if (!Parse(payload, &req)) return;
      StatusOr<ChannelEndpoints> endpoints = EndpointsFromProto(req.endpoints(), "endpoints");
      CheckStatus(endpoints.status());
      if (!endpoints.ok()) return;
      CheckStatus(broker_->services().Accept(kApp, req.request_id(), endpoints.value()));
      break;
    }
    case ChannelOp::kReject: {
      v1::RejectRequest req;
      if (!Parse(payload, &req)) return;
      CheckStatus(broker_->services().Reject(
          kApp, req.request_id(), req.reason().empty() ? "no reason given" : req.reason()));
      break;
    }
    case ChannelOp::kQueueAccept: {
      v1::AcceptRequest req;
      if (!Parse(payload, &req) || answers_.size() >= 16) return;
      StatusOr<ChannelEndpoints> endpoints = EndpointsFromProto(req.endpoints(), "endpoints");
      answers_.push_back({true, req.request_id(),
                          endpoints.ok() ? StatusOr<ChannelEndpoint>(endpoints.value().front())
                                         : StatusOr<ChannelEndpoint>(endpoints.status()),
                          ""});
      break;
    }
    case ChannelOp::kQueueReject: {
      v1::RejectRequest req;
      if (!Parse(payload, &req) || answers_.size() >= 16) return;
      answers_.push_back(
          {false, req.request_id(), Status(StatusCode::kUnknown, "unset"), req.reason()});
      break;
    }
    case ChannelOp::kQueuePeerReply: {
      v1::OpenChannelResponse reply;
      if (!Parse(payload, &reply) || replies_.size() >= 16) return;
      // As the gRPC link hands the reply to the broker (one channel each).
      StatusOr<ChannelEndpoints> acceptors =
          EndpointsFromProto(reply.acceptors(), "the peer's acceptors");
      if (acceptors.ok()) {
        replies_.push_back(std::move(acceptors.value().front()));
      } else {
        replies_.push_back(acceptors.status());
      }
      break;
    }
    case ChannelOp::kQueuePeerError: {
      if (replies_.size() >= 16) return;
      int code = payload.empty() ? 2 : 1 + static_cast<uint8_t>(payload[0]) % 16;  // 1..16
      std::string message(payload.empty() ? "" : payload.substr(1));
      if (message.empty()) message = "error";
      replies_.push_back(Status(static_cast<StatusCode>(code), message));
      break;
    }
    case ChannelOp::kQueueMeanwhile: {
      if (meanwhile_.size() >= 16) return;
      uint32_t what = RawU32(payload.substr(0, 1)) % uint32_t(Meanwhile::kCount);
      meanwhile_.push_back(static_cast<Meanwhile>(what));
      break;
    }
    case ChannelOp::kOpenChannel: {
      v1::OpenChannelRequest req;
      if (!Parse(payload, &req)) return;
      StatusOr<OpenChannelCall> call = FromProto(req);
      CheckStatus(call.status());
      if (!call.ok()) return;
      for (ChannelOpening& c : call.value().channels) {
        c.channel_id = MapId(c.channel_id);
        seen_.erase(c.channel_id);  // an ended id may be used again
      }
      static const char* kFrom[] = {"ipv4:192.0.2.7:40000", "ipv6:[2001:db8::7]:40000",
                                    "ipv6:%5B::1%5D:40000", "unix:/run/x", ""};
      const char* from = kFrom[req.channels(0).channel_id() % 5];
      StatusOr<ChannelEndpoints> answer = inbound_->OpenChannel(call.value(), from);
      CheckStatus(answer.status());
      for (const ChannelOpening& c : call.value().channels) Remember(c.channel_id);
      if (!answer.ok()) return;
      FUZZ_CHECK(answer.value().size() == call.value().channels.size());
      v1::OpenChannelResponse response;
      for (const ChannelEndpoint& e : answer.value()) {
        FUZZ_CHECK(ValidateChannelEndpoint(e).ok());
        ToProto(e, response.add_acceptors());
      }
      break;
    }
    case ChannelOp::kCloseChannel: {
      v1::CloseChannelRequest req;
      if (!Parse(payload, &req)) return;
      CloseChannelCall call{MapId(req.channel_id()), req.reason(), req.initiator_instance()};
      CheckStatus(inbound_->CloseChannel(call));
      break;
    }
    case ChannelOp::kPeerEvent: {
      v1::PeerEvent wire;
      if (!Parse(payload, &wire)) return;
      PeerEvent event = FromProto(wire);
      if (event.kind != PeerEvent::Kind::kChannelClosed) return;
      FUZZ_CHECK(event.reason.size() <= 1024);
      // As daemon_broker.cc hands B's ChannelClosed to the broker.
      CheckStatus(broker_->OnCloseChannel(
          CloseChannelCall{MapId(event.channel_id), event.reason, kPeerInstance}));
      break;
    }
    case ChannelOp::kPeerLost: {
      uint32_t which = RawU32(payload.substr(0, 1)) % 3;
      const char* instance = which == 0 ? kPeerInstance : which == 1 ? kSelfInstance : "";
      broker_->OnPeerLost(instance, "B", "connection reset");
      break;
    }
    case ChannelOp::kSweep: {
      clock_.Advance(std::chrono::seconds(RawU32(payload.substr(0, 2))));
      broker_->Sweep();
      break;
    }
    case ChannelOp::kShutdown: broker_->Shutdown(); break;
    case ChannelOp::kCount: break;
  }
}

}  // namespace rdmad::fuzz
