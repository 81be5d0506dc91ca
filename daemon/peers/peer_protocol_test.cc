// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/peer_protocol.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rdmad {
namespace {

using ::testing::HasSubstr;

PeerHello Valid() {
  PeerHello h;
  h.protocol = {1, 0};
  h.host_name = "node-b";
  h.daemon_version = "0.1.0";
  h.instance_id = "0123456789abcdef0123456789abcdef";
  h.transports = {"RoCE v2"};
  h.ports = {{"mlx5_0", 1, 4096, "RoCE v2"}};
  return h;
}

TEST(PeerProtocolTest, ThisDaemonSpeaks2Point0) {
  EXPECT_EQ(LocalProtocolVersion(), (ProtocolVersion{2, 0}));
  EXPECT_EQ(FormatProtocol({2, 0}), "2.0");
}

TEST(PeerProtocolTest, OnlyTheMajorVersionMustMatch) {
  EXPECT_TRUE(CheckProtocol({1, 0}, {1, 7}, "b").ok());
  Status s = CheckProtocol({1, 0}, {2, 0}, "node2");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "peer node2 speaks rdmad protocol 2.0, this daemon 1.0");
}

TEST(PeerProtocolTest, ValidHelloPasses) { EXPECT_TRUE(ValidateHello(Valid(), "self").ok()); }

TEST(PeerProtocolTest, GarbageInAHelloIsNamed) {
  struct Case {
    std::function<void(PeerHello*)> spoil;
    std::string message;
  };
  std::vector<Case> cases = {
      {[](PeerHello* h) {
         h->protocol = {0, 0};
       },
       "self.protocol: a major version is required"},
      {[](PeerHello* h) { h->host_name = std::string(256, 'x'); },
       "self.host_name: 1..255 bytes required"},
      {[](PeerHello* h) { h->instance_id = "XYZ"; },
       "self.instance_id: 32 lower-case hex digits required"},
      {[](PeerHello* h) { h->daemon_version = std::string(65, '1'); },
       "self.daemon_version: at most 64 bytes"},
      {[](PeerHello* h) { h->ports[0].port = 256; },
       "self.capabilities.ports: port 256 of mlx5_0 is not 1..255"},
      {[](PeerHello* h) { h->ports[0].active_mtu = 1500; },
       "self.capabilities.ports: active_mtu 1500 of mlx5_0 is not an IB MTU"},
      {[](PeerHello* h) { h->ports.resize(1025, h->ports[0]); },
       "self.capabilities: at most 1024 ports and transports"},
      {[](PeerHello* h) { h->transports = {""}; },
       "self.capabilities.transports: 1..64 bytes each"},
  };
  for (const Case& c : cases) {
    PeerHello h = Valid();
    c.spoil(&h);
    Status s = ValidateHello(h, "self");
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.message;
    EXPECT_EQ(s.message(), c.message);
  }
}

TEST(PeerProtocolTest, SessionRequestsAreChecked) {
  SessionOpen open{{1, 0}, "node-b", "0123456789abcdef0123456789abcdef", 1000};
  EXPECT_TRUE(ValidateSessionOpen(open).ok());
  open.heartbeat_interval_ms = 60001;
  EXPECT_THAT(ValidateSessionOpen(open).message(), HasSubstr("heartbeat_interval_ms"));
  open.heartbeat_interval_ms = 1000;
  open.host_name = "";
  EXPECT_THAT(ValidateSessionOpen(open).message(), HasSubstr("host_name"));
}

TEST(PeerProtocolTest, AddressesGetThePeerPort) {
  EXPECT_EQ(*NormalizePeerAddress("node2"), "node2:7581");
  EXPECT_EQ(*NormalizePeerAddress("node2.example.net:7600"), "node2.example.net:7600");
  EXPECT_EQ(*NormalizePeerAddress("127.0.0.1"), "127.0.0.1:7581");
  EXPECT_EQ(*NormalizePeerAddress("::1"), "[::1]:7581");
  EXPECT_EQ(*NormalizePeerAddress("[2001:db8::3]"), "[2001:db8::3]:7581");
  EXPECT_EQ(*NormalizePeerAddress("[2001:db8::3]:9000"), "[2001:db8::3]:9000");
  EXPECT_EQ(NormalizePeerAddress("node2:99999").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ListenTarget("127.0.0.1", 7581), "127.0.0.1:7581");
  EXPECT_EQ(ListenTarget("::1", 7581), "[::1]:7581");
  EXPECT_EQ(HostOfAddress("node2:7581"), "node2");
  EXPECT_EQ(HostOfAddress("127.0.0.1:7600"), "127.0.0.1");
  EXPECT_EQ(HostOfAddress("[2001:db8::3]:9000"), "2001:db8::3");
  EXPECT_EQ(HostOfAddress("::1"), "::1");
  EXPECT_EQ(HostOfAddress("hostb"), "hostb");
}

TEST(PeerProtocolTest, LocalHelloListsActivePorts) {
  Inventory inv;
  DeviceInfo dev;
  dev.name = "mlx5_0";
  PortInfo up;
  up.port = 1;
  up.state = 4;
  up.active_mtu = 1024;
  up.transport = Transport::kRoceV2;
  PortInfo down = up;
  down.port = 2;
  down.state = 1;
  dev.ports = {up, down};
  inv.devices = {dev};
  PeerHello h = BuildLocalHello(inv, "0123456789abcdef0123456789abcdef", NodeName(""));
  EXPECT_EQ(h.protocol, LocalProtocolVersion());
  EXPECT_EQ(h.daemon_version, RDMAD_VERSION);
  EXPECT_EQ(h.host_name, LocalHostName());
  EXPECT_EQ(NodeName("node7"), "node7");
  EXPECT_EQ(h.transports, (std::vector<std::string>{"RoCE v2"}));
  ASSERT_EQ(h.ports.size(), 1u);
  EXPECT_EQ(h.ports[0], (PeerPort{"mlx5_0", 1, 1024, "RoCE v2"}));
  EXPECT_TRUE(ValidateHello(h, "self").ok());
}

TEST(PeerProtocolTest, InstanceIdsAreRandomHex) {
  std::string a = NewInstanceId();
  std::string b = NewInstanceId();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  PeerHello h = Valid();
  h.instance_id = a;
  EXPECT_TRUE(ValidateHello(h, "self").ok());
}

}  // namespace
}  // namespace rdmad
