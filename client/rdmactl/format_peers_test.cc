// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/format_peers.h"

#include "gtest/gtest.h"

namespace rdmactl {
namespace {

rdmad::PeerInfo Up() {
  rdmad::PeerInfo p;
  p.name = "node2";
  p.address = "10.0.0.2:7581";
  p.state = rdmad::PeerState::kUp;
  p.rtt_ms = 0.4321;
  p.remote_host = "node2";
  p.remote_version = "0.1.0";
  p.remote_protocol = "1.0";
  p.remote_transports = {"RoCE v2"};
  p.state_seconds = 125;
  p.origin = "configured";
  return p;
}

rdmad::PeerInfo Mismatch() {
  rdmad::PeerInfo p;
  p.name = "node3";
  p.address = "10.0.0.3:7581";
  p.state = rdmad::PeerState::kVersionMismatch;
  p.last_error = "peer node3 speaks rdmad protocol 2.0, this daemon 1.0";
  p.remote_host = "node3";
  p.remote_version = "2.0.0";
  p.remote_protocol = "2.0";
  p.state_seconds = 4;
  return p;
}

rdmad::PeerInfo CircuitOpen() {
  rdmad::PeerInfo p;
  p.name = "node4";
  p.address = "10.0.0.4:7581";
  p.state = rdmad::PeerState::kCircuitOpen;
  p.last_error = "Hello: Connection refused";
  p.state_seconds = 12;
  p.failures = 5;
  p.circuit_open_until_unix_ms = 1800000030000;  // 2027-01-15T08:00:30Z
  return p;
}

TEST(FormatPeersTest, Table) {
  rdmad::PeerInfo up = Up();
  up.channels = 3;
  rdmad::PeerInfo demand = Up();
  demand.name = "10.0.0.9:7581";
  demand.address = "10.0.0.9:7581";
  demand.configured = false;
  demand.origin = "on demand";
  demand.state = rdmad::PeerState::kDown;
  demand.rtt_ms = 0;
  demand.remote_host = "";
  demand.last_error = "Hello: Connection refused";
  demand.state_seconds = 90000;
  EXPECT_EQ(
      FormatPeers({up, Mismatch(), CircuitOpen(), demand}),
      "NAME                       ADDRESS        STATE                         RTT      CHANNELS  "
      "REMOTE                             SINCE   LAST ERROR\n"
      "node2                      10.0.0.2:7581  up                            0.43 ms  3         "
      "node2 (rdmad 0.1.0, protocol 1.0)  2m05s   -\n"
      "node3                      10.0.0.3:7581  version-mismatch              -        0         "
      "node3 (rdmad 2.0.0, protocol 2.0)  4s      "
      "peer node3 speaks rdmad protocol 2.0, this daemon 1.0\n"
      "node4                      10.0.0.4:7581  circuit-open until 08:00:30Z  -        0         "
      "-                                  12s     Hello: Connection refused\n"
      "10.0.0.9:7581 (on demand)  10.0.0.9:7581  down                          -        0         "
      "-                                  1d 01h  Hello: Connection refused\n");
  EXPECT_EQ(FormatPeers({}), "no peers; add [[peers]] to rdmad.toml\n");
}

TEST(FormatPeersTest, CircuitOpenStateSaysUntilWhen) {
  EXPECT_EQ(FormatPeerState(CircuitOpen()), "circuit-open until 08:00:30Z");
  rdmad::PeerInfo unknown_end = CircuitOpen();
  unknown_end.circuit_open_until_unix_ms = 0;
  EXPECT_EQ(FormatPeerState(unknown_end), "circuit-open");
  EXPECT_EQ(FormatPeerState(Up()), "up");
}

TEST(FormatPeersTest, JsonKeysAreTheMemberNames) {
  Json json = PeersJson({Up()});
  EXPECT_EQ(DumpJson(json, -1),
            "{\"peers\":[{\"name\":\"node2\",\"address\":\"10.0.0.2:7581\",\"state\":\"up\","
            "\"rtt_ms\":0.4321,\"last_error\":\"\",\"remote_host\":\"node2\","
            "\"remote_version\":\"0.1.0\",\"remote_protocol\":\"1.0\","
            "\"remote_transports\":[\"RoCE v2\"],\"configured\":true,\"origin\":\"configured\","
            "\"state_seconds\":125.0,"
            "\"channels\":0,\"circuit_open_until_unix_ms\":0,\"failures\":0,"
            "\"clock_offset_ms\":null}]}");
}

TEST(FormatPeersTest, JsonOfACircuitOpenPeer) {
  Json peer = PeersJson({CircuitOpen()})["peers"][0];
  EXPECT_EQ(peer["state"], "circuit-open");
  EXPECT_EQ(peer["circuit_open_until_unix_ms"], 1800000030000);
  EXPECT_EQ(peer["failures"], 5);
  EXPECT_EQ(peer["last_error"], "Hello: Connection refused");
}

TEST(FormatPeersTest, Ages) {
  EXPECT_EQ(FormatAge(0), "0s");
  EXPECT_EQ(FormatAge(59.9), "59s");
  EXPECT_EQ(FormatAge(187), "3m07s");
  EXPECT_EQ(FormatAge(7500), "2h05m");
  EXPECT_EQ(FormatAge(3 * 86400 + 4 * 3600), "3d 04h");
}

}  // namespace
}  // namespace rdmactl
