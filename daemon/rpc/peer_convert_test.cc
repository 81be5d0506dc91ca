// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/peer_convert.h"

#include "gtest/gtest.h"

namespace rdmad {
namespace {

TEST(PeerConvertTest, HelloRoundTrips) {
  PeerHello h;
  h.protocol = {1, 2};
  h.host_name = "node-b";
  h.daemon_version = "0.1.0";
  h.instance_id = "0123456789abcdef0123456789abcdef";
  h.transports = {"RoCE v2", "InfiniBand"};
  h.ports = {{"mlx5_0", 1, 4096, "RoCE v2"}, {"mlx5_1", 2, 2048, "InfiniBand"}};
  v1::HelloInfo wire;
  ToProto(h, &wire);
  EXPECT_EQ(FromProto(wire), h);
}

TEST(PeerConvertTest, APeersHugeNumbersAreClampedThenRejected) {
  v1::HelloInfo wire;
  wire.mutable_protocol()->set_major(1);
  wire.set_host_name("node-b");
  wire.set_instance_id("0123456789abcdef0123456789abcdef");
  v1::PeerPort* port = wire.mutable_capabilities()->add_ports();
  port->set_device("mlx5_0");
  port->set_port(0xffffffffu);
  port->set_active_mtu(4096);
  PeerHello h = FromProto(wire);
  EXPECT_EQ(h.ports.at(0).port, 0x7fffffff);
  EXPECT_EQ(ValidateHello(h, "self").code(), StatusCode::kInvalidArgument);
  for (int i = 0; i < 5000; ++i) wire.mutable_capabilities()->add_transports("x");
  EXPECT_EQ(FromProto(wire).transports.size(), kMaxPeerPorts + 1);
}

TEST(PeerConvertTest, EventsOfANewerVersionAreUnknown) {
  v1::PeerEvent wire;
  wire.set_sequence(3);
  EXPECT_EQ(FromProto(wire).kind, PeerEvent::Kind::kUnknown);
  wire.mutable_channel_closed()->set_channel_id(5);
  wire.mutable_channel_closed()->set_reason("gone");
  PeerEvent e = FromProto(wire);
  EXPECT_EQ(e.kind, PeerEvent::Kind::kChannelClosed);
  EXPECT_EQ(e.channel_id, 5u);
  EXPECT_EQ(e.reason, "gone");
  EXPECT_EQ(e.sequence, 3u);
}

TEST(PeerConvertTest, SnapshotsBecomeTheLocalApisPeer) {
  PeerSnapshot s;
  s.name = "b";
  s.address = "127.0.0.1:7600";
  s.state = PeerSessionState::kVersionMismatch;
  s.last_error = "peer b speaks rdmad protocol 2.0, this daemon 1.0";
  PeerHello remote;
  remote.protocol = {2, 0};
  remote.host_name = "node-b";
  remote.daemon_version = "2.0.0";
  s.remote = remote;
  v1::Peer out;
  ToProto(s, &out);
  EXPECT_EQ(out.state(), v1::PEER_VERSION_MISMATCH);
  EXPECT_EQ(out.remote_protocol(), "2.0");
  EXPECT_EQ(out.remote_host(), "node-b");
  EXPECT_EQ(out.last_error(), s.last_error);
}

TEST(PeerConvertTest, CircuitOpenCarriesWhenItEnds) {
  PeerSnapshot s;
  s.name = "b";
  s.state = PeerSessionState::kCircuitOpen;
  s.failures = 5;
  s.circuit_open_until = std::chrono::system_clock::time_point(std::chrono::seconds(1000));
  v1::Peer out;
  ToProto(s, &out);
  EXPECT_EQ(out.state(), v1::PEER_CIRCUIT_OPEN);
  EXPECT_EQ(out.circuit_open_until_unix_ms(), 1000000);
  EXPECT_EQ(out.failures(), 5u);
}

TEST(PeerConvertTest, CountsTheEstablishedChannelsWithAPeer) {
  PeerSnapshot s;
  s.name = "b";
  PeerHello remote;
  remote.instance_id = "i-b";
  s.remote = remote;
  auto record = [](std::string peer, std::string instance, ChannelState state) {
    ChannelRecord r;
    r.peer = std::move(peer);
    r.peer_instance = std::move(instance);
    r.state = state;
    return r;
  };
  std::vector<ChannelRecord> channels = {
      record("b", "i-b", ChannelState::kEstablished),
      record("node-b", "i-b", ChannelState::kEstablished),  // accepted from b
      record("b", "", ChannelState::kPlanned),
      record("b", "i-b", ChannelState::kClosed),
      record("c", "i-c", ChannelState::kEstablished),
  };
  EXPECT_EQ(EstablishedChannelsWith(s, channels), 2);
  EXPECT_EQ(EstablishedChannelsWith(s, {}), 0);
}

}  // namespace
}  // namespace rdmad
