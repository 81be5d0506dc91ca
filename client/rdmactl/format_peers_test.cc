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

TEST(FormatPeersTest, Table) {
  rdmad::PeerInfo demand = Up();
  demand.name = "10.0.0.9:7581";
  demand.address = "10.0.0.9:7581";
  demand.configured = false;
  demand.state = rdmad::PeerState::kDown;
  demand.rtt_ms = 0;
  demand.remote_host = "";
  demand.last_error = "Hello: Connection refused";
  demand.state_seconds = 90000;
  EXPECT_EQ(
      FormatPeers({Up(), Mismatch(), demand}),
      "NAME                       ADDRESS        STATE             RTT      REMOTE"
      "                             SINCE   LAST ERROR\n"
      "node2                      10.0.0.2:7581  up                0.43 ms  node2 (rdmad 0.1.0, "
      "protocol 1.0)  2m05s   -\n"
      "node3                      10.0.0.3:7581  version-mismatch  -        node3 (rdmad 2.0.0, "
      "protocol 2.0)  4s      peer node3 speaks rdmad protocol 2.0, this daemon 1.0\n"
      "10.0.0.9:7581 (on demand)  10.0.0.9:7581  down              -        -"
      "                                  1d 01h  Hello: Connection refused\n");
  EXPECT_EQ(FormatPeers({}), "no peers; add [[peers]] to rdmad.toml\n");
}

TEST(FormatPeersTest, JsonKeysAreTheMemberNames) {
  Json json = PeersJson({Up()});
  EXPECT_EQ(DumpJson(json, -1),
            "{\"peers\":[{\"name\":\"node2\",\"address\":\"10.0.0.2:7581\",\"state\":\"up\","
            "\"rtt_ms\":0.4321,\"last_error\":\"\",\"remote_host\":\"node2\","
            "\"remote_version\":\"0.1.0\",\"remote_protocol\":\"1.0\","
            "\"remote_transports\":[\"RoCE v2\"],\"configured\":true,\"state_seconds\":125.0}]}");
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
